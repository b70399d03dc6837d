// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Choosing attach methods from the kernel's facts (kfacts.h), gathered
 * once from the running kernel or read from a file: the plan is a pure
 * function of the facts and the options.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "model/kstats.h"
#include "util/json.h"
#include "model/mounts.h"
#include "model/ops.h"
#include "probe/probes.h"

/* Everything the planners' tables and the plan below ask of the kernel. */
static void probe_wants(struct les_kf_wants *w)
{
	memset(w, 0, sizeof(*w));
	les_fn_plan_wants(w);
	les_rpc_plan_wants(w);
	les_kf_want_module(w, "fuse");
	les_kf_want_type(w, "btf_trace_fuse_request_send", BTF_KIND_TYPEDEF);
	les_kf_want_type(w, "btf_trace_fuse_request_end", BTF_KIND_TYPEDEF);
	les_kf_want_tracepoint(w, "fuse:fuse_request_send");
	les_kf_want_tracepoint(w, "fuse:fuse_request_end");
	les_kf_want_type(w, "btf_trace_sys_enter", BTF_KIND_TYPEDEF);
	les_kf_want_tracepoint(w, "raw_syscalls:sys_enter");
	les_kf_want_tracepoint(w, "raw_syscalls:sys_exit");
	les_kf_want_tracepoint(w, "syscalls:sys_enter_openat");
	les_kf_want_tracepoint(w, "syscalls:sys_exit_openat");
	les_kf_want_type(w, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF);
	les_kf_want_type(w, "btf_trace_sched_process_fork", BTF_KIND_TYPEDEF);
}

int les_probe_facts_gather(struct les_kfacts *f)
{
	struct les_kf_wants *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	probe_wants(w);
	les_kfacts_gather(f, w);
	free(w);
	return 0;
}

void les_plan_options_init(struct les_plan_options *po, enum les_attach_mode mode)
{
	const char *multi = getenv("LES_KPROBE_MULTI");
	const char *per_call = getenv("LES_SYSCALL_PER_CALL");

	memset(po, 0, sizeof(*po));
	po->mode = mode;
	po->kprobe_multi_off = multi && strcmp(multi, "0") == 0;
	po->syscall_per_call = per_call && strcmp(per_call, "1") == 0;
	po->reqmsg_offset = getenv(LES_PTLRPC_REQMSG_ENV);
}

static void plan_fuse(struct les_probe_plan *plan, const struct les_kfacts *f)
{
	if (les_kfacts_has_type(f, "btf_trace_fuse_request_send", BTF_KIND_TYPEDEF, NULL) &&
	    les_kfacts_has_type(f, "btf_trace_fuse_request_end", BTF_KIND_TYPEDEF, NULL)) {
		plan->fuse = LES_FUSE_TP_BTF;
	} else if (les_kfacts_has_tracepoint(f, "fuse", "fuse_request_send") &&
		   les_kfacts_has_tracepoint(f, "fuse", "fuse_request_end")) {
		plan->fuse = LES_FUSE_TP;
	} else {
		plan->fuse = LES_FUSE_NONE;
		plan->fuse_reason = "kernel has no fuse:fuse_request_send/end tracepoints "
				    "(added in 6.12) or fuse is not loaded";
	}
}

static void plan_syscall(struct les_probe_plan *plan, const struct les_kfacts *f,
			 const struct les_plan_options *po)
{
	enum les_attach_mode mode = po->mode;
	bool syscalls = les_kfacts_has_type(f, "btf_trace_sys_enter", BTF_KIND_TYPEDEF, NULL) ||
			les_kfacts_has_tracepoint(f, "raw_syscalls", "sys_enter");

	if (mode == LES_ATTACH_MODE_FENTRY)
		plan->syscall_reason = "--attach fentry: the syscall fallback is off";
	else if (mode == LES_ATTACH_MODE_KPROBE)
		plan->syscall_reason = "--attach kprobe: the syscall fallback is off";
	else if (!syscalls)
		plan->syscall_reason = "kernel has no raw_syscalls:sys_enter/sys_exit tracepoints";
	else
		plan->syscall = true;
	/*
	 * bpf_get_current_task_btf came with 5.11; 5.10 gets the flavour of
	 * the syscall programs that reads the task by probe reads.
	 */
	plan->syscall_task_btf = plan->syscall && f->task_btf;
	/* 6.2: the fd's file as a BTF pointer too (bpf/compat.h). */
	plan->syscall_cast = plan->syscall_task_btf && f->rdonly_cast;
	/*
	 * The per-syscall tracepoints (CONFIG_FTRACE_SYSCALLS), where asked
	 * for and the kernel has them: a syscall outside the table then runs
	 * no program.
	 */
	plan->syscall_per_call = plan->syscall && po->syscall_per_call &&
				 les_kfacts_has_tracepoint(f, "syscalls", "sys_enter_openat") &&
				 les_kfacts_has_tracepoint(f, "syscalls", "sys_exit_openat");
}

