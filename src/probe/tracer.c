// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Skeleton lifecycle, map programming, counters and sweeping. */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "util/clock.h"
#include "les_record.h" /* before the skeleton: its .rodata uses les_fn_desc */
#include "les.skel.h"
#include "les_maps.h"
#include "decode/filter.h"
#include "probe/fnprobes.h"
#include "probe/rpcprobes.h"
#include "probe/syscalls.h"
#include "probe/tracer.h"


static void read_fuse_inflight(int fd, struct les_kernel_stats *ks);
static void read_ptlrpc_inflight(int fd, struct les_kernel_stats *ks);
static void read_sunrpc_inflight(int fd, struct les_kernel_stats *ks);

/* What sizes a map of in-flight state: --inflight-max or --threads-max (les_tracer_config). */
enum plane_map_size { SIZE_INFLIGHT, SIZE_THREADS };

/*
 * The state each plane keeps in flight, one row per map: what sizes it,
 * how its sweep tells a stale entry (a timestamp and, for threads, whether
 * an op is in flight) and where it counts what went, and what it adds to
 * the requests in flight. Configure, read_stats and sweep read the rows; a
 * new map of a plane is a row here. In the order read_stats reads them.
 */
static const struct plane_map {
	const char *plane;
	const char *name; /* the map's name in the BPF object */
	enum plane_map_size size;
	size_t time_off; /* the u64 timestamp a sweep goes by */
	long live_off; /* the u32 that is not zero while an op is in flight; -1: none */
	bool threads; /* swept entries count as threads_swept, else stale_swept */
	void (*inflight)(int fd, struct les_kernel_stats *ks); /* NULL: adds none */
} plane_maps[] = {
	/* A thread that died mid-op. */
	{ "access", "thread_ops", SIZE_THREADS, offsetof(struct thread_ops, updated_ns),
	  offsetof(struct thread_ops, depth), true, NULL },
	/* RPC state whose free, stats or return was missed. */
	{ "rpc", "fuse_inflight", SIZE_INFLIGHT, offsetof(struct fuse_inflight, start_ns), -1,
	  false, read_fuse_inflight },
	{ "rpc", "ptlrpc_reqs", SIZE_INFLIGHT, offsetof(struct ptlrpc_req, created_ns), -1, false,
	  read_ptlrpc_inflight },
	{ "rpc", "ptlrpc_waits", SIZE_INFLIGHT, offsetof(struct ptlrpc_wait, start_ns), -1, false,
	  NULL },
	/* A server's request dropped before its handler ran (its deadline passed). */
	{ "rpc", "ptlrpc_srv", SIZE_INFLIGHT, offsetof(struct ptlrpc_srv, seen_ns), -1, false,
	  NULL },
	/* An LNet message whose finalize was missed. */
	{ "rpc", "lnet_msgs", SIZE_INFLIGHT, offsetof(struct lnet_msg_state, seen_ns), -1, false,
	  NULL },
	{ "rpc", "sunrpc_tasks", SIZE_INFLIGHT, offsetof(struct sunrpc_task, start_ns), -1, false,
	  read_sunrpc_inflight },
};

#define N_PLANE_MAPS (sizeof(plane_maps) / sizeof(plane_maps[0]))

static struct bpf_map *plane_map(const struct les_tracer *t, const struct plane_map *m)
{
	return bpf_object__find_map_by_name(t->skel->obj, m->name);
}

int les_tracer_open(struct les_tracer *t)
{
	memset(t, 0, sizeof(*t));
	t->skel = les_bpf__open();
	return t->skel ? 0 : -errno;
}

/* Describe each used slot to BPF and aim its fentry/fexit at the function. */
static int configure_fn(struct les_tracer *t, const struct les_fn_plan *fn, int verbose)
{
	struct bpf_program *prog;

	memset(&t->fn, 0, sizeof(t->fn));
	t->fn.verbose = verbose;
	t->fn.multi = fn->kprobe_multi;
	t->fn.multi_cast = fn->kprobe_multi_cast;
	memcpy(t->fn.covered, fn->covered, sizeof(t->fn.covered));
	for (size_t i = 0; i < fn->n; i++) {
		const struct les_fn_probe *pr = &fn->probe[i];

		if (pr->slot < 0)
			continue;
		t->skel->rodata->fn_desc[pr->slot] = pr->desc;
		t->fn.func[pr->slot] = pr->e->func;
		t->fn.addr[pr->slot] = (unsigned long)pr->addr;
		t->fn.method[pr->slot] = pr->method;
		t->fn.family[pr->slot] = pr->e->family;
		t->fn.op[pr->slot] = pr->e->op;
		if ((size_t)pr->slot + 1 > t->fn.n_slots)
			t->fn.n_slots = (size_t)pr->slot + 1;
	}
	bpf_object__for_each_program(prog, t->skel->obj)
	{
		enum les_attach_method method;
		bool multi;
		int slot, err;

		if (!bpf_program__autoload(prog) ||
		    !les_fn_prog_parse(bpf_program__name(prog), &slot, &method, &multi) ||
		    method != LES_ATTACH_FENTRY)
			continue;
		/* Module functions too: libbpf looks in each module's BTF. */
		err = bpf_program__set_attach_target(prog, 0, t->fn.func[slot]);
		if (err)
			return err;
	}
	return 0;
}

