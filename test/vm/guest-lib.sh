# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# guest-lib.sh: helpers of the tests that run inside the stock-kernel guest
# (test/vm/t_*.sh, started by run-in-vm), for them to source:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/guest-lib.sh"
#   guest_init t_name        # scratch directory $work, counters, names
#   guest_require_tool       # in the guest, tool built, jq installed
#   check "what" cmd args    # one counted check
#   guest_done               # "t_name: N passed, M failed"; the status
#
# Not a test itself: CTest takes only t_*.sh.

build=${LES_BUILD:-build}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${LES_SRC:-$(cd "$here/../.." && pwd)}
tool=$build/lustre-ebpf-stream
passed=0
failed=0
tracer_pid=
work=
guest_name=guest

# guest_init NAME: a fresh scratch directory in $work (the guest's /tmp is
# a private tmpfs).
guest_init()
{
	guest_name=$1
	work=$(mktemp -d "/tmp/$1.XXXXXX")
}

say()
{
	echo "$guest_name: $*"
}

die()
{
	say "$*"
	exit 1
}

# check WHAT COMMAND...: run COMMAND, count it as passed (saying the
# seconds it took: where a guest test's time goes) or failed; on failure
# show the tail of what it printed (all of it on success too with
# LES_TEST_VERBOSE=1). Returns COMMAND's success, so that a test can stop
# where the following checks would mean nothing.
check()
{
	local what=$1 t0 secs
	shift

	t0=$(cut -d' ' -f1 /proc/uptime)
	if "$@" >"$work/check.out" 2>&1; then
		passed=$((passed + 1))
		secs=$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')
		echo "ok   $what [$secs s]"
		[ "${LES_TEST_VERBOSE:-0}" = 1 ] && sed 's/^/     | /' "$work/check.out"
		return 0
	fi
	failed=$((failed + 1))
	echo "FAIL $what: $*"
	sed 's/^/     | /' "$work/check.out" | tail -n 40
	return 1
}