/* The method that reports most functions, or none. */
static enum les_attach_method fn_main_method(const struct les_fn_plan *fn)
{
	size_t n[LES_ATTACH_MAX] = { 0 };

	for (size_t i = 0; i < fn->n; i++)
		n[fn->probe[i].method]++;
	if (!n[LES_ATTACH_FENTRY] && !n[LES_ATTACH_KPROBE])
		return LES_ATTACH_NONE;
	return n[LES_ATTACH_FENTRY] >= n[LES_ATTACH_KPROBE] ? LES_ATTACH_FENTRY
							    : LES_ATTACH_KPROBE;
}

static void plan_access(struct les_probe_plan *plan, const struct les_kfacts *f,
			const struct les_plan_options *po)
{
	enum les_attach_mode mode = po->mode;

	plan_syscall(plan, f, po);
	les_fn_plan_make(&plan->fn, f, mode, po->kprobe_multi_off);
	if (plan->syscall) {
		plan->access = LES_ATTACH_SYSCALL;
		return;
	}
	plan->access = fn_main_method(&plan->fn);
	if (plan->access == LES_ATTACH_NONE)
		plan->access_reason = mode == LES_ATTACH_MODE_FENTRY ? plan->fn.fentry_reason
				      : mode == LES_ATTACH_MODE_KPROBE ? plan->fn.kprobe_reason
								       : plan->syscall_reason;
	if (plan->access == LES_ATTACH_NONE && (!plan->access_reason || !*plan->access_reason))
		plan->access_reason = "no function of Lustre, NFS or FUSE can be probed";
}

void les_probe_plan_make(struct les_probe_plan *plan, const struct les_kfacts *f,
			 const struct les_plan_options *po)
{
	struct les_rpc_fuse fuse_tp;

	memset(plan, 0, sizeof(*plan));
	plan->facts_recorded = f->recorded;
	plan_fuse(plan, f);
	plan_access(plan, f, po);
	fuse_tp = (struct les_rpc_fuse){
		.tracepoints = plan->fuse != LES_FUSE_NONE,
		.keyed_by_req = plan->fuse == LES_FUSE_TP_BTF,
	};
	les_rpc_plan_make(&plan->rpc, f, po->mode, plan->fn.fentry_ok, plan->fn.fentry_reason,
			  po->reqmsg_offset, &fuse_tp);
	plan->proc_notices =
		les_kfacts_has_type(f, "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF, NULL) &&
		les_kfacts_has_type(f, "btf_trace_sched_process_fork", BTF_KIND_TYPEDEF, NULL);
}

/* Function probe programs: a slot's programs of its method, or the multi pair. */
static bool fn_wants(const struct les_fn_plan *fn, const char *prog_name)
{
	const struct les_fn_probe *pr;
	enum les_attach_method method;
	bool multi;
	int slot;

	if (!les_fn_prog_parse(prog_name, &slot, &method, &multi))
		return false;
	if (multi) {
		/* The kretprobe has one flavour; the entry, two (fn_kprobe_multi_cast). */
		if (strcmp(prog_name, "fn_kretprobe_multi") != 0 &&
		    (strstr(prog_name, "_cast") != NULL) != fn->kprobe_multi_cast)
			return false;
		for (size_t i = 0; i < fn->n; i++)
			if (fn->probe[i].method == LES_ATTACH_KPROBE)
				return fn->kprobe_multi;
		return false;
	}
	pr = les_fn_plan_slot(fn, slot);
	if (!pr || pr->method != method)
		return false;
	return method != LES_ATTACH_KPROBE || !fn->kprobe_multi;
}

#define SYSCALL_RULE                                                                               \
	"the syscall fallback reports an op on a mount unless function probes cover that op "     \
	"for the mount's filesystem (covered: every function of that filesystem and op that the " \
	"kernel has is probed)"

#define SYSCALL_PATHS                                                                              \
	"a path syscall (relative, from a dirfd, in any mount namespace or chroot) is placed "      \
	"on its mount at its exit: an open by the fd it returned, a stat by the st_dev it wrote, "  \
	"any other op by a request it made on an observed mount; left approximate: a readlink, "   \
	"getxattr, listxattr or statfs answered from cache by a relative path or from another "    \
	"mount namespace (counted as path_unresolved), and a failed lookup a cached negative "     \
	"entry answered"

/* Families whose function probes cover op, as "fuse nfs", or "". */
static void covered_families(const struct les_probe_plan *plan, unsigned int op, char *buf,
			     size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int f = 0; f < LES_FS_FAMILY_MAX; f++) {
		if (!(les_fn_plan_covered(&plan->fn, f) & (1u << op)) || used >= len)
			continue;
		used += snprintf(buf + used, len - used, "%s%s", used ? " " : "",
				 les_fs_family_name(f));
	}
}