/* --op, --intent and --comm as constants of the BPF programs (src/decode/filter.h). */
static void les_filter_configure_bpf(const struct les_tracer_config *o, struct les_bpf *s)
{
	uint32_t ops = les_filter_access_ops(o->filter_ops, o->filter_intents);
	uint64_t fuse[2], comm[2];
	bool high;

	s->rodata->filter_access_ops = ops ? ops : ~0u;
	les_filter_fuse_opcodes(ops, fuse, &high);
	s->rodata->filter_fuse_opcodes[0] = fuse[0];
	s->rodata->filter_fuse_opcodes[1] = fuse[1];
	s->rodata->filter_fuse_high = high;
	if (o->filter_comm && les_filter_comm(o->filter_comm, comm) == 0) {
		s->rodata->filter_comm_on = true;
		s->rodata->filter_comm[0] = comm[0];
		s->rodata->filter_comm[1] = comm[1];
	}
}

/*
 * LES_FORCE_LOAD=prog,prog: load these programs whatever the plan says;
 * LES_FORCE_OFF=prog,prog: never load these. For tests: of the refusal
 * path (a program this kernel cannot take must be turned off with its
 * reason, and the rest must run), and of the fallbacks behind a probe.
 */
static bool env_lists(const char *var, const char *prog)
{
	const char *list = getenv(var), *p;
	size_t len = strlen(prog);

	for (p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strncmp(p, prog, len) == 0 && (p[len] == ',' || p[len] == 0))
			return true;
	}
	return false;
}

/*
 * The view (mount namespace and root) in which the observed mount points
 * are the paths BPF matches: that of the process whose mountinfo was read
 * (/proc/PID/mountinfo, as a DaemonSet reads the host's), else the tool's.
 * An absolute path from another view is left to the syscall's exit.
 */
static void configure_view(struct les_bpf *s, const char *mountinfo_path)
{
	char ns[PATH_MAX], root[PATH_MAX], proc[32] = "self";
	struct stat st;

	if (mountinfo_path && sscanf(mountinfo_path, "/proc/%31[0-9a-z]/mountinfo", proc) != 1)
		snprintf(proc, sizeof(proc), "self");
	snprintf(ns, sizeof(ns), "/proc/%s/ns/mnt", proc);
	snprintf(root, sizeof(root), "/proc/%s/root", proc);
	if (stat(ns, &st) == 0)
		s->rodata->self_mntns_ino = (__u32)st.st_ino;
	if (stat(root, &st) == 0) {
		s->rodata->self_root_dev = les_kdev_from_user(st.st_dev);
		s->rodata->self_root_ino = st.st_ino;
	}
}

/* The byte offset of member name in struct type t of btf, or -1. */
static long btf_member_offset(const struct btf *btf, const struct btf_type *t, const char *name)
{
	const struct btf_member *m = btf_members(t);

	for (unsigned int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && strcmp(n, name) == 0)
			return (long)(btf_member_bit_offset(t, i) / 8);
	}
	return -1;
}

/*
 * Where struct ll_inode_info keeps the VFS inode and lli_fid, for the FID
 * of Lustre access records: read here from the lustre module's BTF (a
 * file, no privilege needed), not by a CO-RE relocation in BPF. libbpf
 * 1.1 needs CAP_SYS_ADMIN to search module BTF, which the service's
 * capability set does not have, and a relocation it cannot search fails
 * the whole load. No module, no BTF or no such members: FIDs stay null.
 */
static void configure_lustre_fid(struct les_bpf *s)
{
	struct btf *vmlinux = btf__load_vmlinux_btf(), *mod = NULL;
	const struct btf_type *t;
	long vfs = -1, fid = -1;
	__s32 id;

	if (vmlinux)
		mod = btf__load_module_btf("lustre", vmlinux);
	id = mod ? btf__find_by_name_kind(mod, "ll_inode_info", BTF_KIND_STRUCT) : -1;
	t = id > 0 ? btf__type_by_id(mod, (__u32)id) : NULL;
	if (t) {
		vfs = btf_member_offset(mod, t, "lli_vfs_inode");
		fid = btf_member_offset(mod, t, "lli_fid");
	}
	if (vfs > 0 && fid >= 0) {
		s->rodata->lustre_lli_vfs_inode_off = (__u32)vfs;
		s->rodata->lustre_lli_fid_off = (__u32)fid;
	}
	btf__free(mod);
	btf__free(vmlinux);
}

