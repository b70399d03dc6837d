// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe planners as pure functions of recorded kernel facts
 * (test/fixtures/kfacts/, made with --dump-kernel-facts on the machines
 * their names give): what each kernel gets, and why. Also the facts' text
 * form: a dump reads back to the same facts, and a malformed file is one
 * clear error with its line number.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "probe/kfacts.h"
#include "probe/probes.h"

/* test/fixtures/kfacts/, found from this file's own path (CMake compiles it by absolute path). */
static const char *fixture(const char *name)
{
	static char path[1024];
	const char *dir = getenv("LES_KFACTS_FIXTURES");
	const char *unit = strstr(__FILE__, "/unit/test_probe_plan.c");

	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%.*s/fixtures/kfacts/%s",
			 unit ? (int)(unit - __FILE__) : 1, unit ? __FILE__ : ".", name);
	return path;
}

static struct les_kfacts *load(const char *name)
{
	struct les_kfacts *f = calloc(1, sizeof(*f));
	char err[256] = "";
	int ret;

	ck_assert_ptr_nonnull(f);
	ret = les_kfacts_load(f, fixture(name), err, sizeof(err));
	ck_assert_msg(ret == 0, "%s: %s", fixture(name), err);
	return f;
}

static struct les_probe_plan *plan_for(const struct les_kfacts *f, enum les_attach_mode mode)
{
	static struct les_probe_plan plan;
	struct les_plan_options po = {.mode = mode};

	les_probe_plan_make(&plan, f, &po);
	return &plan;
}

static const struct les_fn_probe *fn_row(const struct les_probe_plan *p, const char *func)
{
	for (size_t i = 0; i < p->fn.n; i++)
		if (strcmp(p->fn.probe[i].e->func, func) == 0)
			return &p->fn.probe[i];
	ck_abort_msg("no row for %s", func);
	return NULL;
}

static const struct les_rpc_probe *rpc_row(const struct les_probe_plan *p, const char *name)
{
	for (size_t i = 0; i < p->rpc.n; i++)
		if (strcmp(p->rpc.probe[i].f->name, name) == 0)
			return &p->rpc.probe[i];
	ck_abort_msg("no rpc row for %s", name);
	return NULL;
}

/* --- this build machine: 6.18, fentry refused with EPERM, no kprobes ------ */