static const char *fn_method_name(const struct les_fn_plan *fn, const struct les_fn_probe *pr)
{
	if (pr->method == LES_ATTACH_KPROBE && fn->kprobe_multi)
		return "kprobe_multi";
	return les_attach_method_name(pr->method);
}

static void json_fn_probe(struct jw *w, const struct les_fn_plan *fn,
			  const struct les_fn_probe *pr)
{
	jw_obj_begin(w);
	jw_kv_cstr(w, "plane", "access");
	jw_kv_cstr(w, "fs", les_fs_family_name(pr->e->family));
	/* A context probe reports no op of its own: it gives requests their mount. */
	jw_kv_cstr(w, "op", pr->e->flags & LES_FN_F_CONTEXT ? NULL : les_op_name(pr->e->op));
	if (pr->e->flags & LES_FN_F_CONTEXT)
		jw_kv_bool(w, "context", true);
	jw_kv_cstr(w, "function", pr->e->func);
	jw_kv_cstr(w, "module", pr->in_kallsyms ? pr->where : pr->e->module);
	jw_kv_cstr(w, "method", fn_method_name(fn, pr));
	jw_kv_cstr(w, "reason", pr->reason[0] ? pr->reason : NULL);
	if (pr->has_proto) {
		jw_kv_cstr(w, "target", les_fn_kind_name(pr->desc.kind));
		jw_kv_u64(w, "target_arg", pr->desc.arg);
		jw_kv_u64(w, "nargs", pr->desc.nargs);
		jw_kv_cstr(w, "returns", les_fn_ret_name(pr->desc.ret));
		jw_kv_cstr(w, "prototype", pr->proto_from);
	}
	if (pr->slot >= 0)
		jw_kv_u64(w, "slot", (uint64_t)pr->slot);
	jw_obj_end(w);
}

static void json_method(struct jw *w, const char *key, bool ok, const char *reason)
{
	jw_key(w, key);
	jw_obj_begin(w);
	jw_kv_bool(w, "available", ok);
	jw_kv_cstr(w, "reason", ok ? NULL : reason);
	jw_obj_end(w);
}

static void json_any_op(struct jw *w, const struct les_probe_plan *plan, unsigned int op)
{
	char families[64];

	covered_families(plan, op, families, sizeof(families));
	jw_obj_begin(w);
	jw_kv_cstr(w, "plane", "access");
	jw_kv_cstr(w, "fs", "any");
	jw_kv_cstr(w, "op", les_op_name(op));
	jw_kv_cstr(w, "method", plan->syscall ? "syscall" : "none");
	jw_kv_cstr(w, "reason", plan->syscall ? NULL : plan->syscall_reason);
	jw_key(w, "skipped_for");
	jw_arr_begin(w);
	for (int f = 0; plan->syscall && f < LES_FS_FAMILY_MAX; f++)
		if (les_fn_plan_covered(&plan->fn, f) & (1u << op))
			jw_cstr(w, les_fs_family_name(f));
	jw_arr_end(w);
	jw_obj_end(w);
}

