#!/bin/bash
# 20_probes_verifier.sh: every BPF program of every attach method through
# this kernel's verifier, with a list of what loaded.
#
# The function-probe slots are loaded with descriptors that cover every
# (target kind x return kind x flags) combination, so each code path of the
# shared handlers is verified at least once. kprobe programs load here even
# where kprobes cannot attach; fentry/fexit loads are refused on kernels that
# do not permit tracing programs (EPERM): then they are proven in the stock
# kernel guest (test/vm/t_access_fuse.sh, t_access_nfs.sh), which loads and
# attaches them.
#
# Needs root and a built tree: LES_BUILD=build LES_SRC=. bash test/e2e/20_probes_verifier.sh
. "$(dirname "$0")/lib.sh"
les_init 20_probes_verifier cc pkg-config
build=$LES_BUILD
src=$LES_SRC
work=$WORK
[ -r "$build/bpf/les.skel.h" ] || les_fail "no skeleton: build first ($build/bpf/les.skel.h)"

# The loader: opens the skeleton once per group of programs, enables only
# that group, loads it; a group that fails is retried one program at a time
# so that the report names the program the verifier refused.
cat >"$work/loadall.c" <<'EOF'
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "les_record.h"
#include "les.skel.h"

enum group { G_FENTRY, G_KPROBE, G_MULTI, G_OTHER, G_MAX };
static const char *const group_name[G_MAX] = { "fentry", "kprobe", "kprobe_multi", "other" };
static int verbose;

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	return verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static enum group group_of(const char *name)
{
	if (!strncmp(name, "fn_fentry_", 10) || !strncmp(name, "fn_fexit_", 9))
		return G_FENTRY;
	if (!strcmp(name, "fn_kprobe_multi") || !strcmp(name, "fn_kretprobe_multi") ||
	    !strcmp(name, "fn_kprobe_multi_cast"))
		return G_MULTI;
	if (!strncmp(name, "fn_kprobe_", 10) || !strncmp(name, "fn_kretprobe_", 13))
		return G_KPROBE;
	/*
	 * The RPC plane's PtlRPC/LDLM/sunrpc programs, the servers' (srv_),
	 * LNet's (lnet_) and FUSE's function probes (fuse_*_kp, fuse_*_fe):
	 * test/e2e/25_rpc_verifier.sh.
	 */
	if (!strncmp(name, "ptl_", 4) || !strncmp(name, "srv_", 4) || !strncmp(name, "lnet_", 5) ||
	    !strncmp(name, "sunrpc_", 7))
		return G_MAX;
	if (!strncmp(name, "fuse_", 5) && strlen(name) > 8 &&
	    (!strcmp(name + strlen(name) - 3, "_kp") || !strcmp(name + strlen(name) - 3, "_fe")))
		return G_MAX;
	return G_OTHER;
}

/* Slot i: every kind x return x flags combination over the 96 slots. */
static void describe_slots(struct les_bpf *s)
{
	static const __u8 flag_sets[3] = { 0, LES_FN_F_LOOKUP, LES_FN_F_ATOMIC_OPEN };

	for (int i = 0; i < LES_FN_SLOTS; i++) {
		struct les_fn_desc *d = (struct les_fn_desc *)&s->rodata->fn_desc[i];

		d->kind = i % LES_FN_ARG_KIND_MAX;
		d->ret = (i / LES_FN_ARG_KIND_MAX) % LES_FN_RET_MAX;
		d->flags = flag_sets[(i / (LES_FN_ARG_KIND_MAX * LES_FN_RET_MAX)) % 3];
		d->op = i % LES_OP_MAX;
		d->arg = i % 5;
		d->aux_arg = (i + 1) % 5;
		d->flags_arg = (i + 2) % 5;
		d->nargs = 2 + i % 7;
	}
}

/* Open with only `only` (a program name) or the whole group enabled. */
static struct les_bpf *open_group(enum group g, const char *only)
{
	struct les_bpf *s = les_bpf__open();
	struct bpf_program *p;

	if (!s)
		return NULL;
	describe_slots(s);
	bpf_object__for_each_program(p, s->obj) {
		const char *name = bpf_program__name(p);
		int want = only ? !strcmp(name, only) : group_of(name) == g;

		bpf_program__set_autoload(p, want);
		if (want && g == G_FENTRY)
			bpf_program__set_attach_target(p, 0, "vfs_read");
	}
	return s;
}