START_TEST(test_host_618_syscalls_only)
{
	struct les_kfacts *f = load("host-6.18-eperm.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);
	const struct les_fn_probe *read = fn_row(p, "fuse_file_read_iter");

	ck_assert(p->syscall && p->syscall_task_btf);
	ck_assert_int_eq(p->access, LES_ATTACH_SYSCALL);
	ck_assert(!p->fn.fentry_ok && !p->fn.kprobe_ok);
	ck_assert_str_eq(p->fn.fentry_reason, "fentry not permitted on this kernel (EPERM)");
	ck_assert_str_eq(p->fn.kprobe_reason,
			 "kprobes not configured (no kprobe PMU or kprobe_events)");
	for (size_t i = 0; i < p->fn.n; i++)
		ck_assert_int_eq(p->fn.probe[i].method, LES_ATTACH_NONE);
	ck_assert(read->in_kallsyms && read->has_btf);
	ck_assert_str_eq(read->where, "vmlinux");
	ck_assert_str_eq(read->reason,
			 "fentry: fentry not permitted on this kernel (EPERM); kprobe: kprobes "
			 "not configured (no kprobe PMU or kprobe_events)");
	ck_assert_str_eq(fn_row(p, "ll_file_read_iter")->reason, "module lustre not loaded");
	ck_assert_int_eq(p->fuse, LES_FUSE_TP_BTF);
	ck_assert(p->proc_notices);
	ck_assert_str_eq(rpc_row(p, "ptlrpc_queue_wait")->reason,
			 "not in kallsyms (Lustre not loaded)");
	ck_assert_str_eq(rpc_row(p, "sunrpc:rpc_task_begin")->reason,
			 "sunrpc not loaded when the tool started (no NFS client)");
	ck_assert_str_eq(p->fn.multi_reason, "no function uses kprobes");
	/* The skeleton's programs: the syscall pair of the BTF flavour, no slot. */
	ck_assert(les_probe_plan_wants(p, "sys_enter", "raw_tp/sys_enter"));
	ck_assert(!les_probe_plan_wants(p, "sys_enter_nobtf", "raw_tp/sys_enter"));
	ck_assert(!les_probe_plan_wants(p, "fn_fentry_0", "fentry"));
	ck_assert(les_probe_plan_wants(p, "fuse_send_btf", "tp_btf/fuse_request_send"));
	free(f);
}
END_TEST

START_TEST(test_host_618_attach_fentry_has_nothing)
{
	struct les_kfacts *f = load("host-6.18-eperm.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_FENTRY);

	ck_assert(!p->syscall);
	ck_assert_int_eq(p->access, LES_ATTACH_NONE);
	ck_assert_str_eq(p->access_reason, "fentry not permitted on this kernel (EPERM)");
	ck_assert_str_eq(fn_row(p, "fuse_lookup")->reason,
			 "--attach fentry: fentry not permitted on this kernel (EPERM)");
	free(f);
}
END_TEST

/* The ops a refused method leaves uncovered: one line per filesystem and reason, not one per op. */
START_TEST(test_uncovered_ops_folded)
{
	struct les_kfacts *f = load("host-6.18-eperm.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_FENTRY);
	char *text = NULL, *nl;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(out);
	les_probe_plan_warn(p, out, 0);
	fclose(out);
	nl = strchr(text, '\n');
	ck_assert_msg(nl && !nl[1], "more than one line: %s", text);
	ck_assert_ptr_nonnull(strstr(text, "lustre-ebpf-stream: warning: fuse: 23 ops not covered "
					   "(lookup, open, close, "));
	ck_assert_ptr_nonnull(strstr(text, ", fsync): --attach fentry: fentry not permitted on this "
					   "kernel (EPERM)\n"));
	free(text);
	free(f);
}
END_TEST

/*
 * bpf_get_current_task_btf came with 5.11: on 5.10 the syscall fallback
 * loads the flavour that reads the task by probe reads.
 */
START_TEST(test_no_task_btf_syscall_flavour)
{
	struct les_kfacts *f = load("host-6.18-eperm.facts");
	const struct les_probe_plan *p;

	f->task_btf = false;
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	ck_assert(p->syscall && !p->syscall_task_btf);
	ck_assert(les_probe_plan_wants(p, "sys_enter_nobtf", "raw_tp/sys_enter"));
	ck_assert(les_probe_plan_wants(p, "sys_exit_nobtf", "raw_tp/sys_exit"));
	ck_assert(!les_probe_plan_wants(p, "sys_enter", "raw_tp/sys_enter"));
	free(f);
}
END_TEST

/* --- Debian 6.1 with the Lustre stand-in: no module BTF, so kprobes -------- */

START_TEST(test_debian_61_lustre_without_btf)
{
	struct les_kfacts *f = load("debian-6.1-lustre-standin.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);
	const struct les_fn_probe *ll_read = fn_row(p, "ll_file_read_iter");
	const struct les_fn_probe *nfs_getattr = fn_row(p, "nfs_getattr");

	ck_assert(p->fn.fentry_ok && p->fn.kprobe_ok);
	/* Lustre has no BTF: kprobes, the argument from the VFS method's prototype. */
	ck_assert_int_eq(ll_read->method, LES_ATTACH_KPROBE);
	ck_assert(!ll_read->has_btf && ll_read->has_proto);
	ck_assert_str_eq(ll_read->proto_from, "vmlinux file_operations.read_iter");
	ck_assert_int_eq(ll_read->desc.kind, LES_FN_ARG_KIOCB);
	ck_assert_int_eq(ll_read->desc.ret, LES_FN_RET_BYTES);
	/* NFS and FUSE modules have BTF on 6.1: fentry. */
	ck_assert_int_eq(nfs_getattr->method, LES_ATTACH_FENTRY);
	ck_assert_str_eq(nfs_getattr->proto_from, "BTF nfs");
	ck_assert_int_eq(nfs_getattr->desc.kind, LES_FN_ARG_PATH);
	ck_assert_int_eq(fn_row(p, "fuse_lookup")->method, LES_ATTACH_FENTRY);
	/* 6.1 has no nfs_atomic_open_v23 (6.12) and Debian's 6.1 no fprobe. */
	ck_assert_str_eq(fn_row(p, "nfs_atomic_open_v23")->reason,
			 "not in kallsyms: inlined or absent in this kernel");
	ck_assert(!p->fn.kprobe_multi);
	ck_assert_int_eq(rpc_row(p, "ptlrpc_queue_wait")->method, LES_ATTACH_KPROBE);
	ck_assert_int_eq(rpc_row(p, "ptlrpc_lprocfs_rpc_sent")->method, LES_ATTACH_KPROBE);
	ck_assert_int_eq(rpc_row(p, "sunrpc:rpc_task_begin")->method, LES_ATTACH_TRACEPOINT);
	ck_assert_ptr_nonnull(strstr(p->rpc.reqmsg_source, "no BTF for struct ptlrpc_request"));
	ck_assert_int_eq(p->rpc.reqmsg_off, -1);
	/* No fuse:fuse_request_send/end before 6.12. */
	ck_assert_int_eq(p->fuse, LES_FUSE_NONE);
	ck_assert_int_eq(p->access, LES_ATTACH_SYSCALL);
	free(f);
}
END_TEST

START_TEST(test_reqmsg_offset_from_the_environment)
{
	struct les_kfacts *f = load("debian-6.1-lustre-standin.facts");
	struct les_plan_options po = {.mode = LES_ATTACH_MODE_AUTO, .reqmsg_offset = "0x88"};
	static struct les_probe_plan p;

	les_probe_plan_make(&p, f, &po);
	ck_assert_int_eq(p.rpc.reqmsg_off, 0x88);
	po.reqmsg_offset = "4097";
	les_probe_plan_make(&p, f, &po);
	ck_assert_int_eq(p.rpc.reqmsg_off, -1);
	ck_assert_ptr_nonnull(strstr(p.rpc.reqmsg_source, "is not an offset from 0 to 4096"));
	free(f);
}
END_TEST

/* --- Debian 6.12 with a real Lustre built with module BTF ---------------- */

START_TEST(test_debian_612_lustre_with_btf)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);
	const struct les_fn_probe *ll_read = fn_row(p, "ll_file_read_iter");

	ck_assert_int_eq(ll_read->method, LES_ATTACH_FENTRY);
	ck_assert_str_eq(ll_read->where, "lustre");
	ck_assert_str_eq(ll_read->proto_from, "BTF lustre");
	ck_assert_int_eq(rpc_row(p, "ptlrpc_queue_wait")->method, LES_ATTACH_FENTRY);
	ck_assert_int_eq(rpc_row(p, "ptlrpc_lprocfs_rpc_sent")->method, LES_ATTACH_FENTRY);
	/* No fentry twin (eleven arguments): a kprobe. */
	ck_assert_int_eq(rpc_row(p, "ldlm_cli_enqueue")->method, LES_ATTACH_KPROBE);
	ck_assert_str_eq(p->rpc.reqmsg_source, "struct ptlrpc_request from module BTF (CO-RE)");
	ck_assert_ptr_nonnull(strstr(p->rpc.opcode_source, "ptlrpc_request_pack's argument"));
	ck_assert_int_eq(p->fuse, LES_FUSE_TP_BTF);
	free(f);
}
END_TEST

START_TEST(test_debian_612_attach_kprobe_multi)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_KPROBE);
	struct les_plan_options po = {.mode = LES_ATTACH_MODE_KPROBE, .kprobe_multi_off = true};
	static struct les_probe_plan single;

	ck_assert_int_eq(fn_row(p, "ll_file_read_iter")->method, LES_ATTACH_KPROBE);
	ck_assert_int_eq(rpc_row(p, "ptlrpc_queue_wait")->method, LES_ATTACH_KPROBE);
	ck_assert(p->fn.kprobe_multi);
	ck_assert(les_probe_plan_wants(p, "fn_kprobe_multi", "kprobe.multi"));
	ck_assert(!les_probe_plan_wants(p, "fn_kprobe_0", "kprobe"));
	les_probe_plan_make(&single, f, &po);
	ck_assert(!single.fn.kprobe_multi);
	ck_assert_str_eq(single.fn.multi_reason, "off (LES_KPROBE_MULTI=0)");
	ck_assert(les_probe_plan_wants(&single, "fn_kprobe_0", "kprobe"));
	ck_assert(!les_probe_plan_wants(&single, "fn_kprobe_multi_cast", "kprobe.multi"));
	free(f);
}
END_TEST

