#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# scripts/demo, the README's main job: it streams the workload's records and
# none of the tool's own work, and whether it ends by its duration or by
# SIGTERM, nothing of it stays mounted or running.

# The demo streams any network or FUSE mount it finds instead of its own
# (as it should on a user's machine), so it runs here in a mount namespace
# of its own where such mounts of the host (a desktop's gvfs, lxcfs, a
# mount another test left) are detached: the test does not depend on what
# else the machine has mounted.
NET_FS=' - (lustre|nfs4?|fuse(\.[^ ]*)?) '
if [ -z "${LES_DEMO_OWN_NS:-}" ]; then
	LES_DEMO_OWN_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
grep -E "$NET_FS" /proc/self/mountinfo | while read -r _ _ _ _ point _; do
	echo "# detached in the test's namespace: $(printf '%b' "$point")"
	umount -l "$(printf '%b' "$point")"
done

. "$(dirname "$0")/lib.sh"
les_init 14_demo

if grep -qE "$NET_FS" /proc/self/mountinfo; then
	les_fail "a network or FUSE mount is still present: $(grep -E "$NET_FS" /proc/self/mountinfo | head -1)"
fi

nothing_left() {
	local what=$1
	grep -q '/tmp/les-demo\.' /proc/self/mountinfo &&
		les_fail "$what: a demo mount is left: $(grep '/tmp/les-demo\.' /proc/self/mountinfo)"
	pgrep -f 'les-testfs /tmp/les-demo\.' >/dev/null &&
		les_fail "$what: a demo daemon still runs: $(pgrep -af 'les-testfs /tmp/les-demo\.')"
	pgrep -f 'demo-workload' >/dev/null &&
		les_fail "$what: the demo workload still runs"
	ls -d /tmp/les-demo.* >/dev/null 2>&1 && les_fail "$what: a demo directory is left"
	les_pass "$what: nothing of the demo is left"
}

OUT=$WORK/demo.jsonl
LES_BUILD_DIR=$LES_BUILD LES_DEMO_SECONDS=5 "$LES_SRC/scripts/demo" >"$OUT" 2>"$WORK/demo.err" ||
	les_fail "demo failed: $(tail -5 "$WORK/demo.err")"
les_ge "the demo streamed access records" 10 \
	"$(jq -s '[.[] | select(.type == "access")] | length' "$OUT")"
les_eq "no record of the tool itself" 0 \
	"$(jq -s '[.[] | select((.type == "access" or .type == "rpc")
		and (.comm | startswith("lustre-ebpf-st")))] | length' "$OUT")"
nothing_left "after its duration"

LES_BUILD_DIR=$LES_BUILD LES_DEMO_SECONDS=60 "$LES_SRC/scripts/demo" >"$WORK/term.jsonl" 2>"$WORK/term.err" &
demo=$!
for _ in $(seq 100); do
	[ "$(jq -s '[.[] | select(.type == "access")] | length' "$WORK/term.jsonl" 2>/dev/null || echo 0)" -gt 0 ] && break
	sleep 0.2
done
kill -TERM "$demo"
wait "$demo"
les_eq "SIGTERM: the demo exits 143" 143 "$?"
nothing_left "after SIGTERM"
les_done
