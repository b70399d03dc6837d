#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Least privilege: after attaching, every thread of the tool holds only the
# capabilities docs/security.md lists (cap_dac_read_search, cap_sys_ptrace;
# cap_bpf too on kernels that check it on map fds), no_new_privs is set, and
# enrichment still reads another user's environment. Output and config
# paths others could write are refused. The systemd unit verifies, and its
# capability bounding set is enough to start and record.

. "$(dirname "$0")/lib.sh"
les_init 55_privileges setpriv capsh

M=$WORK/mnt
les_testfs "$M"
chmod 1777 "$M"
echo hello >"$M/f"

# Mask of cap_dac_read_search (2) and cap_sys_ptrace (19).
DOC_CAPS=0000000000080004
CAP_BPF_BIT=$((1 << 39))

# A process of another user, started before the tool and never exec'ing
# again: only the start-up scan, which reads its /proc/PID/environ after the
# drop, can learn its job. It reads the file with a shell builtin.
env SLURM_JOB_ID=scan-55 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	bash -c 'sleep 6; read -r line <"$0"' "$M/f" &
SCANNED=$!
sleep 0.2
# Without capabilities, root cannot read it: the kept ones are needed.
if setpriv --inh-caps=-all --bounding-set=-all cat "/proc/$SCANNED/environ" >/dev/null 2>&1; then
	les_fail "root without capabilities read another user's environ: the test proves nothing"
fi
les_pass "root without capabilities cannot read another user's /proc/PID/environ"

les_start "$WORK/out.jsonl" --mount "$M"
caps_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