/* 6.2 and later: the kprobe_multi entry that walks by loads (bpf_rdonly_cast). */
START_TEST(test_kprobe_multi_cast)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	struct les_plan_options po = {.mode = LES_ATTACH_MODE_KPROBE};
	static struct les_probe_plan p;

	/* Facts recorded before the fact existed read as without it. */
	ck_assert(!f->rdonly_cast);
	les_probe_plan_make(&p, f, &po);
	ck_assert(p.fn.kprobe_multi && !p.fn.kprobe_multi_cast);
	ck_assert(les_probe_plan_wants(&p, "fn_kprobe_multi", "kprobe.multi"));
	ck_assert(!les_probe_plan_wants(&p, "fn_kprobe_multi_cast", "kprobe.multi"));
	f->rdonly_cast = true;
	les_probe_plan_make(&p, f, &po);
	ck_assert(p.fn.kprobe_multi_cast);
	ck_assert(!les_probe_plan_wants(&p, "fn_kprobe_multi", "kprobe.multi"));
	ck_assert(les_probe_plan_wants(&p, "fn_kprobe_multi_cast", "kprobe.multi"));
	ck_assert(les_probe_plan_wants(&p, "fn_kretprobe_multi", "kretprobe.multi"));
	free(f);
}
END_TEST

