#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The consumer under valgrind: a short workload with enrichment (exec
# notices, environments, user names), mounts changing, a stats interval,
# then SIGINT. No definite leak, no memory error (the only suppression:
# 52_valgrind.supp, valgrind's own view of bpf(2) attributes). Slow: the
# BTF parsing at start-up runs some 30 times slower under valgrind.

. "$(dirname "$0")/lib.sh"
les_init 52_valgrind valgrind

# Valgrind cannot run an ASan binary (scripts/sanitize-test's build).
if ldd "$LES_BIN" 2>/dev/null | grep -q libasan || nm "$LES_BIN" 2>/dev/null | grep -q __asan_init; then
	echo "skipped: $LES_BIN is built with AddressSanitizer, which valgrind cannot run"
	les_done
	exit 0
fi

M=$WORK/mnt
les_testfs "$M"
echo data >"$M/f"
LOG=$WORK/valgrind.log
ERR=$WORK/stderr
valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
	--trace-children=no --suppressions="$LES_SRC/test/e2e/52_valgrind.supp" \
	--log-file="$LOG" "$LES_BIN" --mount "$M" -o "$WORK/out.jsonl" -v \
	--stats-interval 1s --env-tag PROJECT 2>"$ERR" &
LES_PID=$!
_les_pids+=("$LES_PID")
for i in $(seq 1 1800); do
	grep -q "probes attached" "$ERR" 2>/dev/null && break
	kill -0 "$LES_PID" 2>/dev/null || les_fail "tool exited at start: $(cat "$ERR" "$LOG")"
	sleep 0.1
done
grep -q "probes attached" "$ERR" || les_fail "not ready after 180 s under valgrind"
for i in $(seq 1 20); do
	env SLURM_JOB_ID=vg-$i PROJECT=p$i cat "$M/f" >/dev/null
	echo "$i" >"$M/w$i"
done
les_testfs "$WORK/other" # a mount table change: one more notice path
sleep 2.5
les_stop
les_eq "exit status under valgrind (99: valgrind found errors)" 0 "$LES_STATUS"
les_true "valgrind wrote its summary" grep -q "ERROR SUMMARY" "$LOG"
les_eq "no errors" 0 "$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$LOG")"
# lost KIND: bytes valgrind counts as KIND lost (0 when it says no leak is possible).
lost() {
	if grep -q "no leaks are possible" "$LOG"; then
		echo 0
	else
		sed -n "s/.*$1 lost: \([0-9,]*\) bytes.*/\1/p" "$LOG" | tr -d ,
	fi
}
les_eq "definitely lost" 0 "$(lost definitely)"
les_eq "indirectly lost" 0 "$(lost indirectly)"
les_eq "the run recorded the workload" 20 \
	"$(les_jq "$WORK/out.jsonl" '[.[] | select(.type=="access" and .op=="read" and .comm=="cat" and .bytes > 0 and (.job_id | startswith("vg-")))] | length')"

les_done