expected=$DOC_CAPS
if grep -q "cap_bpf" "$WORK/out.jsonl.err"; then
	expected=$(printf '%016x' $((16#$DOC_CAPS | CAP_BPF_BIT)))
	major=$(uname -r | cut -d. -f1)
	minor=$(uname -r | cut -d. -f2)
	[ "$major" -lt 6 ] || { [ "$major" -eq 6 ] && [ "$minor" -lt 5 ]; } ||
		les_fail "cap_bpf kept on $(uname -r): kernels since 6.5 need no capability on map fds"
fi
les_eq "CapEff of the tool is the documented set" "$expected" "$(caps_of "$LES_PID" CapEff)"
les_eq "CapPrm equals CapEff" "$expected" "$(caps_of "$LES_PID" CapPrm)"
les_eq "CapBnd equals CapEff" "$expected" "$(caps_of "$LES_PID" CapBnd)"
les_eq "no inheritable capabilities" 0000000000000000 "$(caps_of "$LES_PID" CapInh)"
les_eq "no ambient capabilities" 0000000000000000 "$(caps_of "$LES_PID" CapAmb)"
les_eq "NoNewPrivs" 1 "$(caps_of "$LES_PID" NoNewPrivs)"
bad=0
ntasks=0
for st in /proc/"$LES_PID"/task/*/status; do
	ntasks=$((ntasks + 1))
	[ "$(awk '$1 == "CapEff:" { print $2 }' "$st")" = "$expected" ] || bad=$((bad + 1))
done
les_eq "every one of the $ntasks threads holds only that set" 0 "$bad"
les_true "capsh decodes it" sh -c "capsh --decode=$expected | grep -q cap_sys_ptrace"
les_true "no warning about threads started before the drop" \
	sh -c "! grep -q 'started before the drop' '$WORK/out.jsonl.err'"

env SLURM_JOB_ID=exec-55 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	cat "$M/f" >/dev/null || les_fail "cat as nobody failed"
wait "$SCANNED"
sleep 0.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"
OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }
les_eq "records after the drop: a read of the scanned process" true \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .comm=="bash" and .job_id=="scan-55")] | length > 0')"
les_eq "its job came from its environment (read after the drop)" true \
	"$(q '[.[] | select(.type=="access" and .job_id=="scan-55")] | length > 0 and all(.job_source=="env" and .username=="nobody")')"
les_eq "a process started later: job from its exec notice" true \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .job_id=="exec-55")] | length > 0')"
les_eq "output file created 0640" 640 "$(stat -c %a "$OUT")"

# --no-enrich needs nothing at all; --keep-caps keeps everything.
les_start "$WORK/noenrich.jsonl" --mount "$M" --no-enrich
les_eq "--no-enrich: CapEff empty" 0000000000000000 "$(caps_of "$LES_PID" CapEff)"
les_eq "--no-enrich: NoNewPrivs" 1 "$(caps_of "$LES_PID" NoNewPrivs)"
les_stop
les_eq "--no-enrich: exit status" 0 "$LES_STATUS"
les_start "$WORK/keep.jsonl" --mount "$M" --keep-caps
les_eq "--keep-caps: capabilities kept" "$(caps_of $$ CapEff)" "$(caps_of "$LES_PID" CapEff)"
les_stop
les_eq "--keep-caps: exit status" 0 "$LES_STATUS"

# Paths others can write are refused before anything is loaded.
mkdir "$WORK/open" && chmod 0777 "$WORK/open"
"$LES_BIN" --mount "$M" -o "$WORK/open/out.jsonl" --duration 1s 2>"$WORK/err1"
les_eq "world-writable directory without sticky bit: exit 1" 1 "$?"
les_eq "... with one line on stderr" 1 "$(wc -l <"$WORK/err1")"
les_true "... naming the problem" grep -q "anyone can write" "$WORK/err1"
les_true "... and nothing was created" test ! -e "$WORK/open/out.jsonl"
touch "$WORK/gw.jsonl" && chmod 0664 "$WORK/gw.jsonl"
"$LES_BIN" --mount "$M" -o "$WORK/gw.jsonl" --duration 1s 2>"$WORK/err2"
les_eq "group-writable output file: exit 1" 1 "$?"
les_true "... with a clear message" grep -q "refusing a file others can write" "$WORK/err2"
touch "$WORK/nobody.jsonl" && chown nobody "$WORK/nobody.jsonl" && chmod 0600 "$WORK/nobody.jsonl"
"$LES_BIN" --mount "$M" -o "$WORK/nobody.jsonl" --duration 1s 2>"$WORK/err3"
les_eq "output file owned by another user: exit 1" 1 "$?"
printf 'stats-interval = 5s\n' >"$WORK/les.conf" && chmod 0666 "$WORK/les.conf"
"$LES_BIN" --config "$WORK/les.conf" --mount "$M" --duration 1s 2>"$WORK/err4"
les_eq "world-writable config file: exit 2 (a restart cannot fix it)" 2 "$?"
les_true "... naming --config" grep -q -- "--config" "$WORK/err4"

# The unit: systemd-analyze verify (with ExecStart pointing at this build),
# then the tool started with the unit's bounding set and no_new_privs.
UNIT=$LES_BUILD/lustre-ebpf-stream.service
[ -f "$UNIT" ] || les_fail "$UNIT missing"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$WORK/unit"
	sed "s|^ExecStart=/[^ ]*/lustre-ebpf-stream|ExecStart=$LES_BIN|" "$UNIT" \
		>"$WORK/unit/lustre-ebpf-stream.service"
	systemd-analyze verify --man=no "$WORK/unit/lustre-ebpf-stream.service" >"$WORK/verify" 2>&1
	les_eq "systemd-analyze verify: no complaint about the unit" "" \
		"$(grep 'lustre-ebpf-stream.service' "$WORK/verify")"
fi
bset=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_//g' |
	sed 's/ \+/,+/g; s/^/-all,+/')
grep -q '^NoNewPrivileges=yes' "$UNIT" || les_fail "unit lacks NoNewPrivileges=yes"
setpriv --bounding-set="$bset" --inh-caps=-all --no-new-privs \
	"$LES_BIN" -o "$WORK/unit.jsonl" -v --mount "$M" 2>"$WORK/unit.jsonl.err" &
LES_PID=$!
_les_pids+=("$LES_PID")
for i in $(seq 1 300); do
	grep -q "probes attached" "$WORK/unit.jsonl.err" && break
	kill -0 "$LES_PID" 2>/dev/null || les_fail "tool with the unit's bounding set ($bset) exited: $(cat "$WORK/unit.jsonl.err")"
	sleep 0.1
done
cat "$M/f" >/dev/null
sleep 0.3
les_stop
les_eq "with the unit's bounding set: exit status" 0 "$LES_STATUS"
les_eq "with the unit's bounding set: records written" true \
	"$(les_jq "$WORK/unit.jsonl" '[.[] | select(.type=="access" and .comm=="cat")] | length > 0')"

les_done