/* NFSv2/v3 directories' own ->atomic_open (6.12): an open row like any. */
/* --- the FUSE request plane without tracepoints ------------------------------ */

static void assert_fuse_rows(const struct les_probe_plan *p, enum les_attach_method m, bool nobtf)
{
	static const char *const rows[] = {"queue_request_and_unlock", "fuse_request_end",
					   "fuse_copy_args"};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ck_assert_msg(rpc_row(p, rows[i])->method == m, "%s: method %d", rows[i],
			      rpc_row(p, rows[i])->method);
		ck_assert(rpc_row(p, rows[i])->nobtf == nobtf);
		ck_assert_str_eq(rpc_row(p, rows[i])->where, "fuse");
	}
}

/* 6.1: no tracepoints, module BTF: CO-RE by fentry (auto) or kprobe. */
START_TEST(test_debian_61_fuse_requests_by_btf)
{
	struct les_kfacts *f = load("debian-6.1-lustre-standin.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	ck_assert_int_eq(p->fuse, LES_FUSE_NONE);
	assert_fuse_rows(p, LES_ATTACH_FENTRY, false);
	ck_assert(les_probe_plan_wants(p, "fuse_queue_fe", "fentry/queue_request_and_unlock"));
	ck_assert(les_probe_plan_wants(p, "fuse_copy_args_fe", "fentry/fuse_copy_args"));
	ck_assert(!les_probe_plan_wants(p, "fuse_queue_kp", "kprobe/queue_request_and_unlock"));
	ck_assert(
		!les_probe_plan_wants(p, "fuse_queue_nobtf_kp", "kprobe/queue_request_and_unlock"));
	p = plan_for(f, LES_ATTACH_MODE_KPROBE);
	assert_fuse_rows(p, LES_ATTACH_KPROBE, false);
	ck_assert(les_probe_plan_wants(p, "fuse_req_end_kp", "kprobe/fuse_request_end"));
	ck_assert(!les_probe_plan_wants(p, "fuse_req_end_nobtf_kp", "kprobe/fuse_request_end"));
	free(f);
}
END_TEST

/* 5.10: no module BTF: the kprobes that read the fixed head. */
START_TEST(test_debian_510_fuse_requests_without_btf)
{
	struct les_kfacts *f = load("debian-5.10.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	ck_assert_int_eq(p->fuse, LES_FUSE_NONE);
	assert_fuse_rows(p, LES_ATTACH_KPROBE, true);
	ck_assert(
		les_probe_plan_wants(p, "fuse_queue_nobtf_kp", "kprobe/queue_request_and_unlock"));
	ck_assert(les_probe_plan_wants(p, "fuse_copy_args_nobtf_kp", "kprobe/fuse_copy_args"));
	ck_assert(!les_probe_plan_wants(p, "fuse_queue_kp", "kprobe/queue_request_and_unlock"));
	ck_assert(!les_probe_plan_wants(p, "fuse_queue_fe", "fentry/queue_request_and_unlock"));
	/* --attach fentry has no fentry to give them: the same kprobes. */
	assert_fuse_rows(plan_for(f, LES_ATTACH_MODE_FENTRY), LES_ATTACH_KPROBE, true);
	free(f);
}
END_TEST

/* 6.12: the tracepoints serve; the daemon's read is probed beside them. */
START_TEST(test_debian_612_fuse_tracepoints_and_split)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	ck_assert_int_eq(p->fuse, LES_FUSE_TP_BTF);
	ck_assert_int_eq(rpc_row(p, "queue_request_and_unlock")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "fuse_request_end")->reason,
			 "the fuse:fuse_request_send/end tracepoints serve instead");
	ck_assert_int_eq(rpc_row(p, "fuse_copy_args")->method, LES_ATTACH_FENTRY);
	ck_assert_str_eq(rpc_row(p, "fuse_copy_args")->where, "vmlinux");
	free(f);
}
END_TEST