int les_tracer_configure(struct les_tracer *t, const struct les_tracer_config *o,
			 const struct les_probe_plan *plan)
{
	struct les_bpf *s = t->skel;
	struct bpf_program *prog;
	int err;

	t->cfg = o;
	t->plan = plan;
	s->rodata->wakeup_bytes = o->wakeup_bytes;
	s->rodata->min_latency_ns = o->min_latency_ns;
	s->rodata->filter_uid = o->filter_uid;
	s->rodata->filter_pid = o->filter_pid;
	s->rodata->self_tgid = (__u32)getpid();
	les_filter_configure_bpf(o, s);
	s->rodata->want_file_id = o->file_id;
	if (o->file_id)
		configure_lustre_fid(s);
	configure_view(s, o->mountinfo_path);
	/* bench/run measures the exit resolution against deciding at entry only. */
	s->rodata->path_exit_resolve = !getenv("LES_PATH_ENTRY_ONLY");
	s->rodata->ptlrpc_reqmsg_off = plan->rpc.reqmsg_off;
	s->rodata->ptlrpc_brw_probed =
		les_rpc_plan_method(&plan->rpc, "ptlrpc_lprocfs_brw") != LES_ATTACH_NONE;
	s->rodata->ptlrpc_sends_probed =
		les_rpc_plan_method(&plan->rpc, "ptl_send_rpc") != LES_ATTACH_NONE;
	s->rodata->srv_bulk_planned =
		les_rpc_plan_method(&plan->rpc, "target_bulk_io") != LES_ATTACH_NONE;
	s->rodata->srv_io_planned =
		les_rpc_plan_method(&plan->rpc, "osd_fini_iobuf") != LES_ATTACH_NONE;
	s->rodata->lnet_link_requests =
		les_rpc_plan_method(&plan->rpc, "lnet_msg_commit") != LES_ATTACH_NONE &&
		les_rpc_plan_method(&plan->rpc, "ksocknal_send") != LES_ATTACH_NONE;

	err = bpf_map__set_max_entries(s->maps.events, (__u32)o->ringbuf_bytes);
	for (size_t i = 0; !err && i < N_PLANE_MAPS; i++) {
		struct bpf_map *map = plane_map(t, &plane_maps[i]);

		err = !map ? -ENOENT
			   : bpf_map__set_max_entries(map, plane_maps[i].size == SIZE_THREADS
								   ? o->threads_max
								   : o->inflight_max);
	}
	if (err)
		return err;

	bpf_object__for_each_program(prog, s->obj)
	{
		bool want = les_probe_plan_wants(plan, bpf_program__name(prog),
						 bpf_program__section_name(prog));

		want = want || env_lists("LES_FORCE_LOAD", bpf_program__name(prog));
		want = want && !env_lists("LES_FORCE_OFF", bpf_program__name(prog));
		err = bpf_program__set_autoload(prog, want);
		if (err)
			return err;
	}
	les_probe_plan_warn(plan, stderr, o->verbose);
	return configure_fn(t, &plan->fn, o->verbose);
}

static int put_mount_path(int fd, __u32 slot, const struct les_observed_mount *m)
{
	struct les_mount_path mp;
	size_t len = m->mount_point ? strlen(m->mount_point) : 0;

	memset(&mp, 0, sizeof(mp));
	/* Longer mount points are matched through fds and the cwd only. */
	if (len < sizeof(mp.path)) {
		mp.len = (__u32)len;
		mp.dev = m->dev;
		if (len) /* an unused slot has no mount point: memcpy from NULL is undefined */
			memcpy(mp.path, m->mount_point, len);
	}
	return bpf_map_update_elem(fd, &slot, &mp, BPF_ANY) ? -errno : 0;
}

/*
 * The syscall access plane's descriptors, by syscall number. Syscalls of
 * the ops in skip_ops (1 << op) are not traced: function probes report
 * those ops on every observed mount.
 */