static void json_refused(struct jw *w, const struct les_refusals *refused)
{
	jw_kv_bool(w, "load_checked", refused != NULL);
	les_refusals_json(w, refused);
}

static void print_fn_probe(FILE *out, const struct les_fn_plan *fn, const struct les_fn_probe *pr)
{
	char note[256];

	if (pr->reason[0])
		snprintf(note, sizeof(note), "%s", pr->reason);
	else
		snprintf(note, sizeof(note), "arg %u (%s), returns %s, from %s", pr->desc.arg,
			 les_fn_kind_name(pr->desc.kind), les_fn_ret_name(pr->desc.ret),
			 pr->proto_from);
	fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s\n", "access",
		les_fs_family_name(pr->e->family),
		pr->e->flags & LES_FN_F_CONTEXT ? "(context)" : les_op_name(pr->e->op), pr->e->func,
		fn_method_name(fn, pr), note);
}

static void print_any_op(FILE *out, const struct les_probe_plan *plan, unsigned int op)
{
	char families[64];

	covered_families(plan, op, families, sizeof(families));
	fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s%s%s\n", "access", "any", les_op_name(op),
		"raw_syscalls", plan->syscall ? "syscall" : "none",
		plan->syscall ? "" : plan->syscall_reason,
		plan->syscall && families[0] ? "not for mounts of: " : "",
		plan->syscall ? families : "");
}

/* The programs' flavours of the syscall fallback, as the plan chose them. */
enum syscall_flavour { SYSCALL_BTF, SYSCALL_CAST, SYSCALL_NOBTF, SYSCALL_FLAVOURS };

static int fuse_chosen(const struct les_probe_plan *plan)
{
	return plan->fuse == LES_FUSE_TP_BTF ? 0 : plan->fuse == LES_FUSE_TP ? 1 : -1;
}

static const char *fuse_reason(const struct les_probe_plan *plan)
{
	return plan->fuse_reason;
}

/*
 * Raw sys_enter/sys_exit or the per-syscall tracepoints, each in three
 * flavours: bpf_get_current_task_btf (5.11), with bpf_rdonly_cast (6.2),
 * or by probe reads (5.10).
 */
static int syscall_chosen(const struct les_probe_plan *plan)
{
	int flavour = !plan->syscall_task_btf ? SYSCALL_NOBTF
		      : plan->syscall_cast   ? SYSCALL_CAST
					     : SYSCALL_BTF;

	if (!plan->syscall)
		return -1;
	return plan->syscall_per_call ? SYSCALL_FLAVOURS + flavour : flavour;
}

static int proc_chosen(const struct les_probe_plan *plan)
{
	return plan->proc_notices ? 0 : -1;
}

static bool rpc_owns(const struct les_probe_plan *plan, const char *prog_name, bool *want)
{
	return les_rpc_plan_owns(&plan->rpc, prog_name, want);
}

static bool fn_owns(const struct les_probe_plan *plan, const char *prog_name, bool *want)
{
	enum les_attach_method method;
	bool multi;
	int slot;

	if (!les_fn_prog_parse(prog_name, &slot, &method, &multi))
		return false;
	*want = fn_wants(&plan->fn, prog_name);
	return true;
}

static void rpc_json(const struct les_probe_plan *plan, struct jw *w)
{
	les_rpc_plan_json(&plan->rpc, w);
}

static void rpc_text(const struct les_probe_plan *plan, FILE *out)
{
	les_rpc_plan_text(&plan->rpc, out);
}

static void fn_json(const struct les_probe_plan *plan, struct jw *w)
{
	for (size_t i = 0; i < plan->fn.n; i++)
		json_fn_probe(w, &plan->fn, &plan->fn.probe[i]);
}

