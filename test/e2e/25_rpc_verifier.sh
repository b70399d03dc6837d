#!/bin/bash
# 25_rpc_verifier.sh: the RPC plane's PtlRPC, LDLM, sunrpc and FUSE function programs,
# the servers' PtlRPC programs (srv_*) and the LNet ones (lnet_*),
# through this kernel's verifier.
#
# - PtlRPC/LDLM and FUSE kprobe programs (the FUSE ones read struct fuse_req
#   by CO-RE or, the _nobtf ones, at fixed offsets): loaded twice, once without an rq_reqmsg
#   offset and once with one (ptlrpc_reqmsg_off is .rodata: with -1 the
#   verifier prunes the opcode reader as dead code, so it would never be
#   checked).
# - Their fentry/fexit twins: aimed at vfs_read for the load (there is no
#   Lustre BTF anywhere to aim them at); kernels that refuse tracing
#   programs answer EPERM, which is reported, not failed. The stock-kernel
#   guest loads them (test/vm/t_rpc_lustre.sh runs this test).
# - sunrpc tp_btf programs (the client's, and the server's of sunrpc and nfsd):
#   only where the sunrpc module and its BTF are
#   loaded; otherwise skipped with the reason (the guest proves them:
#   test/vm/t_rpc_nfs.sh runs this test after loading sunrpc).
#
# Needs root and a built tree: LES_BUILD=build LES_SRC=. bash test/e2e/25_rpc_verifier.sh
# LES_RPC_VERIFIER_REQUIRE=fentry,sunrpc makes those groups mandatory (the guest sets it).
. "$(dirname "$0")/lib.sh"
les_init 25_rpc_verifier cc pkg-config
build=$LES_BUILD
src=$LES_SRC
require=${LES_RPC_VERIFIER_REQUIRE:-}
work=$WORK
[ -r "$build/bpf/les.skel.h" ] || les_fail "no skeleton: build first ($build/bpf/les.skel.h)"

cat >"$work/loadrpc.c" <<'EOF'
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "les_record.h"
#include "les.skel.h"

enum group { G_KPROBE, G_FENTRY, G_SUNRPC, G_NONE };
static const char *const group_name[] = { "kprobe", "fentry", "sunrpc" };
static int verbose;

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return verbose || level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

/* FUSE's function probes (kernels without its tracepoints): fuse_*_kp, fuse_*_fe. */
static bool fuse_fn_prog(const char *name)
{
	return !strncmp(name, "fuse_", 5) && (ends_with(name, "_kp") || ends_with(name, "_fe"));
}

static enum group group_of(const char *name)
{
	if (!strncmp(name, "sunrpc_", 7))
		return G_SUNRPC;
	if (strncmp(name, "ptl_", 4) && strncmp(name, "srv_", 4) && strncmp(name, "lnet_", 5) &&
	    !fuse_fn_prog(name))
		return G_NONE;
	if (ends_with(name, "_fe") || ends_with(name, "_fx"))
		return G_FENTRY;
	return G_KPROBE;
}

/* Open with the group (or the one program only) enabled; off: rq_reqmsg offset. */
static struct les_bpf *open_group(enum group g, const char *only, int off)
{
	struct les_bpf *s = les_bpf__open();
	struct bpf_program *p;

	if (!s)
		return NULL;
	s->rodata->ptlrpc_reqmsg_off = off;
	bpf_object__for_each_program(p, s->obj) {
		const char *name = bpf_program__name(p);
		bool want = only ? !strcmp(name, only) : group_of(name) == g;

		bpf_program__set_autoload(p, want);
		if (want && g == G_FENTRY)
			bpf_program__set_attach_target(p, 0, "vfs_read");
	}
	return s;
}

static int load(enum group g, const char *only, int off)
{
	struct les_bpf *s = open_group(g, only, off);
	int err = s ? les_bpf__load(s) : -errno;

	les_bpf__destroy(s);
	return err;
}