static int put_syscalls(struct les_tracer *t, unsigned int skip_ops)
{
	int fd = bpf_map__fd(t->skel->maps.syscalls);
	const struct les_syscall_entry *tab;
	size_t n;

	tab = les_syscall_table(&n);
	for (size_t i = 0; i < n; i++) {
		struct les_syscall_desc desc = tab[i].desc;
		unsigned int ops = 1u << desc.op;
		__u32 key = (__u32)tab[i].nr;

		if (tab[i].nr < 0 || tab[i].nr >= LES_SYS_MAX)
			continue;
		if (desc.rmdir_flag)
			ops |= 1u << LES_OP_RMDIR;
		if ((skip_ops & ops) == ops)
			desc.target = LES_SYS_NONE;
		if (bpf_map_update_elem(fd, &key, &desc, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The ops function probes report on the observed mount of dev. */
static __u32 fn_ops_of(const struct les_tracer *t, __u32 dev)
{
	for (size_t i = 0; i < t->fn.n_mounts; i++)
		if (t->fn.mount_dev[i] == dev)
			return t->fn.covered[t->fn.mount_family[i]];
	return 0;
}

/*
 * Tell the syscall fallback what the function probes report: per observed
 * mount in its value in map observed (for a per-mount skip in BPF), and
 * the ops every observed mount has covered left out of the syscall table
 * altogether.
 */
static int put_fn_coverage(struct les_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.observed);
	unsigned int everywhere = t->fn.n_mounts ? ~0u : 0;
	struct les_observed_val val;
	__u32 key, next;

	for (size_t i = 0; i < t->fn.n_mounts; i++)
		everywhere &= t->fn.covered[t->fn.mount_family[i]];
	for (int more = !bpf_map_get_next_key(fd, NULL, &next); more;) {
		key = next;
		more = !bpf_map_get_next_key(fd, &key, &next);
		__u32 ops = fn_ops_of(t, key);

		if (bpf_map_lookup_elem(fd, &key, &val))
			continue; /* taken out meanwhile */
		if (val.fn_ops == ops)
			continue;
		val.fn_ops = ops;
		if (bpf_map_update_elem(fd, &key, &val, BPF_EXIST) && errno != ENOENT)
			return -errno;
	}
	return put_syscalls(t, everywhere);
}

/*
 * The program libbpf last complained about while loading, and why: libbpf
 * names it in every warning ("prog 'NAME': ..."), the verifier's log
 * included. Its print callback has no context argument, hence file scope;
 * only les_tracer_load sets it, on the main thread.
 */
static struct load_capture {
	libbpf_print_fn_t prev;
	char prog[LES_PROG_NAME_LEN];
	char reason[LES_REFUSAL_REASON];
} capture;

static bool log_noise(const char *line, size_t len)
{
	static const char *const noise[] = {"processed ", "verification time", "stack depth",
					    "-- END PROG LOAD LOG --"};

	if (!len)
		return true;
	for (size_t i = 0; i < sizeof(noise) / sizeof(noise[0]); i++)
		if (strncmp(line, noise[i], strlen(noise[i])) == 0)
			return true;
	return false;
}

/* The verifier's verdict: the last line of its log that is not a summary. */
static void capture_verifier_line(const char *log)
{
	const char *best = NULL, *line = log;
	size_t best_len = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (!log_noise(line, len)) {
			best = line;
			best_len = len;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (best)
		snprintf(capture.reason, sizeof(capture.reason), "verifier: %.*s", (int)best_len,
			 best);
}

static void capture_message(const char *msg)
{
	const char *name = msg + strlen("prog '"), *end = strchr(name, '\'');
	const char *log = strstr(msg, "-- BEGIN PROG LOAD LOG --\n");
	size_t len = end ? (size_t)(end - name) : 0;

	if (!len || len >= sizeof(capture.prog))
		return;
	if (strncmp(capture.prog, name, len) != 0 || capture.prog[len]) {
		memcpy(capture.prog, name, len);
		capture.prog[len] = 0;
		capture.reason[0] = 0;
	}
	if (log) {
		capture_verifier_line(log + strlen("-- BEGIN PROG LOAD LOG --\n"));
	} else if (!capture.reason[0] && end[1] == ':') {
		snprintf(capture.reason, sizeof(capture.reason), "%s", end + 3);
		capture.reason[strcspn(capture.reason, "\n")] = 0;
	}
}

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	va_list copy;
	char *msg = NULL;

	va_copy(copy, args);
	if (level == LIBBPF_WARN && vasprintf(&msg, fmt, copy) >= 0) {
		const char *text = msg;

		if (strncmp(text, "libbpf: ", strlen("libbpf: ")) == 0)
			text += strlen("libbpf: ");
		if (strncmp(text, "prog '", strlen("prog '")) == 0)
			capture_message(text);
	}
	va_end(copy);
	free(msg);
	return capture.prev ? capture.prev(level, fmt, args) : 0;
}

static bool refused_already(const struct les_tracer *t, const char *prog)
{
	for (size_t i = 0; i < t->refused.n; i++)
		if (strcmp(t->refused.r[i].prog, prog) == 0)
			return true;
	return false;
}

/*
 * A fentry/fexit program's kprobe twin, from its row of the RPC plane's
 * table (les_rpc_kprobe_twin), or NULL. Function-probe slots have none
 * here: a refused slot leaves its op to the syscall fallback.
 */
static struct bpf_program *kprobe_twin(struct les_bpf *s, const char *prog)
{
	const char *twin = les_rpc_kprobe_twin(prog);

	return twin ? bpf_object__find_program_by_name(s->obj, twin) : NULL;
}

/* Turn the refused programs off in a freshly configured object. */
static int apply_refusals(struct les_tracer *t)
{
	for (size_t i = 0; i < t->refused.n; i++) {
		struct bpf_program *prog =
			bpf_object__find_program_by_name(t->skel->obj, t->refused.r[i].prog);
		struct bpf_program *twin = kprobe_twin(t->skel, t->refused.r[i].prog);
		int err;

		if (!prog)
			continue;
		err = bpf_program__set_autoload(prog, false);
		if (!err && twin && t->plan->fn.kprobe_ok &&
		    !refused_already(t, bpf_program__name(twin)))
			err = bpf_program__set_autoload(twin, true);
		if (err)
			return err;
	}
	return 0;
}

/* Open and configure again, without what was refused: libbpf loads an object once. */
static int reopen(struct les_tracer *t)
{
	const struct les_tracer_config *o = t->cfg;
	const struct les_probe_plan *plan = t->plan;
	int err;

	les_bpf__destroy(t->skel);
	t->skel = les_bpf__open();
	if (!t->skel)
		return -errno;
	err = les_tracer_configure(t, o, plan);
	return err ?: apply_refusals(t);
}

/* Keep the program capture names as refused; false if it cannot be. */
static bool refuse_captured(struct les_tracer *t, int err)
{
	struct bpf_program *prog =
		capture.prog[0] ? bpf_object__find_program_by_name(t->skel->obj, capture.prog)
				: NULL;
	struct les_refusal *r;

	if (!prog || !bpf_program__autoload(prog) || refused_already(t, capture.prog) ||
	    t->refused.n >= LES_MAX_REFUSED)
		return false;
	r = &t->refused.r[t->refused.n++];
	snprintf(r->prog, sizeof(r->prog), "%s", capture.prog);
	if (capture.reason[0])
		snprintf(r->reason, sizeof(r->reason), "%s", capture.reason);
	else
		snprintf(r->reason, sizeof(r->reason), "load failed: %s", strerror(-err));
	fprintf(stderr,
		"lustre-ebpf-stream: warning: %s refused by this kernel, running without it: %s\n",
		r->prog, r->reason);
	return true;
}

int les_tracer_load(struct les_tracer *t)
{
	int err;

	for (;;) {
		memset(&capture, 0, sizeof(capture));
		capture.prev = libbpf_set_print(capture_print);
		err = les_bpf__load(t->skel);
		libbpf_set_print(capture.prev);
		if (!err || !refuse_captured(t, err))
			break;
		err = reopen(t);
		if (err)
			break;
	}
	t->cfg = NULL;
	t->plan = NULL;
	return err ?: put_syscalls(t, 0);
}

/*
 * RPCs whose mount BPF cannot tell (no access op in flight on the
 * submitter) are kept only while a mount of their filesystem is observed.
 */
static void put_rpc_unattributed(struct les_tracer *t)
{
	bool lustre = false, nfs = false;

	for (size_t i = 0; i < t->fn.n_mounts; i++) {
		lustre |= t->fn.mount_family[i] == LES_FS_LUSTRE;
		nfs |= t->fn.mount_family[i] == LES_FS_NFS;
	}
	t->skel->bss->rpc_unattributed[LES_PROTO_PTLRPC] = lustre;
	t->skel->bss->rpc_unattributed[LES_PROTO_LDLM] = lustre;
	t->skel->bss->rpc_unattributed[LES_PROTO_SUNRPC] = nfs;
}

int les_tracer_set_mounts(struct les_tracer *t, const struct les_observed *obs)
{
	int observed_fd = bpf_map__fd(t->skel->maps.observed);
	int paths_fd = bpf_map__fd(t->skel->maps.mount_paths);
	const struct les_observed_mount empty = {0};
	__u32 key, next;
	int err;

	/*
	 * The new mounts first, then the old ones out: the probes run all
	 * along, and a mount kept must never be missing from the map, even
	 * for a moment (clearing first lost the ops of every observed mount
	 * made while another mount came or went: the soak test,
	 * test/soak/README.md). Each path slot carries its own dev.
	 */
	for (__u32 slot = 0; slot < obs->n && slot < LES_MAX_MOUNTS; slot++) {
		/* A mount kept keeps its coverage until put_fn_coverage says. */
		struct les_observed_val val = {.fn_ops = fn_ops_of(t, obs->m[slot].dev)};

		key = obs->m[slot].dev;
		if (bpf_map_update_elem(observed_fd, &key, &val, BPF_ANY))
			return -errno;
	}
	for (__u32 slot = 0; slot < LES_MAX_MOUNTS; slot++) {
		err = put_mount_path(paths_fd, slot, slot < obs->n ? &obs->m[slot] : &empty);
		if (err)
			return err;
	}
	/* The next key is taken before a key is deleted, so the walk goes on. */
	for (int more = !bpf_map_get_next_key(observed_fd, NULL, &next); more;) {
		key = next;
		more = !bpf_map_get_next_key(observed_fd, &key, &next);
		if (!les_observed_find(obs, key))
			bpf_map_delete_elem(observed_fd, &key);
	}
	t->fn.n_mounts = obs->n < LES_MAX_MOUNTS ? obs->n : LES_MAX_MOUNTS;
	for (size_t i = 0; i < t->fn.n_mounts; i++) {
		t->fn.mount_dev[i] = obs->m[i].dev;
		t->fn.mount_family[i] = obs->m[i].family;
	}
	put_rpc_unattributed(t);
	return put_fn_coverage(t);
}

static int keep_link(struct les_tracer *t, struct bpf_link *link)
{
	if (t->n_links >= LES_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	t->links[t->n_links++] = link;
	return 0;
}

static struct bpf_program *fn_prog(struct les_tracer *t, const char *kind, int slot)
{
	char name[32];

	snprintf(name, sizeof(name), "fn_%s_%d", kind, slot);
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/* A function no longer probed: the syscall fallback must report its op again. */
static void fn_lost(struct les_tracer *t, int slot, const char *why, int verbose)
{
	t->fn.covered[t->fn.family[slot]] &= ~(1u << t->fn.op[slot]);
	t->fn.method[slot] = LES_ATTACH_NONE;
	if (verbose)
		fprintf(stderr, "lustre-ebpf-stream: warning: %s not attached: %s\n",
			t->fn.func[slot], why);
}

/*
 * A return probe with room for many blocked callers (kretprobe.h), else
 * libbpf's own, with the perf PMU's few instances.
 */
static struct bpf_link *attach_kretprobe(struct les_tracer *t, struct bpf_program *prog,
					 const char *func)
{
	struct bpf_link *link = les_kretprobe_attach(&t->kretprobes, prog, func);

	if (link)
		return link;
	if (t->fn.verbose)
		fprintf(stderr,
			"lustre-ebpf-stream: warning: %s: no tracefs kretprobe (%s): %d return "
			"instances at most\n",
			func, strerror(errno),
			libbpf_num_possible_cpus() * 2 > 10 ? libbpf_num_possible_cpus() * 2 : 10);
	return bpf_program__attach_kprobe(prog, true, func);
}


/*
 * Keep an exit link and its entry link, exit first; an entry that did not
 * attach (NULL, errno set) takes its exit down with it.
 */
static int keep_pair(struct les_tracer *t, struct bpf_link *exit_link, struct bpf_link *entry_link)
{
	int err;

	if (!entry_link) {
		err = -errno;
		bpf_link__destroy(exit_link);
		return err;
	}
	err = keep_link(t, exit_link);
	return err ?: keep_link(t, entry_link);
}

/* The fentry/fexit or kprobe/kretprobe pair of one slot; exit first. */
static int attach_fn_slot(struct les_tracer *t, int slot)
{
	bool kprobe = t->fn.method[slot] == LES_ATTACH_KPROBE;
	struct bpf_program *entry = fn_prog(t, kprobe ? "kprobe" : "fentry", slot);
	struct bpf_program *exit = fn_prog(t, kprobe ? "kretprobe" : "fexit", slot);
	struct bpf_link *exit_link, *entry_link;

	if (!entry || !exit)
		return -ENOENT;
	if (!bpf_program__autoload(entry) || !bpf_program__autoload(exit))
		return -ENOEXEC; /* refused at load: see programs_refused */
	exit_link =
		kprobe ? attach_kretprobe(t, exit, t->fn.func[slot]) : bpf_program__attach(exit);
	if (!exit_link)
		return -errno;
	entry_link = kprobe ? bpf_program__attach_kprobe(entry, false, t->fn.func[slot])
			    : bpf_program__attach(entry);
	return keep_pair(t, exit_link, entry_link);
}

/* All kprobe slots through one kprobe_multi link each way, the slot as cookie. */
static int attach_fn_multi(struct les_tracer *t)
{
	LIBBPF_OPTS(bpf_kprobe_multi_opts, opts);
	unsigned long addrs[LES_FN_SLOTS];
	__u64 cookies[LES_FN_SLOTS];
	struct bpf_link *exit_link, *entry_link;
	size_t n = 0;

	for (size_t slot = 0; slot < t->fn.n_slots; slot++) {
		if (t->fn.method[slot] != LES_ATTACH_KPROBE)
			continue;
		addrs[n] = t->fn.addr[slot];
		cookies[n++] = slot;
	}
	if (!n)
		return 0;
	opts.addrs = addrs;
	opts.cookies = cookies;
	opts.cnt = n;
	opts.retprobe = true;
	exit_link = bpf_program__attach_kprobe_multi_opts(t->skel->progs.fn_kretprobe_multi, NULL,
							  &opts);
	if (!exit_link)
		return -errno;
	opts.retprobe = false;
	entry_link = bpf_program__attach_kprobe_multi_opts(
		t->fn.multi_cast ? t->skel->progs.fn_kprobe_multi_cast : t->skel->progs.fn_kprobe_multi,
		NULL, &opts);
	return keep_pair(t, exit_link, entry_link);
}

static uint64_t elapsed_us(uint64_t since_ns)
{
	return (les_mono_ns() - since_ns) / 1000;
}

static int attach_fn(struct les_tracer *t, int verbose)
{
	size_t n_fentry = 0, n_kprobe = 0;
	uint64_t start = les_mono_ns();
	int err;

	for (size_t slot = 0; slot < t->fn.n_slots; slot++) {
		enum les_attach_method m = t->fn.method[slot];

		if (m == LES_ATTACH_NONE || (m == LES_ATTACH_KPROBE && t->fn.multi))
			continue;
		err = attach_fn_slot(t, (int)slot);
		if (err == -E2BIG)
			return err;
		if (err)
			fn_lost(t, (int)slot, strerror(-err), verbose);
		else if (m == LES_ATTACH_FENTRY)
			n_fentry++;
		else
			n_kprobe++;
	}
	if (t->fn.multi) {
		err = attach_fn_multi(t);
		if (err == -E2BIG)
			return err;
		for (size_t slot = 0; slot < t->fn.n_slots; slot++) {
			if (t->fn.method[slot] != LES_ATTACH_KPROBE)
				continue;
			if (err)
				fn_lost(t, (int)slot, strerror(-err), verbose);
			else
				n_kprobe++;
		}
	}
	if (verbose && (n_fentry || n_kprobe))
		fprintf(stderr,
			"lustre-ebpf-stream: function probes: %zu by fentry, %zu by kprobe%s, "
			"attached in %llu ms\n",
			n_fentry, n_kprobe, t->fn.multi ? " (kprobe_multi)" : "",
			(unsigned long long)elapsed_us(start) / 1000);
	/* Ops whose functions did not attach go back to the syscall fallback. */
	return put_fn_coverage(t);
}

/*
 * The tracepoint of one syscall of the table, in event (sys_enter_NAME or
 * sys_exit_NAME), or false where this kernel has none (one the
 * architecture lacks). A few keep the name of the syscall they replaced in
 * the kernel's definition: fstat, stat and lstat are newfstat, newstat and
 * newlstat there (x86_64; arm64's fstat).
 */
static bool syscall_event(const char *root, const char *dir, const char *name, char *event,
			  size_t len)
{
	static const char *const prefixes[] = { "", "new" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		snprintf(event, len, "sys_%s_%s%s", dir, prefixes[i], name);
		snprintf(path, sizeof(path), "%s/events/syscalls/%s", root, event);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/*
 * A per-syscall tracepoint program, once for each syscall of the table
 * (syscalls:sys_exit_NAME or sys_enter_NAME). A syscall this kernel has
 * no tracepoint for is skipped; one that is there and does not attach
 * fails the start, as its entry would otherwise leave its op unreported.
 */
static int attach_per_syscall(struct les_tracer *t, struct bpf_program *prog, int which,
			      int verbose)
{
	const char *dir = which == 1 ? "exit" : "enter";
	const char *root = les_tracefs_root();
	const struct les_syscall_entry *tab;
	char event[64];
	size_t n, skipped = 0;
	int err;

	if (!root)
		return -ENOENT;
	tab = les_syscall_table(&n);
	for (size_t i = 0; i < n; i++) {
		struct bpf_link *link;

		if (!syscall_event(root, dir, tab[i].name, event, sizeof(event))) {
			skipped++;
			continue;
		}
		link = bpf_program__attach_tracepoint(prog, "syscalls", event);
		if (!link) {
			err = -errno;
			fprintf(stderr, "lustre-ebpf-stream: syscalls:%s not attached: %s\n", event,
				strerror(-err));
			return err;
		}
		err = keep_link(t, link);
		if (err)
			return err;
	}
	if (verbose > 1 && skipped)
		fprintf(stderr, "lustre-ebpf-stream: %zu syscalls have no %s tracepoint here\n",
			skipped, dir);
	return 0;
}

int les_tracer_attach(struct les_tracer *t, int verbose)
{
	int reaped = les_kretprobes_reap(les_tracefs_root());
	struct bpf_program *prog;
	int err;

	if (reaped)
		fprintf(stderr,
			"lustre-ebpf-stream: removed %d return probe(s) a killed run left in "
			"tracefs\n",
			reaped);

	bpf_object__for_each_program(prog, t->skel->obj)
	{
		enum les_attach_method method;
		struct bpf_link *link;
		const char *section;
		bool multi;
		int slot;

		if (!bpf_program__autoload(prog))
			continue;
		/* Function probes attach in pairs, below. */
		if (les_fn_prog_parse(bpf_program__name(prog), &slot, &method, &multi))
			continue;
		if (les_syscall_prog(bpf_program__name(prog))) {
			err = attach_per_syscall(t, prog, les_syscall_prog(bpf_program__name(prog)),
						 verbose);
			if (err)
				return err;
			continue;
		}
		section = bpf_program__section_name(prog);
		if (strncmp(section, "kretprobe/", strlen("kretprobe/")) == 0)
			link = attach_kretprobe(t, prog, section + strlen("kretprobe/"));
		else
			link = bpf_program__attach(prog);
		if (!link) {
			/* An optional probe missing degrades, it does not fail the start. */
			t->n_attach_failed++;
			if (verbose)
				fprintf(stderr,
					"lustre-ebpf-stream: warning: %s not attached: %s\n",
					bpf_program__name(prog), strerror(errno));
			continue;
		}
		err = keep_link(t, link);
		if (err)
			return err;
		if (les_rpc_prog_is_server(bpf_program__name(prog)))
			t->n_server_links++;
	}
	err = attach_fn(t, verbose);
	if (err)
		return err;
	return t->n_links ? 0 : -ENOENT;
}

int les_tracer_ring(struct les_tracer *t, int (*fn)(void *, void *, size_t), void *ctx)
{
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), fn, ctx, NULL);
	return t->rb ? 0 : -errno;
}

int les_tracer_poll(struct les_tracer *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	if (n < 0)
		return n;
	/*
	 * Producers submit without waking us below the wakeup threshold, so
	 * an expired timeout still finds records waiting.
	 */
	return ring_buffer__consume(t->rb);
}

/* One more request of proto in flight on dev, submitted by task. */
static void inflight_add(struct les_kernel_stats *ks, enum les_rpc_proto proto, __u32 dev,
			 const struct les_task *task, bool async)
{
	size_t i;

	ks->inflight_by_proto[proto]++;
	if (ks->n_tasks < LES_INFLIGHT_TASKS) {
		struct les_inflight_task *it = &ks->tasks[ks->n_tasks++];

		it->dev = dev;
		it->proto = (uint16_t)proto;
		it->async = async;
		it->task = *task;
	} else {
		ks->n_tasks_over++;
	}
	for (i = 0; i < ks->n_inflight; i++) {
		if (ks->inflight[i].proto == proto && ks->inflight[i].dev == dev) {
			ks->inflight[i].requests++;
			return;
		}
	}
	if (i == LES_INFLIGHT_GROUPS)
		return; /* counted in by_proto, not by mount */
	ks->inflight[i].proto = proto;
	ks->inflight[i].dev = dev;
	ks->inflight[i].requests = 1;
	ks->n_inflight++;
}

/* FUSE requests between send and end. */
static void read_fuse_inflight(int fd, struct les_kernel_stats *ks)
{
	struct fuse_inflight_key key, next;
	struct fuse_inflight req;
	__u64 n = 0;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &req))
			continue; /* ended meanwhile */
		inflight_add(ks, LES_PROTO_FUSE, key.dev, &req.task, req.flags & LES_RPC_F_ASYNC);
		n++;
	}
	ks->inflight_fuse = n;
}

/*
 * PtlRPC requests between their first send and their free, sunrpc tasks
 * between begin and end: what the maps hold, so the count can never go
 * negative, and a request whose end was missed leaves with the sweep.
 */
static void read_ptlrpc_inflight(int fd, struct les_kernel_stats *ks)
{
	struct ptlrpc_req req;
	__u64 key, next;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &req) == 0 && req.sent_ns && !req.replied_ns)
			inflight_add(ks, LES_PROTO_PTLRPC, req.dev, &req.task,
				     req.flags & LES_RPC_F_ASYNC);
	}
}