static void fn_text(const struct les_probe_plan *plan, FILE *out)
{
	for (size_t i = 0; i < plan->fn.n; i++)
		print_fn_probe(out, &plan->fn, &plan->fn.probe[i]);
}

static void any_json(const struct les_probe_plan *plan, struct jw *w)
{
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		json_any_op(w, plan, op);
}

static void any_text(const struct les_probe_plan *plan, FILE *out)
{
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		print_any_op(out, plan, op);
}

#define PLAN_ALTS 6

/*
 * One member of the plan, and the BPF programs that serve it: the one
 * table les_probe_plan_wants and --list-probes read. A member either names
 * its programs, entry and exit, per alternative (a method or a flavour:
 * the one the plan chose loads, the others do not), or is a planner with a
 * table of its own (PtlRPC/LDLM/sunrpc/FUSE functions, the access plane's
 * functions) that owns its programs. Its --list-probes lines are a line of
 * its own (line.probe) or its planner's rows. A program no member owns
 * does not load.
 */
struct plan_member {
	const char *name;
	const char *alt[PLAN_ALTS][2];
	const char *alt_method[PLAN_ALTS]; /* --list-probes' method of each alternative */
	int (*chosen)(const struct les_probe_plan *plan); /* the alternative, -1: none */
	const char *(*reason)(const struct les_probe_plan *plan); /* why none */
	bool (*owns)(const struct les_probe_plan *plan, const char *prog_name, bool *want);
	struct {
		const char *plane, *fs, *proto;
		const char *probe; /* the JSON line's probe; NULL: no line of its own */
		const char *text_probe; /* the text line's */
	} line;
	void (*json)(const struct les_probe_plan *plan, struct jw *w);
	void (*text)(const struct les_probe_plan *plan, FILE *out);
};

/* In the order of --list-probes. */
static const struct plan_member members[] = {
	{
		.name = "fuse tracepoints",
		.alt = { { "fuse_send_btf", "fuse_end_btf" }, { "fuse_send_tp", "fuse_end_tp" } },
		.alt_method = { "tp_btf", "tracepoint" },
		.chosen = fuse_chosen,
		.reason = fuse_reason,
		.line = { "rpc", "fuse", "fuse", "fuse:fuse_request_send/end",
			  "fuse_request_send/end" },
	},
	{ .name = "rpc", .owns = rpc_owns, .json = rpc_json, .text = rpc_text },
	{ .name = "access functions", .owns = fn_owns, .json = fn_json, .text = fn_text },
	{
		.name = "syscall fallback",
		.alt = {
			[SYSCALL_BTF] = { "sys_enter", "sys_exit" },
			[SYSCALL_CAST] = { "sys_enter_cast", "sys_exit_cast" },
			[SYSCALL_NOBTF] = { "sys_enter_nobtf", "sys_exit_nobtf" },
			[SYSCALL_FLAVOURS + SYSCALL_BTF] = { "sys_enter_tp", "sys_exit_tp" },
			[SYSCALL_FLAVOURS + SYSCALL_CAST] = { "sys_enter_tp_cast", "sys_exit_tp_cast" },
			[SYSCALL_FLAVOURS + SYSCALL_NOBTF] = { "sys_enter_tp_nobtf",
							       "sys_exit_tp_nobtf" },
		},
		.chosen = syscall_chosen,
		.json = any_json,
		.text = any_text,
	},
	{
		.name = "process notices",
		.alt = { { "proc_exec", "proc_fork" } },
		.chosen = proc_chosen,
	},
};

#define N_MEMBERS (sizeof(members) / sizeof(members[0]))

/* Whether m owns prog_name; if so, *want says if the plan loads it. */
static bool member_owns(const struct plan_member *m, const struct les_probe_plan *plan,
			const char *prog_name, bool *want)
{
	if (m->owns)
		return m->owns(plan, prog_name, want);
	for (int a = 0; a < PLAN_ALTS; a++) {
		for (int i = 0; i < 2; i++) {
			if (!m->alt[a][i] || strcmp(m->alt[a][i], prog_name) != 0)
				continue;
			*want = m->chosen(plan) == a;
			return true;
		}
	}
	return false;
}