/* The host: tracepoints, but neither fentry nor kprobes for the split. */
START_TEST(test_host_618_fuse_no_split)
{
	struct les_kfacts *f = load("host-6.18-eperm.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	ck_assert_int_eq(rpc_row(p, "fuse_request_end")->method, LES_ATTACH_NONE);
	ck_assert_int_eq(rpc_row(p, "fuse_copy_args")->method, LES_ATTACH_NONE);
	ck_assert_str_ne(rpc_row(p, "fuse_copy_args")->reason, "");
	free(f);
}
END_TEST

START_TEST(test_nfs_atomic_open_v23)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);
	const struct les_fn_probe *v23 = fn_row(p, "nfs_atomic_open_v23");

	ck_assert(v23->in_kallsyms);
	ck_assert_int_eq(v23->method, LES_ATTACH_FENTRY);
	ck_assert_int_eq(v23->desc.kind, LES_FN_ARG_INODE);
	ck_assert(v23->desc.flags & LES_FN_F_ATOMIC_OPEN);
	ck_assert_uint_eq(v23->desc.flags_arg, v23->desc.aux_arg + 1u);
	ck_assert(les_fn_plan_covered(&p->fn, LES_FS_NFS) & (1u << LES_OP_OPEN));
	free(f);
}
END_TEST

/* --- NFS's server rows: only where nfsd is loaded ------------------------- */

START_TEST(test_nfs_server_rows_need_nfsd)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);
	struct les_kf_module *m;

	/* An NFS client: sunrpc has the svc_ tracepoints, but no server answers. */
	ck_assert_int_eq(rpc_row(p, "sunrpc:rpc_task_begin")->method, LES_ATTACH_TRACEPOINT);
	ck_assert_int_eq(rpc_row(p, "sunrpc:svc_send")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "sunrpc:svc_send")->reason,
			 "nfsd not loaded when the tool started (no NFS server)");
	ck_assert(!les_rpc_prog_is_server("sunrpc_begin_btf"));
	ck_assert(les_rpc_prog_is_server("sunrpc_svc_send_btf"));
	/* nfsd loaded, without its tracepoints' BTF: svc_ rows by tp_btf, nfsd's rows off. */
	ck_assert_uint_lt(f->n_module, LES_KF_MODULES_MAX);
	m = &f->module[f->n_module++];
	snprintf(m->name, sizeof(m->name), "nfsd");
	m->loaded = true;
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	ck_assert_int_eq(rpc_row(p, "sunrpc:svc_send")->method, LES_ATTACH_TRACEPOINT);
	ck_assert_int_eq(rpc_row(p, "sunrpc:svc_stats_latency")->method, LES_ATTACH_TRACEPOINT);
	ck_assert_str_eq(rpc_row(p, "nfsd:nfsd_read_start")->reason,
			 "no such tracepoint in this kernel");
	free(f);
}
END_TEST

/* --- a build where PtlRPC functions are inlined or only clones ----------- */

static void drop_sym(struct les_kfacts *f, const char *name)
{
	for (size_t i = 0; i < f->n_sym; i++)
		if (strcmp(f->sym[i].name, name) == 0) {
			memmove(&f->sym[i], &f->sym[i + 1], (f->n_sym - i - 1) * sizeof(f->sym[0]));
			f->n_sym--;
			return;
		}
	ck_abort_msg("the fixture has no symbol %s", name);
}