static int load_one(enum group g, const char *name)
{
	struct les_bpf *s = open_group(g, name);
	int err = s ? les_bpf__load(s) : -errno;

	les_bpf__destroy(s);
	return err;
}

static int run_group(enum group g)
{
	struct les_bpf *s = open_group(g, NULL);
	struct bpf_program *p;
	char names[512][64];
	int n = 0, bad = 0, err;

	if (!s)
		return -1;
	bpf_object__for_each_program(p, s->obj)
		if (group_of(bpf_program__name(p)) == g && n < 512)
			snprintf(names[n++], sizeof(names[0]), "%s", bpf_program__name(p));
	err = les_bpf__load(s);
	les_bpf__destroy(s);
	if (!err) {
		for (int i = 0; i < n; i++)
			printf("loaded %s %s\n", group_name[g], names[i]);
		return 0;
	}
	if (err == -EPERM && g == G_FENTRY) {
		printf("refused %s EPERM %d programs\n", group_name[g], n);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int e = load_one(g, names[i]);

		if (e)
			bad++;
		printf("%s %s %s %s\n", e ? "failed" : "loaded", group_name[g], names[i],
		       e ? strerror(-e) : "");
	}
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	verbose = argc > 1 && !strcmp(argv[1], "-v");
	libbpf_set_print(print);
	for (int g = 0; g < G_MAX; g++)
		bad += run_group(g);
	return bad ? 1 : 0;
}
EOF

# shellcheck disable=SC2046 # pkg-config prints several words
cc -O1 -o "$work/loadall" "$work/loadall.c" -I"$src/include" -I"$build/bpf" \
	$(pkg-config --cflags --libs libbpf) 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; les_fail "cannot build the loader"; }

echo "loading every program (this takes a while: ~400 programs)"
"$work/loadall" >"$work/report" 2>"$work/stderr"
status=$?
sort "$work/report" | awk '{print $1, $2}' | uniq -c
grep '^failed' "$work/report"
[ $status -eq 0 ] || tail -n 40 "$work/stderr"

count()
{
	grep -c "^$1 $2 " "$work/report"
}

slots=$(sed -n 's/^#define LES_FN_SLOTS \([0-9]*\).*/\1/p' "$src/include/les_record.h")
les_true "loader ran without failures" test "$status" -eq 0
les_true "all $((2 * slots)) kprobe/kretprobe slot programs loaded" \
	test "$(count loaded kprobe)" -eq $((2 * slots))
# fn_kprobe_multi_cast names the bpf_rdonly_cast kfunc (6.2): it loads
# where the kernel has it, and is refused where not (the tool then loads
# fn_kprobe_multi instead).
if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'bpf_rdonly_cast'"; then
	les_true "kprobe.multi (both flavours) and kretprobe.multi programs loaded" \
		test "$(count loaded kprobe_multi)" -eq 3
else
	les_true "kprobe.multi and kretprobe.multi programs loaded" test "$(count loaded kprobe_multi)" -eq 2
	les_true "the bpf_rdonly_cast flavour refused without the kfunc" \
		grep -q "^failed kprobe_multi fn_kprobe_multi_cast" "$work/report"
fi
les_true "the other programs (tracepoints, raw_tp, tp_btf) loaded" test "$(count loaded other)" -ge 4
les_true "syscall fallback programs among them" grep -q "^loaded other sys_enter" "$work/report"
if grep -q '^refused fentry EPERM' "$work/report"; then
	echo "note fentry/fexit: refused with EPERM on this kernel; proven in the VM (test/vm/t_access_*.sh)"
	les_true "fentry refusal is EPERM for all $((2 * slots)) programs" \
		grep -q "^refused fentry EPERM $((2 * slots)) programs" "$work/report"
else
	les_true "all $((2 * slots)) fentry/fexit slot programs loaded" \
		test "$(count loaded fentry)" -eq $((2 * slots))
fi
cp "$work/report" "${TMPDIR:-/tmp}/les-verifier-report.txt"
echo "program list: ${TMPDIR:-/tmp}/les-verifier-report.txt"
les_done