/* The programs are named by the members; section is not needed to tell them. */
bool les_probe_plan_wants(const struct les_probe_plan *plan, const char *prog_name,
			  const char *section)
{
	bool want;

	(void)section;
	for (size_t i = 0; i < N_MEMBERS; i++)
		if (member_owns(&members[i], plan, prog_name, &want))
			return want;
	return false;
}

static const char *member_method(const struct plan_member *m, const struct les_probe_plan *plan)
{
	int a = m->chosen(plan);

	return a >= 0 ? m->alt_method[a] : "none";
}

static void member_json(const struct plan_member *m, const struct les_probe_plan *plan,
			struct jw *w)
{
	if (m->json) {
		m->json(plan, w);
		return;
	}
	if (!m->line.probe)
		return;
	jw_obj_begin(w);
	jw_kv_cstr(w, "plane", m->line.plane);
	jw_kv_cstr(w, "fs", m->line.fs);
	jw_kv_cstr(w, "proto", m->line.proto);
	jw_kv_cstr(w, "probe", m->line.probe);
	jw_kv_cstr(w, "method", member_method(m, plan));
	jw_kv_cstr(w, "reason", m->reason ? m->reason(plan) : NULL);
	jw_obj_end(w);
}

static void member_text(const struct plan_member *m, const struct les_probe_plan *plan,
			FILE *out)
{
	const char *reason = m->reason ? m->reason(plan) : NULL;

	if (m->text) {
		m->text(plan, out);
		return;
	}
	if (!m->line.probe)
		return;
	fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s\n", m->line.plane, m->line.fs, "-",
		m->line.text_probe, member_method(m, plan), reason ? reason : "");
}

static void print_json(const struct les_probe_plan *plan, FILE *out,
		       const struct les_refusals *refused)
{
	size_t cap = 256 * 1024;
	char *buf = malloc(cap);
	struct jw w;

	if (!buf)
		return;
	jw_init(&w, buf, cap);
	jw_obj_begin(&w);
	jw_key(&w, "probes");
	jw_arr_begin(&w);
	for (size_t i = 0; i < N_MEMBERS; i++)
		member_json(&members[i], plan, &w);
	jw_arr_end(&w);
	jw_key(&w, "methods");
	jw_obj_begin(&w);
	json_method(&w, "fentry", plan->fn.fentry_ok, plan->fn.fentry_reason);
	json_method(&w, "kprobe", plan->fn.kprobe_ok, plan->fn.kprobe_reason);
	json_method(&w, "kprobe_multi", plan->fn.kprobe_multi, plan->fn.multi_reason);
	json_method(&w, "syscall", plan->syscall, plan->syscall_reason);
	jw_obj_end(&w);
	jw_kv_cstr(&w, "syscall_rule", SYSCALL_RULE);
	jw_kv_cstr(&w, "syscall_paths", SYSCALL_PATHS);
	json_refused(&w, refused);
	jw_obj_end(&w);
	jw_newline(&w);
	if (!w.overflow)
		fwrite(buf, 1, w.len, out);
	free(buf);
}

static void print_refused(FILE *out, const struct les_probe_plan *plan,
			  const struct les_refusals *refused)
{
	if (!refused && plan->facts_recorded) {
		fprintf(out, "load: not checked (the kernel's facts were read from a file)\n");
		return;
	}
	if (!refused) {
		fprintf(out, "load: not checked (needs root, or CAP_BPF and CAP_PERFMON)\n");
		return;
	}
	if (!refused->n)
		fprintf(out, "load: every planned program loaded\n");
	for (size_t i = 0; i < refused->n; i++)
		fprintf(out, "load: %s refused by this kernel, turned off: %s\n", refused->r[i].prog,
			refused->r[i].reason);
}