static void add_sym(struct les_kfacts *f, const char *name, const char *module)
{
	struct les_kf_sym *s = &f->sym[f->n_sym++];

	ck_assert_uint_le(f->n_sym, LES_KF_SYMS_MAX);
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->module, sizeof(s->module), "%s", module);
}

START_TEST(test_ptlrpc_inlined_or_clone)
{
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	/* The Lustre 2.17.57 build recorded has no __ptlrpc_free_req of its own. */
	ck_assert_int_eq(rpc_row(p, "__ptlrpc_free_req")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "__ptlrpc_free_req")->reason,
			 "not in kallsyms (inlined or renamed by this Lustre build)");
	ck_assert_int_eq(rpc_row(p, "ptlrpc_send_new_req")->method, LES_ATTACH_FENTRY);

	/* A build whose compiler cloned one and inlined the other. */
	add_sym(f, "__ptlrpc_free_req.constprop.0", "ptlrpc");
	drop_sym(f, "ptlrpc_send_new_req");
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	ck_assert_int_eq(rpc_row(p, "__ptlrpc_free_req")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "__ptlrpc_free_req")->reason,
			 "only the compiler's clone __ptlrpc_free_req.constprop.0 in kallsyms: "
			 "its arguments may differ");
	ck_assert(!les_probe_plan_wants(p, "ptl_free_req_kp", "kprobe"));
	ck_assert(!les_probe_plan_wants(p, "ptl_free_req_fe", "fentry"));
	ck_assert_int_eq(rpc_row(p, "ptlrpc_send_new_req")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "ptlrpc_send_new_req")->reason,
			 "not in kallsyms (inlined or renamed by this Lustre build)");
	/* Where ptlrpc_send_new_req is inlined, ptl_send_rpc starts the request. */
	ck_assert_int_eq(rpc_row(p, "ptl_send_rpc")->method, LES_ATTACH_FENTRY);
	ck_assert(les_probe_plan_wants(p, "ptl_send_rpc_fe", "fentry"));
	free(f);
}
END_TEST

static void add_type(struct les_kfacts *f, const char *name, const char *btf)
{
	struct les_kf_type *t = &f->type[f->n_type++];

	ck_assert_uint_le(f->n_type, LES_KF_TYPES_MAX);
	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->btf, sizeof(t->btf), "%s", btf);
	t->kind = BTF_KIND_STRUCT;
}

static void add_proto(struct les_kfacts *f, const char *name, const char *btf, unsigned int nargs)
{
	struct les_kf_proto *pr = &f->proto[f->n_proto++];

	ck_assert_uint_le(f->n_proto, LES_KF_PROTOS_MAX);
	memset(pr, 0, sizeof(*pr));
	snprintf(pr->name, sizeof(pr->name), "%s", name);
	snprintf(pr->btf, sizeof(pr->btf), "%s", btf);
	pr->nargs = nargs;
}

/*
 * The LNet rows read struct lnet_msg by CO-RE: off with the reason without
 * the lnet module's BTF for it, fentry with it, and all four together.
 */