static void read_sunrpc_inflight(int fd, struct les_kernel_stats *ks)
{
	struct sunrpc_task task;
	__u64 key, next;

	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, &next) == 0; prev = &key) {
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &task) == 0 && task.inflight)
			inflight_add(ks, LES_PROTO_SUNRPC, task.dev, &task.task, false);
	}
}

void les_tracer_read_stats(struct les_tracer *t, struct les_kernel_stats *ks)
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(t->skel->maps.counters);
	__u64 *percpu;

	memset(ks, 0, sizeof(*ks));
	percpu = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*percpu)) : NULL;
	for (__u32 slot = 0; percpu && slot < LES_CNT_SLOTS; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, percpu))
			continue;
		for (int cpu = 0; cpu < ncpu; cpu++)
			ks->counters[slot] += percpu[cpu];
	}
	free(percpu);
	for (size_t i = 0; i < N_PLANE_MAPS; i++) {
		struct bpf_map *map = plane_maps[i].inflight ? plane_map(t, &plane_maps[i]) : NULL;

		if (map)
			plane_maps[i].inflight(bpf_map__fd(map), ks);
	}
	ks->refused = &t->refused;
	ks->kretprobe_missed =
		t->kretprobes.n ? les_kretprobes_missed(&t->kretprobes) : t->kretprobe_missed;
	ks->stale_swept = t->stale_swept;
	ks->threads_swept = t->threads_swept;
}

