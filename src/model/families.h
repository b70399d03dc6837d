/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The metric families' rules: which series kinds a record makes, which
 * set of families each belongs to and the label set it is keyed by. The
 * Prometheus endpoint keys its series by them; any output of metrics
 * (OTLP next) takes the same names and labels from here.
 */
#ifndef LES_FAMILIES_H
#define LES_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/event.h"

/* A rendered label set, at most (the NUL included). */
#define LES_LABELS_MAX 4096

enum les_series_kind {
	LES_SK_ACCESS = 0,  /* operations, bytes, errors by class */
	LES_SK_ACCESS_HIST, /* access duration histogram */
	LES_SK_RPC,	    /* rpc wait operations */
	LES_SK_RPC_HIST,    /* rpc wait duration histogram */
	LES_SK_RPC_EVENT,   /* rpc errors by event */
	LES_SK_INFLIGHT,    /* requests in flight now, by submitter */
	LES_SK_PTLRPC,	    /* PtlRPC requests started and completed, by submitter */
	LES_SK_REQ_HIST,    /* PtlRPC request duration histogram: send to reply */
	LES_SK_JOIN_HIST,   /* joined requests: a layer's duration histogram */
	LES_SK_MAX,
};

/*
 * Two sets of families. What lustre-ebpf-exporter measures (Lustre's
 * llite ops, ptlrpc_queue_wait, its four request events, PtlRPC requests)
 * keeps its names and labels, so its dashboards and an unfiltered sum()
 * over lustre_client_* keep their meaning. The rest (NFS and FUSE mounts,
 * Lustre's lock waits and evictions, whole PtlRPC requests with the
 * writeback no thread waits for) goes under our own names, with an fs_type
 * label: each nanosecond of waiting is in one set, never both.
 */
enum les_family_set {
	LES_FSET_EXPORTER = 0, /* lustre_client_* */
	LES_FSET_OURS,	       /* lustre_ebpf_stream_client_* */
	LES_FSET_MAX,
};

/* The set's family name prefix: "lustre_client_", "lustre_ebpf_stream_client_". */
const char *les_family_prefix(enum les_family_set fset);

/* Which set of families a record's series of this kind belongs to. */
enum les_family_set les_family_set_of(const struct les_event *ev, enum les_series_kind kind);

/* The labels a configuration adds. */
struct les_label_opts {
	bool uid;   /* uid and username */
	bool slurm; /* slurm_job_id on the exporter's families too (--slurm-jobid) */
};

/*
 * The label set of ev's series of kind, rendered (fs="...",mount="...")
 * into buf[LES_LABELS_MAX], its family set in *fset_out. Returns its
 * length; 0 when it does not fit.
 */
size_t les_labels_make(char *buf, const struct les_label_opts *opts, const struct les_event *ev,
		       enum les_series_kind kind, bool with_process, enum les_family_set *fset_out);

struct les_join_view; /* model/rpcjoin.h */

/*
 * The label set of a joined request's series of one layer (enum
 * les_join_layer): lustre_jobid, target, client_nid, layer; as
 * les_labels_make, 0 when it does not fit. Our family set: the exporter
 * has no such family.
 */
size_t les_join_labels_make(char *buf, const struct les_join_view *v, unsigned int layer);

/*
 * Escape a label value for the text format (\\, \", \n) and make it valid
 * UTF-8 (each bad byte becomes U+FFFD). Writes at most cap - 1 bytes and a
 * NUL, never cutting an escape or a character; returns the length.
 */
size_t les_label_escape(const char *s, char *out, size_t cap);

/*
 * The histogram buckets of every metrics output (the Prometheus families,
 * OTLP's explicit-bucket histograms): the bounds lustre-ebpf-exporter uses
 * since its commit e743798 ("compact latency histogram buckets"), in ns,
 * each an inclusive upper bound ("le"); +Inf after the last.
 */
#define LES_FAMILY_BUCKETS 12
extern const uint64_t les_family_bucket_ns[LES_FAMILY_BUCKETS];

/* The bucket of a duration: the first bound at or above it; LES_FAMILY_BUCKETS for +Inf. */
unsigned int les_family_bucket(uint64_t ns);

#endif /* LES_FAMILIES_H */