# kernel_expect FACT: what test/vm/expect says of FACT for the running
# kernel (its column is the kernel's major.minor). Dies when the kernel or
# the fact has no entry: a new kernel needs its column first.
kernel_expect()
{
	local series v

	series=$(uname -r | cut -d. -f1-2)
	v=$(awk -v s="$series" -v f="$1" '
		/^#/ || NF == 0 { next }
		$1 == "fact" { for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == f && (s in col) { print $(col[s]); exit }' "$(dirname "${BASH_SOURCE[0]}")/expect")
	[ -n "$v" ] || die "test/vm/expect has no '$1' for kernel $series"
	echo "$v"
}

# tool_refuses_method METHOD ARGS...: the tool refuses --attach METHOD
# with its reason (exit status 1), as on a kernel without module BTF.
tool_refuses_method()
{
	local method=$1 err status
	shift

	err=$(timeout 120 "$tool" --attach "$method" "$@" -o /dev/null 2>&1 </dev/null)
	status=$?
	echo "exit $status: $err"
	[ "$status" = 1 ] && grep -q "no probe can attach" <<<"$err"
}

# cell FS PLANE METHOD VERDICT: one cell of the kernel x filesystem x method
# table this test proves (VERDICT: verified, FAIL, or none: why). run-in-vm
# collects the lines for scripts/kernel-matrix.
cell()
{
	echo "LES-CELL $1 $2 $3 $4"
}

# cell_by_checks FS PLANE METHOD: verified when no check failed so far.
cell_by_checks()
{
	cell "$1" "$2" "$3" "$([ "$failed" -eq 0 ] && echo verified || echo FAIL)"
}

# guest_keep_file FILE NAME: FILE on the console, base64 between two marker
# lines, for the host: run-in-vm saves it as LES_VM_FILES/NAME (the guest's
# view of the host is read-only). NAME: letters, digits, dot, dash, underscore.
guest_keep_file()
{
	echo "LES-VM-FILE-BEGIN $2"
	base64 -w 120 "$1"
	echo "LES-VM-FILE-END $2"
}

guest_done()
{
	say "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# guest_remove_work: at exit, unless LES_KEEP=1 asks to look at it.
guest_remove_work()
{
	[ "${LES_KEEP:-0}" = 1 ] || rm -rf "$work" 2>/dev/null
}

guest_require_tool()
{
	[ "${LES_VM:-}" = 1 ] || die "not in the guest: run test/vm/run-in-vm $0"
	[ -x "$tool" ] || die "no $tool (set LES_BUILD)"
	command -v jq >/dev/null || die "jq missing"
}

# ---- a bound on each FUSE workload command -------------------------------

# What the guest test prints outside any check's capture (check sends the
# command's output to a file and shows its tail only).
exec {les_console}>&1
fuse_daemon_pid= # set by the test: the daemon whose stacks a hang shows
fuse_mnt=        # and its mount, for fuse_poke

# fuse_step COMMAND...: one workload command on a FUSE mount, bounded by
# LES_FUSE_STEP_SECS (60 s by default): a request nobody answers fails the
# test within that bound instead of holding the guest until run-in-vm's
# 600 s. On expiry fuse_step_hung tells what was stuck and the test ends
# (status 1). COMMAND runs in the background, so fuse_step must be called
# from the test's own shell, not from $(...) or a pipeline, for the exit
# to end the test. Returns COMMAND's status otherwise.
fuse_step()
{
	local secs=${LES_FUSE_STEP_SECS:-60} pid timer who st

	"$@" &
	pid=$!
	sleep "$secs" &
	timer=$!
	wait -n -p who "$pid" "$timer"
	st=$?
	if [ "$who" = "$pid" ]; then
		kill "$timer" 2>/dev/null
		wait "$timer" 2>/dev/null
		return "$st"
	fi
	fuse_step_hung "$secs" "$pid" "$*" >&"$les_console" 2>&1
	failed=$((failed + 1))
	guest_done >&"$les_console"
	exit 1
}

# fuse_waiting: "connection N: W requests waiting" for every FUSE
# connection (fusectl; mounted here when it is not yet).
fuse_waiting()
{
	local c=/sys/fs/fuse/connections d

	[ -e "$c/." ] || return 0
	mountpoint -q "$c" || mount -t fusectl fusectl "$c" 2>/dev/null
	for d in "$c"/*/; do
		[ -r "$d/waiting" ] && echo "connection ${d%/}: $(cat "$d/waiting") requests waiting" |
			sed "s|$c/||"
	done
}

# task_stacks PID: the kernel stack of each thread of PID.
task_stacks()
{
	local t

	for t in /proc/"$1"/task/*; do
		echo "-- $1/${t##*/} $(cat "$t/comm" 2>/dev/null)"
		sed 's/^/   /' "$t/stack" 2>/dev/null | head -12
	done
}

# fuse_poke PID: where the request PID waits for is. A lookup of a new
# name is a new request, and it wakes a reader, which takes the oldest
# pending request first: PID then ends if its request was still queued
# (a wakeup lost between the kernel and the daemon's readers), not if a
# daemon thread had read it (the daemon holds it, or lost its reply).
fuse_poke()
{
	timeout 10 stat "$fuse_mnt/.les-poke-$RANDOM" >/dev/null 2>&1
	sleep 1
	if kill -0 "$1" 2>/dev/null; then
		echo "a new request on $fuse_mnt did not free it: the daemon had read its request"
	else
		echo "a new request on $fuse_mnt freed it: its request was still queued, no reader woken"
	fi
}

# fuse_step_hung SECS PID WHAT: the FAIL line of a step that did not end,
# the requests the kernel still counts, the stacks of the stuck command
# (PID and its children), of the FUSE daemon (fuse_daemon_pid) and of the
# tool when one runs (tracer_pid); then
# the command is killed and every FUSE connection aborted, so that the
# test's cleanup (unmount) cannot hang in turn.
fuse_step_hung()
{
	local secs=$1 pid=$2 what=$3 p d

	echo "FAIL FUSE workload step not done within $secs s (LES_FUSE_STEP_SECS): $what"
	fuse_waiting
	echo "stuck command:"
	for p in "$pid" $(pgrep -P "$pid"); do
		task_stacks "$p"
	done
	if [ -n "$fuse_daemon_pid" ]; then
		echo "FUSE daemon:"
		task_stacks "$fuse_daemon_pid"
	fi
	if [ -n "$tracer_pid" ]; then
		echo "the tool:"
		task_stacks "$tracer_pid"
	fi
	[ -n "$fuse_mnt" ] && fuse_poke "$pid"
	kill -KILL "$pid" $(pgrep -P "$pid") 2>/dev/null
	for d in /sys/fs/fuse/connections/*/abort; do
		[ -w "$d" ] && echo 1 >"$d"
	done
}

# tracer_start SECONDS OUT ERR COMMAND...: run COMMAND (the tool with -v)
# in the background, stdout to OUT (inherited if OUT is empty), stderr to
# ERR, and wait up to SECONDS for its "probes attached" line (under TCG
# fentry loads take tens of seconds). On failure prints ERR.
tracer_start()
{
	local secs=$1 out=$2 err=$3
	shift 3

	if [ -n "$out" ]; then
		"$@" >"$out" 2>"$err" &
	else
		"$@" 2>"$err" &
	fi
	tracer_pid=$!
	for _ in $(seq 1 $((secs * 2))); do
		grep -q "probes attached" "$err" && return 0
		kill -0 "$tracer_pid" 2>/dev/null || break
		sleep 0.5
	done
	grep -q "probes attached" "$err" && return 0
	cat "$err"
	return 1
}

# tracer_hung PID: what a tool that does not end after SIGINT is doing (its
# threads' kernel stacks, its stderr's end, the kernel log's end), then
# SIGKILL: a hang is told and the test goes on, instead of waiting for
# run-in-vm's timeout with nothing said.
tracer_hung()
{
	local t

	echo "tool (pid $1) still running ${LES_TRACER_STOP_SECS:-120} s after SIGINT; its threads:"
	for t in /proc/"$1"/task/*; do
		echo "-- ${t##*/} $(cat "$t/comm" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null | head -12
	done
	dmesg | tail -20
	kill -KILL "$1"
}

# tracer_stop: SIGINT the tool and wait for it (LES_TRACER_STOP_SECS, 120
# by default: detaching fentry links under TCG takes seconds); returns its
# exit status, 137 when it had to be killed.
tracer_stop()
{
	local st

	kill -INT "$tracer_pid"
	for _ in $(seq 1 $((${LES_TRACER_STOP_SECS:-120} * 4))); do
		kill -0 "$tracer_pid" 2>/dev/null || break
		sleep 0.25
	done
	kill -0 "$tracer_pid" 2>/dev/null && tracer_hung "$tracer_pid"
	wait "$tracer_pid"
	st=$?
	tracer_pid=
	return $st
}

# tracer_exited_ok STATUS ERR: the tool's exit status (tracer_stop's) was 0,
# as it must be after SIGINT when nothing was lost (man page, EXIT STATUS:
# 1 for lines lost to write errors or never delivered); else the status and
# the end of its stderr ERR.
tracer_exited_ok()
{
	[ "$1" = 0 ] && return 0
	echo "exit status $1; the end of its stderr:"
	tail -n 15 "$2"
	return 1
}

# tracer_kill: for cleanup, stop the tool if one is still running.
tracer_kill()
{
	[ -n "$tracer_pid" ] && kill -INT "$tracer_pid" 2>/dev/null && wait "$tracer_pid"
	tracer_pid=
}

# schema_valid FILE: every line of a capture valid against
# docs/record.schema.json.
schema_valid()
{
	python3 - "$src/docs/record.schema.json" "$1" <<'PYEOF'
import json, sys
import jsonschema

validator = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
bad = 0
for n, line in enumerate(open(sys.argv[2]), 1):
    for e in validator.iter_errors(json.loads(line)):
        bad += 1
        if bad <= 5:
            print("line %d: %s: %s" % (n, list(e.absolute_path), e.message[:300]))
print("%d lines, %d errors" % (n, bad))
sys.exit(1 if bad else 0)
PYEOF
}

# ---- the Lustre stand-in module (test/vm/lustre) ----------------------------

lustre_mod=les_lustre_standin
lustre_params=/sys/module/$lustre_mod/parameters

# param NAME: a module parameter's value.
param()
{
	local value

	read -r value <"$lustre_params/$1" && echo "$value"
}

# set_param NAME VALUE
set_param()
{
	echo "$2" >"$lustre_params/$1"
}

# The module from $LES_LUSTRE_KO, else from build-module's cache (filled on
# the host), else built here.
find_module()
{
	if [ -n "${LES_LUSTRE_KO:-}" ]; then
		echo "$LES_LUSTRE_KO"
		return
	fi
	"$here/lustre/build-module" --no-build 2>/dev/null && return
	say "module not prebuilt; building it in the guest (slow under TCG)" >&2
	"$here/lustre/build-module"
}