#define SWEEP_KEY_MAX	16
#define SWEEP_VALUE_MAX 512
#define SWEEP_BATCH	256

/*
 * Delete the entries of map whose u64 timestamp at time_off is before
 * cutoff and, when live_off >= 0, whose u32 at live_off is not zero (a
 * thread idle between ops is not stale). Deleted after the walk: deleting
 * during it restarts the iteration. Returns how many went.
 */
static uint64_t sweep_map(struct bpf_map *map, size_t time_off, long live_off, uint64_t cutoff)
{
	unsigned char key[SWEEP_KEY_MAX], next[SWEEP_KEY_MAX], val[SWEEP_VALUE_MAX];
	unsigned char stale[SWEEP_BATCH][SWEEP_KEY_MAX];
	size_t ksize = bpf_map__key_size(map), n_stale = 0;
	int fd = bpf_map__fd(map);
	uint64_t swept = 0, when;
	uint32_t live;

	if (ksize > SWEEP_KEY_MAX || bpf_map__value_size(map) > SWEEP_VALUE_MAX)
		return 0;
	for (void *prev = NULL; bpf_map_get_next_key(fd, prev, next) == 0; prev = key) {
		memcpy(key, next, ksize);
		if (bpf_map_lookup_elem(fd, key, val) != 0)
			continue;
		memcpy(&when, val + time_off, sizeof(when));
		if (live_off >= 0)
			memcpy(&live, val + live_off, sizeof(live));
		if (when < cutoff && (live_off < 0 || live) && n_stale < SWEEP_BATCH)
			memcpy(stale[n_stale++], key, ksize);
	}
	for (size_t i = 0; i < n_stale; i++)
		if (bpf_map_delete_elem(fd, stale[i]) == 0)
			swept++;
	return swept;
}

