// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Choosing attach methods by probing the running kernel. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "json.h"
#include "ops.h"
#include "probes.h"

#define TRACEFS	      "/sys/kernel/tracing"
#define DEBUGFS_TRACE "/sys/kernel/debug/tracing"

static const char *tracefs_root(void)
{
	if (access(TRACEFS "/events", F_OK) == 0)
		return TRACEFS;
	if (access(DEBUGFS_TRACE "/events", F_OK) == 0)
		return DEBUGFS_TRACE;
	return NULL;
}

int les_ensure_tracefs(void)
{
	if (tracefs_root())
		return 0;
	if (mount("tracefs", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return tracefs_root() ? 0 : -ENOENT;
}

bool les_tracepoint_exists(const char *category, const char *event)
{
	const char *root = tracefs_root();
	char path[512];

	if (!root)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/%s", root, category, event);
	return access(path, F_OK) == 0;
}

static bool module_btf_has(struct btf *vmlinux, const char *name, int kind)
{
	struct dirent *de;
	bool found = false;
	DIR *dir = opendir("/sys/kernel/btf");

	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		struct btf *mod;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "vmlinux") == 0)
			continue;
		mod = btf__load_module_btf(de->d_name, vmlinux);
		if (!mod)
			continue;
		found = btf__find_by_name_kind(mod, name, kind) >= 0;
		btf__free(mod);
	}
	closedir(dir);
	return found;
}

bool les_kernel_btf_has(const char *name, int kind)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux)
		return false;
	found = btf__find_by_name_kind(vmlinux, name, kind) >= 0 ||
		module_btf_has(vmlinux, name, kind);
	btf__free(vmlinux);
	return found;
}

static void plan_fuse(struct les_probe_plan *plan)
{
	if (les_kernel_btf_has("btf_trace_fuse_request_send", BTF_KIND_TYPEDEF) &&
	    les_kernel_btf_has("btf_trace_fuse_request_end", BTF_KIND_TYPEDEF)) {
		plan->fuse = LES_FUSE_TP_BTF;
	} else if (les_tracepoint_exists("fuse", "fuse_request_send") &&
		   les_tracepoint_exists("fuse", "fuse_request_end")) {
		plan->fuse = LES_FUSE_TP;
	} else {
		plan->fuse = LES_FUSE_NONE;
		plan->fuse_reason = "kernel has no fuse:fuse_request_send/end tracepoints "
				    "(added in 6.12) or fuse is not loaded";
	}
}

static void plan_access(struct les_probe_plan *plan, enum les_attach_mode mode)
{
	bool syscalls = les_kernel_btf_has("btf_trace_sys_enter", BTF_KIND_TYPEDEF) ||
			les_tracepoint_exists("raw_syscalls", "sys_enter");

	switch (mode) {
	case LES_ATTACH_MODE_FENTRY:
	case LES_ATTACH_MODE_KPROBE:
		plan->access = LES_ATTACH_NONE;
		plan->access_reason = "this build has no per-filesystem function probes yet";
		return;
	case LES_ATTACH_MODE_AUTO:
	case LES_ATTACH_MODE_SYSCALL:
		break;
	}
	if (syscalls) {
		plan->access = LES_ATTACH_SYSCALL;
	} else {
		plan->access = LES_ATTACH_NONE;
		plan->access_reason = "kernel has no raw_syscalls:sys_enter/sys_exit tracepoints";
	}
}

void les_probe_plan_make(struct les_probe_plan *plan, enum les_attach_mode mode)
{
	memset(plan, 0, sizeof(*plan));
	les_ensure_tracefs();
	plan_fuse(plan);
	plan_access(plan, mode);
}

bool les_probe_plan_wants(const struct les_probe_plan *plan, const char *prog_name,
			  const char *section)
{
	if (strcmp(prog_name, "fuse_send_btf") == 0 || strcmp(prog_name, "fuse_end_btf") == 0)
		return plan->fuse == LES_FUSE_TP_BTF;
	if (strcmp(prog_name, "fuse_send_tp") == 0 || strcmp(prog_name, "fuse_end_tp") == 0)
		return plan->fuse == LES_FUSE_TP;
	if (strcmp(section, "raw_tp/sys_enter") == 0 || strcmp(section, "raw_tp/sys_exit") == 0)
		return plan->access == LES_ATTACH_SYSCALL;
	return false;
}

static const char *fuse_method_name(enum les_fuse_method m)
{
	switch (m) {
	case LES_FUSE_TP_BTF:
		return "tp_btf";
	case LES_FUSE_TP:
		return "tracepoint";
	default:
		return "none";
	}
}

static void print_json(const struct les_probe_plan *plan, FILE *out)
{
	char buf[16384];
	struct jw w;

	jw_init(&w, buf, sizeof(buf));
	jw_obj_begin(&w);
	jw_key(&w, "probes");
	jw_arr_begin(&w);
	jw_obj_begin(&w);
	jw_kv_cstr(&w, "plane", "rpc");
	jw_kv_cstr(&w, "fs", "fuse");
	jw_kv_cstr(&w, "probe", "fuse:fuse_request_send/end");
	jw_kv_cstr(&w, "method", fuse_method_name(plan->fuse));
	jw_kv_cstr(&w, "reason", plan->fuse_reason);
	jw_obj_end(&w);
	for (unsigned int op = 0; op < LES_OP_MAX; op++) {
		jw_obj_begin(&w);
		jw_kv_cstr(&w, "plane", "access");
		jw_kv_cstr(&w, "fs", "any");
		jw_kv_cstr(&w, "op", les_op_name(op));
		jw_kv_cstr(&w, "method", les_attach_method_name(plan->access));
		jw_kv_cstr(&w, "reason", plan->access_reason);
		jw_obj_end(&w);
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_newline(&w);
	fwrite(buf, 1, w.len, out);
}

void les_probe_plan_print(const struct les_probe_plan *plan, FILE *out, bool json)
{
	if (json) {
		print_json(plan, out);
		return;
	}
	fprintf(out, "%-7s %-6s %-28s %-11s %s\n", "PLANE", "FS", "PROBE", "METHOD", "NOTE");
	fprintf(out, "%-7s %-6s %-28s %-11s %s\n", "rpc", "fuse", "fuse_request_send/end",
		fuse_method_name(plan->fuse), plan->fuse_reason ? plan->fuse_reason : "");
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		fprintf(out, "%-7s %-6s %-28s %-11s %s\n", "access", "any", les_op_name(op),
			les_attach_method_name(plan->access),
			plan->access_reason ? plan->access_reason : "");
}