void les_probe_plan_print(const struct les_probe_plan *plan, FILE *out, bool json,
			  const struct les_refusals *refused)
{
	if (json) {
		print_json(plan, out, refused);
		return;
	}
	fprintf(out, "%-7s %-6s %-10s %-26s %-12s %s\n", "PLANE", "FS", "OP", "PROBE", "METHOD",
		"NOTE");
	for (size_t i = 0; i < N_MEMBERS; i++)
		member_text(&members[i], plan, out);
	fprintf(out, "\nfentry: %s\nkprobe: %s%s%s\nsyscall fallback: %s\nrule: %s\npaths: %s\n",
		plan->fn.fentry_ok ? "available" : plan->fn.fentry_reason,
		plan->fn.kprobe_ok ? "available" : plan->fn.kprobe_reason,
		plan->fn.kprobe_ok ? ", kprobe_multi: " : "",
		plan->fn.kprobe_ok ? (plan->fn.kprobe_multi ? "yes" : plan->fn.multi_reason) : "",
		plan->syscall ? "on" : plan->syscall_reason, SYSCALL_RULE, SYSCALL_PATHS);
	print_refused(out, plan, refused);
}

/*
 * The ops of one filesystem that no probe covers, one line per reason (a
 * refused method gives every op the same one): "fuse: 23 ops not covered
 * (lookup, open, ...): why".
 */
static void warn_uncovered_ops(FILE *out, int family, unsigned int uncovered,
			       const char *const why[LES_OP_MAX])
{
	while (uncovered) {
		const char *reason = why[__builtin_ctz(uncovered)];
		unsigned int same = 0, n = 0;
		char names[512];
		size_t used = 0;

		for (unsigned int op = 0; op < LES_OP_MAX; op++) {
			if (!(uncovered & (1u << op)) || strcmp(why[op], reason) != 0)
				continue;
			same |= 1u << op;
			n++;
			if (used < sizeof(names))
				used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
							 used ? ", " : "", les_op_name(op));
		}
		fprintf(out, "lustre-ebpf-stream: warning: %s: %u op%s not covered (%s): %s\n",
			les_fs_family_name(family), n, n == 1 ? "" : "s", names, reason);
		uncovered &= ~same;
	}
}

static void warn_uncovered(const struct les_probe_plan *plan, FILE *out, const char *mode)
{
	for (int f = LES_FS_LUSTRE; f < LES_FS_FAMILY_MAX; f++) {
		unsigned int present = 0, probed = 0;
		const char *why[LES_OP_MAX] = { 0 };

		for (size_t i = 0; i < plan->fn.n; i++) {
			const struct les_fn_probe *pr = &plan->fn.probe[i];

			if (pr->e->family != (enum les_fs_family)f || !pr->in_kallsyms ||
			    (pr->e->flags & LES_FN_F_CONTEXT))
				continue;
			present |= 1u << pr->e->op;
			if (pr->method != LES_ATTACH_NONE)
				probed |= 1u << pr->e->op;
			else
				why[pr->e->op] = pr->reason;
		}
		if (!present)
			continue; /* the filesystem is not loaded: nothing to observe */
		for (unsigned int op = 0; op < LES_OP_MAX; op++)
			if (!why[op])
				why[op] = mode;
		warn_uncovered_ops(out, f, present & ~probed, why);
	}
}

void les_probe_plan_warn(const struct les_probe_plan *plan, FILE *out, int verbose)
{
	if (plan->fn.mode == LES_ATTACH_MODE_FENTRY || plan->fn.mode == LES_ATTACH_MODE_KPROBE)
		warn_uncovered(plan, out,
			       plan->fn.mode == LES_ATTACH_MODE_FENTRY ? "fentry" : "kprobe");
	if (!verbose || plan->fn.mode == LES_ATTACH_MODE_SYSCALL)
		return;
	if (!plan->fn.fentry_ok && !plan->fn.kprobe_ok) {
		/* One reason for all: say it once. */
		fprintf(out, "lustre-ebpf-stream: warning: no function probes: fentry: %s; kprobe: %s\n",
			plan->fn.fentry_reason, plan->fn.kprobe_reason);
		return;
	}
	for (size_t i = 0; i < plan->fn.n; i++) {
		const struct les_fn_probe *pr = &plan->fn.probe[i];

		if (pr->method == LES_ATTACH_NONE && pr->in_kallsyms)
			fprintf(out, "lustre-ebpf-stream: warning: %s (%s %s) not probed: %s\n",
				pr->e->func, les_fs_family_name(pr->e->family),
				les_op_name(pr->e->op), pr->reason);
	}
}