/* Load the group; on failure one program at a time, to name the culprit. */
static int run_group(enum group g, int off)
{
	struct les_bpf *s = open_group(g, NULL, off);
	char names[128][64];
	struct bpf_program *p;
	int n = 0, bad = 0, err;

	if (!s)
		return 1;
	bpf_object__for_each_program(p, s->obj)
		if (group_of(bpf_program__name(p)) == g && n < 128)
			snprintf(names[n++], sizeof(names[0]), "%s", bpf_program__name(p));
	les_bpf__destroy(s);
	err = load(g, NULL, off);
	if (!err) {
		for (int i = 0; i < n; i++)
			printf("loaded %s off=%d %s\n", group_name[g], off, names[i]);
		return 0;
	}
	if (err == -EPERM && g == G_FENTRY) {
		printf("refused %s EPERM %d programs\n", group_name[g], n);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int e = load(g, names[i], off);

		bad += e != 0;
		printf("%s %s off=%d %s %s\n", e ? "failed" : "loaded", group_name[g], off, names[i],
		       e ? strerror(-e) : "");
	}
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0;

	verbose = argc > 2 && !strcmp(argv[2], "-v");
	libbpf_set_print(print);
	if (argc > 1 && !strcmp(argv[1], "sunrpc"))
		return run_group(G_SUNRPC, -1) ? 1 : 0;
	bad += run_group(G_KPROBE, -1);
	bad += run_group(G_KPROBE, 32);
	bad += run_group(G_FENTRY, 32);
	return bad ? 1 : 0;
}
EOF

# shellcheck disable=SC2046 # pkg-config prints several words
cc -O1 -o "$work/loadrpc" "$work/loadrpc.c" -I"$src/include" -I"$build/bpf" \
	$(pkg-config --cflags --libs libbpf) 2>"$work/cc.log" ||
	{ cat "$work/cc.log"; les_fail "cannot build the loader"; }

"$work/loadrpc" >"$work/report" 2>"$work/stderr"
status=$?
sort "$work/report" | awk '{print $1, $2, $3}' | uniq -c
grep '^failed' "$work/report"
[ $status -eq 0 ] || tail -n 40 "$work/stderr"

n_progs()
{
	grep -c "^$1 $2 off=$3 " "$work/report"
}

# The programs the object has, from the skeleton: so a new one is never left out.
n_kprobe=$(grep -oE 'struct bpf_program \*(ptl|srv|lnet|fuse)_[a-z_]*_k[pr];' "$build/bpf/les.skel.h" |
	sort -u | wc -l)
n_fentry=$(grep -oE 'struct bpf_program \*(ptl|srv|lnet|fuse)_[a-z_]*_f[ex];' "$build/bpf/les.skel.h" |
	sort -u | wc -l)
n_sunrpc=$(grep -oE 'struct bpf_program \*sunrpc_[a-z_]*;' "$build/bpf/les.skel.h" | sort -u | wc -l)

les_true "loader ran without failures" test "$status" -eq 0
les_true "the object has PtlRPC/LDLM/FUSE kprobes ($n_kprobe), fentry twins ($n_fentry), sunrpc ($n_sunrpc)" \
	test "$n_kprobe" -ge 21 -a "$n_fentry" -ge 16 -a "$n_sunrpc" -eq 12
les_true "all $n_kprobe PtlRPC/LDLM kprobe programs loaded without an opcode offset" \
	test "$(n_progs loaded kprobe -1)" -eq "$n_kprobe"
les_true "all $n_kprobe loaded with an opcode offset (opcode reader verified)" \
	test "$(n_progs loaded kprobe 32)" -eq "$n_kprobe"
if grep -q '^refused fentry EPERM' "$work/report"; then
	echo "note fentry/fexit twins: refused with EPERM on this kernel; proven in the VM (test/vm/t_rpc_lustre.sh)"
	les_true "fentry requirement ($require) allows the refusal" \
		test "${require/fentry/}" = "$require"
	les_true "fentry refusal covers all $n_fentry twins" \
		grep -q "^refused fentry EPERM $n_fentry programs" "$work/report"
else
	les_true "all $n_fentry fentry/fexit twins loaded" test "$(n_progs loaded fentry 32)" -eq "$n_fentry"
fi

if [ -e /sys/kernel/btf/sunrpc ]; then
	"$work/loadrpc" sunrpc >"$work/sunrpc" 2>"$work/sunrpc.err"
	st=$?
	cat "$work/sunrpc"
	[ $st -eq 0 ] || tail -n 40 "$work/sunrpc.err"
	les_true "sunrpc tp_btf programs loaded ($n_sunrpc)" \
		test "$st" -eq 0 -a "$(grep -c '^loaded sunrpc ' "$work/sunrpc")" -eq "$n_sunrpc"
else
	echo "note sunrpc tp_btf: skipped, sunrpc is not loaded here (no /sys/kernel/btf/sunrpc); proven in the VM (test/vm/t_rpc_nfs.sh)"
	les_true "sunrpc requirement ($require) allows the skip" test "${require/sunrpc/}" = "$require"
fi
les_done
