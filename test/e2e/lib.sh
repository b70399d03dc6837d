# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Shared helpers of the end-to-end tests: root check, a scratch directory,
# the test filesystem, the tool started in the background and stopped,
# checks that count and stop at the first failure, cleanup on exit.
#
# A test sources this file, then calls les_init NAME.

set -u

LES_SRC=${LES_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
LES_BIN=$LES_BUILD/lustre-ebpf-stream
LES_TESTFS=$LES_BUILD/les-testfs

_les_name=test
_les_passed=0
_les_mounts=()
_les_pids=()
WORK=

les_fail() {
	echo "FAIL ($_les_name): $*" >&2
	exit 1
}

les_pass() {
	_les_passed=$((_les_passed + 1))
	echo "ok $_les_passed - $*"
}

_les_cleanup() {
	local p m
	for p in "${_les_pids[@]}"; do
		kill -INT "$p" 2>/dev/null
	done
	for p in "${_les_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	for m in "${_les_mounts[@]}"; do
		mountpoint -q "$m" && { fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; }
	done
	[ -n "${LES_KEEP:-}" ] || rm -rf "$WORK"
}

# les_init NAME [TOOL...]: root, binaries, scratch dir, cleanup trap.
les_init() {
	_les_name=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		echo "$_les_name: must run as root (loads BPF programs, mounts FUSE)" >&2
		exit 1
	fi
	for f in "$LES_BIN" "$LES_TESTFS"; do
		[ -x "$f" ] || { echo "$_les_name: $f not built" >&2; exit 1; }
	done
	for t in jq fusermount3 mountpoint "$@"; do
		command -v "$t" >/dev/null ||
			{ echo "$_les_name: $t not installed (scripts/install-deps)" >&2; exit 1; }
	done
	WORK=$(mktemp -d /tmp/les-e2e.XXXXXX)
	chmod 755 "$WORK"
	trap _les_cleanup EXIT
}

# les_testfs DIR [OPTIONS...]: mount the test filesystem on DIR (created).
les_testfs() {
	local dir=$1
	shift
	mkdir -p "$dir"
	"$LES_TESTFS" "$dir" "$@" >"$WORK/testfs.log" 2>&1 ||
		les_fail "les-testfs $dir $*: $(cat "$WORK/testfs.log")"
	_les_mounts+=("$dir")
	mountpoint -q "$dir" || les_fail "les-testfs did not mount $dir"
}

# les_track_mount DIR: unmount DIR at exit.
les_track_mount() {
	_les_mounts+=("$1")
}

# les_wait_ready PID ERR [SECONDS]: wait (30 s at most, or SECONDS) until
# the tool started -v as PID (stderr in ERR) has its probes attached; it is
# stopped at exit.
les_wait_ready() {
	local i secs=${3:-30}
	_les_pids+=("$1")
	for i in $(seq 1 $((secs * 10))); do
		grep -q "probes attached" "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || les_fail "tool exited at start: $(cat "$2")"
		sleep 0.1
	done
	les_fail "tool not ready after $secs s: $(cat "$2")"
}

# les_start OUT [OPTIONS...]: start the tool writing to OUT; waits until its
# probes are attached. Sets LES_PID.
les_start() {
	local out=$1
	shift
	"$LES_BIN" -o "$out" -v "$@" 2>"$out.err" &
	LES_PID=$!
	les_wait_ready "$LES_PID" "$out.err"
}

# les_stop: SIGINT the tool and wait; LES_STATUS gets its exit status.
les_stop() {
	kill -INT "$LES_PID" 2>/dev/null
	wait "$LES_PID"
	LES_STATUS=$?
}

# les_eq DESCRIPTION EXPECTED ACTUAL
les_eq() {
	[ "$2" = "$3" ] || les_fail "$1: expected '$2', got '$3'"
	les_pass "$1 ($3)"
}

# les_ge DESCRIPTION MIN ACTUAL (integers)
les_ge() {
	[ "$3" -ge "$2" ] 2>/dev/null || les_fail "$1: expected >= $2, got '$3'"
	les_pass "$1 ($3 >= $2)"
}

# les_true DESCRIPTION COMMAND...
les_true() {
	local what=$1
	shift
	"$@" >"$WORK/check.out" 2>&1 || les_fail "$what: '$*': $(head -c 2000 "$WORK/check.out")"
	les_pass "$what"
}

# les_jq FILE FILTER: run jq over the JSON Lines file as one array.
les_jq() {
	jq -s -r "$2" "$1"
}

les_done() {
	echo "$_les_passed passed, 0 failed"
}

# les_dashboard_rules EXPRS: the dashboard's queries (a file, one a line) as
# Prometheus recording rules on stdout, its variables filled in, so that
# promtool check rules parses each one.
les_dashboard_rules() {
	local e n=0
	echo "groups:"
	echo "  - name: dashboard"
	echo "    rules:"
	while IFS= read -r e; do
		n=$((n + 1))
		e=${e//\$__rate_interval/5m}
		e=${e//\$topn/10}
		e=$(sed 's/\$[a-z_]*/.*/g' <<<"$e")
		printf '      - record: dashboard:q%d\n        expr: %s\n' "$n" "$(jq -Rn --arg e "$e" '$e')"
	done <"$1"
}

# les_as_job JOB COMMAND...: run COMMAND as nobody in Slurm job JOB.
les_as_job() {
	local job=$1
	shift
	env SLURM_JOB_ID="$job" setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# les_two_jobs FILE K NW NR EVERY: the two jobs' workload the window tests
# share. Job 101 writes NW blocks of K bytes to FILE; after 2.2 s (its ops
# in a window of their own at 2 s) job 102 reads NR blocks back, and
# checks that exactly every EVERY-th read failed with EIO, as the test
# filesystem was told to inject (--inject=read:EIO:EVERY with --direct-io).
les_two_jobs() {
	local file=$1 k=$2 nw=$3 nr=$4 every=$5

	les_as_job 101 dd if=/dev/zero of="$file" bs="$k" count="$nw" status=none ||
		les_fail "workload: dd failed"
	sleep 2.2
	les_as_job 102 /usr/bin/python3 - "$file" "$nr" "$k" "$every" <<'EOF' ||
import os, sys
path, n, k, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(path, os.O_RDONLY)
failed = 0
for i in range(n):
    try:
        os.pread(fd, k, i * k)
    except OSError as e:
        assert e.errno == 5, e
        failed += 1
os.close(fd)
assert failed == n // every, failed
EOF
		les_fail "workload: reads failed"
	sleep 0.5
}

# les_collector_cleanup: the EXIT trap of the OTLP tests (73, 75): the load
# generators in LOAD_PIDS, the tool and its mounts, and every collector
# (scripts/jaeger-test-collector, $JAEGER) started under $JDIR, also after a
# failure; JDIR kept with LES_KEEP.
les_collector_cleanup() {
	local p d

	for p in "${LOAD_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	_les_cleanup
	for d in "$JDIR"/*/; do
		"$JAEGER" stop --dir "${d%/}" >/dev/null 2>&1
	done
	[ -n "${LES_KEEP:-}" ] || rm -rf "$JDIR"
}
