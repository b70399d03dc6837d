/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Least privilege. Loading and attaching the probes needs root (or CAP_BPF
 * and CAP_PERFMON, and more on older kernels); running them afterwards
 * needs almost nothing: the ring buffer is an mmap'ed region of a map fd
 * already open. After attaching, main keeps only what enrichment still
 * uses (docs/security.md), clears the bounding, inheritable and ambient
 * sets and sets no_new_privs, so an exec can never give anything back.
 *
 * Output paths are checked before they are opened: a file, or a directory
 * entry, that another user can replace or write is refused, because the
 * tool writes it as root.
 */
#ifndef LES_PRIVS_H
#define LES_PRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LES_CAP_BIT(cap) (1ULL << (cap))

/*
 * Probe whether an operation still works with the effective set lowered
 * (e.g. a BPF map lookup through an fd already open): 0 or a negative
 * errno.
 */
typedef int (*les_privs_probe_fn)(void *ctx);

struct les_privs_result {
	uint64_t kept;	   /* capabilities left in the permitted and effective sets */
	bool bpf_for_maps; /* CAP_BPF kept: this kernel checks it on map fds */
	int other_threads; /* threads of the process other than the caller */
};

/*
 * Keep only the capabilities in keep (a mask of LES_CAP_BIT) that the
 * process holds; if probe fails with EPERM once the effective set is
 * lowered, CAP_BPF is kept too (kernels before 6.5 check it on every bpf()
 * command). Sets PR_SET_NO_NEW_PRIVS. Capabilities are per thread: call
 * before any thread is started. 0, or a negative errno with a reason in err.
 */
int les_privs_drop(uint64_t keep, les_privs_probe_fn probe, void *probe_ctx,
		   struct les_privs_result *res, char *err, size_t errlen);

/* "cap_dac_read_search,cap_sys_ptrace" ("none" for 0) into buf. */
void les_privs_caps_names(uint64_t mask, char *buf, size_t len);

/* The effective capabilities of the calling thread, as a mask. */
uint64_t les_privs_effective(void);

/*
 * Refuse a file to read options from that others could write or replace:
 * its directory and, when it exists, the file (followed if a symlink)
 * under the rules of outfile.h. The output itself is checked as it is
 * opened (les_outfile_open). what names the option ("--config") in the
 * message. 0, or -EPERM (-errno when the directory cannot be examined)
 * with one line in err.
 */
int les_privs_check_path(const char *what, const char *path, char *err, size_t errlen);

#endif /* LES_PRIVS_H */