void les_tracer_sweep(struct les_tracer *t, uint64_t max_age_ns)
{
	uint64_t now = les_mono_ns();
	uint64_t cutoff = now > max_age_ns ? now - max_age_ns : 0;

	for (size_t i = 0; i < N_PLANE_MAPS; i++) {
		const struct plane_map *m = &plane_maps[i];
		struct bpf_map *map = plane_map(t, m);
		uint64_t swept = map ? sweep_map(map, m->time_off, m->live_off, cutoff) : 0;

		if (m->threads)
			t->threads_swept += swept;
		else
			t->stale_swept += swept;
	}
}

#define DETACH_THREADS 16

struct detach_share {
	struct bpf_link **links;
	size_t n;
};

static void *detach_worker(void *arg)
{
	struct detach_share *share = arg;

	for (size_t i = 0; i < share->n; i++)
		bpf_link__destroy(share->links[i]);
	return NULL;
}

/*
 * Detaching waits in the kernel: a perf-event kprobe for an RCU grace
 * period, an fentry trampoline for its update (~75 ms each measured under
 * qemu). The waits of different links overlap when the links are released
 * from several threads; one thread per share of links does it.
 */
static void destroy_links(struct bpf_link **links, size_t n)
{
	struct detach_share share[DETACH_THREADS];
	pthread_t tid[DETACH_THREADS];
	size_t per = (n + DETACH_THREADS - 1) / DETACH_THREADS, started = 0;

	for (size_t i = 0; per && i < DETACH_THREADS && i * per < n; i++) {
		share[i].links = links + i * per;
		share[i].n = n - i * per < per ? n - i * per : per;
		if (pthread_create(&tid[i], NULL, detach_worker, &share[i]) != 0) {
			detach_worker(&share[i]); /* no thread: do it here */
			continue;
		}
		tid[started] = tid[i];
		started++;
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

int les_tracer_map_access(void *tracer)
{
	struct les_tracer *t = tracer;
	__u32 key;

	if (bpf_map_get_next_key(bpf_map__fd(t->skel->maps.counters), NULL, &key))
		return -errno;
	return 0;
}

/*
 * The programs stop producing before any of them is detached (les_stopped
 * in common.bpf.h): a record made while some links are gone and others not
 * would be half traced. One that passed the check just before runs on for
 * microseconds; the pause lets it finish with every program still there.
 */
static void stop_producing(struct les_tracer *t)
{
	if (!t->skel || !t->skel->bss || t->skel->bss->les_stopped)
		return;
	__atomic_store_n(&t->skel->bss->les_stopped, 1, __ATOMIC_SEQ_CST);
	if (t->n_links)
		usleep(20000);
}

void les_tracer_detach(struct les_tracer *t)
{
	uint64_t start;
	size_t n_links = t->n_links;

	stop_producing(t);
	start = les_mono_ns();

	destroy_links(t->links, t->n_links);
	t->n_links = 0;
	/* The events' counts go with them: keep the last for the final stats. */
	if (t->kretprobes.n)
		t->kretprobe_missed = les_kretprobes_missed(&t->kretprobes);
	les_kretprobes_remove(&t->kretprobes);
	if (t->fn.verbose && n_links)
		fprintf(stderr, "lustre-ebpf-stream: %zu links detached in %llu ms\n", n_links,
			(unsigned long long)elapsed_us(start) / 1000);
	/*
	 * A raw tracepoint's program may still be finishing on another CPU
	 * when its link is gone (its release does not wait): programs run
	 * for microseconds, so a short pause makes the counters final.
	 */
	if (n_links)
		usleep(20000);
}

void les_tracer_destroy(struct les_tracer *t)
{
	ring_buffer__free(t->rb);
	t->rb = NULL;
	les_tracer_detach(t);
	les_bpf__destroy(t->skel);
	t->skel = NULL;
}