START_TEST(test_lnet_rows_need_lnet_btf)
{
	static const struct {
		const char *fn, *module;
		unsigned int nargs;
	} lnet[] = {
		{"lnet_msg_commit", "lnet", 2},
		{"lnet_post_send_locked", "lnet", 2},
		{"ksocknal_send", "ksocklnd", 3},
		{"lnet_finalize", "lnet", 2},
	};
	struct les_kfacts *f = load("debian-6.12-lustre-btf.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	/* The recorded facts have no lnet symbols: not in kallsyms. */
	ck_assert_int_eq(rpc_row(p, "lnet_finalize")->method, LES_ATTACH_NONE);
	for (size_t i = 0; i < sizeof(lnet) / sizeof(lnet[0]); i++) {
		add_sym(f, lnet[i].fn, lnet[i].module);
		add_proto(f, lnet[i].fn, lnet[i].module, lnet[i].nargs);
	}
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	for (size_t i = 0; i < sizeof(lnet) / sizeof(lnet[0]); i++) {
		ck_assert_int_eq(rpc_row(p, lnet[i].fn)->method, LES_ATTACH_NONE);
		ck_assert_str_eq(rpc_row(p, lnet[i].fn)->reason,
				 "no lnet records: no BTF for struct lnet_msg in the module");
	}
	ck_assert(!les_probe_plan_wants(p, "lnet_finalize_fe", "fentry"));
	add_type(f, "lnet_msg", "lnet");
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	for (size_t i = 0; i < sizeof(lnet) / sizeof(lnet[0]); i++)
		ck_assert_int_eq(rpc_row(p, lnet[i].fn)->method, LES_ATTACH_FENTRY);
	ck_assert(les_probe_plan_wants(p, "lnet_post_fx", "fentry"));
	ck_assert(!les_probe_plan_wants(p, "lnet_post_kr", "kprobe"));
	p = plan_for(f, LES_ATTACH_MODE_KPROBE);
	ck_assert_int_eq(rpc_row(p, "lnet_post_send_locked")->method, LES_ATTACH_KPROBE);
	ck_assert(les_probe_plan_wants(p, "lnet_post_kr", "kprobe"));
	/* Without the gate no record can be made: the others stand down. */
	drop_sym(f, "lnet_post_send_locked");
	p = plan_for(f, LES_ATTACH_MODE_AUTO);
	ck_assert_int_eq(rpc_row(p, "lnet_finalize")->method, LES_ATTACH_NONE);
	ck_assert_str_eq(rpc_row(p, "lnet_finalize")->reason,
			 "no lnet records: lnet_finalize or lnet_post_send_locked not in kallsyms");
	free(f);
}
END_TEST

/* Recorded on the two-guest client: the four LNet rows by fentry. */
START_TEST(test_debian_612_lnet_client)
{
	struct les_kfacts *f = load("debian-6.12-lustre-lnet-client.facts");
	const struct les_probe_plan *p = plan_for(f, LES_ATTACH_MODE_AUTO);

	ck_assert_int_eq(rpc_row(p, "lnet_msg_commit")->method, LES_ATTACH_FENTRY);
	ck_assert_int_eq(rpc_row(p, "lnet_post_send_locked")->method, LES_ATTACH_FENTRY);
	ck_assert_int_eq(rpc_row(p, "ksocknal_send")->method, LES_ATTACH_FENTRY);
	ck_assert_str_eq(rpc_row(p, "ksocknal_send")->where, "ksocklnd");
	ck_assert_int_eq(rpc_row(p, "lnet_finalize")->method, LES_ATTACH_FENTRY);
	free(f);
}
END_TEST

START_TEST(test_clone_lookup)
{
	struct les_kfacts f = {0};

	snprintf(f.sym[0].name, sizeof(f.sym[0].name), "foo.isra.0");
	snprintf(f.sym[1].name, sizeof(f.sym[1].name), "bar.cold");
	snprintf(f.sym[2].name, sizeof(f.sym[2].name), "foobar.constprop.0");
	f.n_sym = 3;
	ck_assert_ptr_eq(les_kfacts_clone(&f, "foo"), &f.sym[0]);
	ck_assert_ptr_null(les_kfacts_clone(&f, "bar"));
	ck_assert_ptr_null(les_kfacts_clone(&f, "fooba"));
	ck_assert_ptr_null(les_kfacts_sym(&f, "foo"));
}
END_TEST

/* --- the text form ------------------------------------------------------- */

START_TEST(test_dump_reads_back_the_same)
{
	static const char *const names[] = {"host-6.18-eperm.facts",
					    "debian-6.1-lustre-standin.facts",
					    "debian-6.12-lustre-btf.facts"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct les_kfacts *f = load(names[i]), *back = calloc(1, sizeof(*back));
		char *text = NULL, err[256];
		size_t len = 0;
		FILE *out = open_memstream(&text, &len), *in;

		les_kfacts_write(f, out);
		fclose(out);
		in = fmemopen(text, len, "r");
		ck_assert_int_eq(les_kfacts_read(back, in, err, sizeof(err)), 0);
		fclose(in);
		ck_assert_msg(memcmp(f, back, sizeof(*f)) == 0, "%s changed on the way", names[i]);
		free(text);
		free(back);
		free(f);
	}
}
END_TEST

static int read_text(const char *text, char *err, size_t len)
{
	static struct les_kfacts f;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(in);
	ret = les_kfacts_read(&f, in, err, len);
	fclose(in);
	return ret;
}

START_TEST(test_malformed_facts)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{"", "not kernel facts: no 'kfacts 1' line"},
		{"# only\n\n", "not kernel facts: no 'kfacts 1' line"},
		{"kfacts 2\n", "line 1: not kernel facts of this version"},
		{"release x\n", "line 1: not kernel facts of this version"},
		{"kfacts 1\nfentry maybe\n", "line 2: 'fentry' takes ok, not-tried"},
		{"kfacts 1\nfentry load-refused\n", "line 2: 'fentry' takes ok"},
		{"kfacts 1\nfentry load-refused EWHAT\n", "line 2: 'EWHAT' is not an errno"},
		{"kfacts 1\nkprobes 1\n", "line 2: 'kprobes' takes yes or no"},
		{"kfacts 1\nproto f vmlinux int bogus\n", "line 2: proto: unknown argument"},
		{"kfacts 1\nproto f vmlinux\n", "line 2: 'proto' takes NAME BTF RET"},
		{"kfacts 1\nfexit f vmlinux EPERM\n", "line 2: fexit: no 'proto f vmlinux'"},
		{"kfacts 1\nsym a b c\n", "line 2: 'sym' takes NAME MODULE"},
		{"kfacts 1\nmodule m lodaed\n", "line 2: module: unknown flag 'lodaed'"},
		{"kfacts 1\ntype union u vmlinux\n", "line 2: 'type' takes KIND NAME BTF"},
		{"kfacts 1\ntracepoint nocolon\n", "line 2: 'tracepoint' takes CATEGORY:EVENT"},
		{"kfacts 1\nsym aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa v\n",
		 "line 2: name too long"},
		{"kfacts 1\nbogus\n", "line 2: unknown fact 'bogus'"},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		ck_assert_msg(read_text(cases[i].text, err, sizeof(err)) == -EINVAL, "accepted: %s",
			      cases[i].text);
		ck_assert_msg(strncmp(err, cases[i].err, strlen(cases[i].err)) == 0,
			      "'%s' gave '%s', not '%s'", cases[i].text, err, cases[i].err);
	}
	ck_assert_int_eq(
		read_text("kfacts 1\n# comment\nkprobes yes # trailing\n", err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_missing_file)
{
	static struct les_kfacts f;
	char err[256];

	ck_assert_int_eq(les_kfacts_load(&f, "/nonexistent/facts", err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, strerror(ENOENT));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("probe_plan");
	TCase *kernels = tcase_create("kernels");
	TCase *text = tcase_create("facts_text");
	SRunner *sr;
	int failed;

	tcase_add_test(kernels, test_host_618_syscalls_only);
	tcase_add_test(kernels, test_host_618_attach_fentry_has_nothing);
	tcase_add_test(kernels, test_uncovered_ops_folded);
	tcase_add_test(kernels, test_no_task_btf_syscall_flavour);
	tcase_add_test(kernels, test_debian_61_lustre_without_btf);
	tcase_add_test(kernels, test_reqmsg_offset_from_the_environment);
	tcase_add_test(kernels, test_debian_612_lustre_with_btf);
	tcase_add_test(kernels, test_debian_612_attach_kprobe_multi);
	tcase_add_test(kernels, test_kprobe_multi_cast);
	tcase_add_test(kernels, test_debian_61_fuse_requests_by_btf);
	tcase_add_test(kernels, test_debian_510_fuse_requests_without_btf);
	tcase_add_test(kernels, test_debian_612_fuse_tracepoints_and_split);
	tcase_add_test(kernels, test_host_618_fuse_no_split);
	tcase_add_test(kernels, test_nfs_atomic_open_v23);
	tcase_add_test(kernels, test_ptlrpc_inlined_or_clone);
	tcase_add_test(kernels, test_lnet_rows_need_lnet_btf);
	tcase_add_test(kernels, test_debian_612_lnet_client);
	tcase_add_test(kernels, test_nfs_server_rows_need_nfsd);
	tcase_add_test(kernels, test_clone_lookup);
	tcase_add_test(text, test_dump_reads_back_the_same);
	tcase_add_test(text, test_malformed_facts);
	tcase_add_test(text, test_missing_file);
	suite_add_tcase(s, kernels);
	suite_add_tcase(s, text);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
