#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The incident report (lustre-ebpf-stream report CAPTURE -o report.html),
# from a real capture of a known workload on the test filesystem, opened
# in headless Chromium:
#   - four instances attach at once: A captures the records (gzip), B, C
#     and D write --aggregate 2s windows by job_id, username and process;
#   - two Slurm jobs as nobody: job 101 writes with dd, job 102 reads with
#     python3; every 10th request takes 60 ms, the others 1 ms, and every
#     5th read fails with EIO;
#   - the report of A's capture renders without a script error or a
#     console message, every chart drawn (SVG), nothing fetched;
#   - its top tables, as the browser shows them, equal B's, C's and D's
#     windows summed, and jq's sums over the capture;
#   - its series, heatmap and waits add up to the capture's records; the
#     slowest op is one of the slow requests', with its chain the records
#     of that op_id;
#   - bad input: a missing file, a corrupt line, a corrupt and a cut gzip
#     stream, a missing script, usage errors: one line and the documented
#     exit status.
# The page's screenshot goes to build/report.png (docs/report.png is one).

. "$(dirname "$0")/lib.sh"
les_init 74_report chromium python3 setpriv gzip

JS=$("$LES_SRC/scripts/fetch-report-js") || les_fail "fetch-report-js"
M=$WORK/mnt
NW=20 # writes of K bytes by job 101
NR=15 # reads of K bytes by job 102; every 5th fails with EIO
K=4096
les_testfs "$M" --direct-io --latency-ms=1 --slow-every=10 --slow-ms=60 --inject=read:EIO:5
chmod 1777 "$M"
NOBODY=$(id -u nobody)

start() { # NAME OUT OPTIONS...: start one instance, remember its pid
	local name=$1 out=$2
	shift 2
	les_start "$out" --mount "$M" --uid "$NOBODY" --stats-interval 0 "$@"
	eval "PID_$name=$LES_PID"
}
CAP=$WORK/capture.jsonl.gz
start A "$CAP"
start B "$WORK/B.jsonl" --aggregate 2s --group-by job_id
start C "$WORK/C.jsonl" --aggregate 2s --group-by username
start D "$WORK/D.jsonl" --aggregate 2s --group-by process
les_pass "four instances attached"

les_two_jobs "$M/data" $K $NW $NR 5
for name in A B C D; do
	LES_PID=$(eval echo "\$PID_$name")
	les_stop
	les_eq "instance $name exit status" 0 "$LES_STATUS"
done
zcat "$CAP" >"$WORK/capture.jsonl" || les_fail "the capture is not gzip"
q() { les_jq "$WORK/capture.jsonl" "$1"; }
les_eq "capture: writes of job 101" $NW \
	"$(q '[.[] | select(.type=="access" and .op=="write" and .job_id=="101")] | length')"
les_eq "capture: reads of job 102" $NR \
	"$(q '[.[] | select(.type=="access" and .op=="read" and .job_id=="102")] | length')"

# --- the report ----------------------------------------------------------------

R=$WORK/report.html
"$LES_BIN" report "$CAP" -o "$R" --window 2s --by user,process --js-dir "$JS" 2>"$WORK/report.err"
les_eq "report: exit status" 0 $?
les_eq "report: one line on stderr" 1 "$(wc -l <"$WORK/report.err")"
les_true "report: it says what it read" grep -q "records, .* windows of 2 s; skipped 0 malformed" "$WORK/report.err"
# Elements that load something (a script's text is text to the parser).
les_eq "report: no element loads anything" "[]" "$(python3 - "$R" <<'PY'
import sys
from html.parser import HTMLParser
class Loads(HTMLParser):
    found = []
    def handle_starttag(self, tag, attrs):
        self.found += [tag + " " + k for k, v in attrs if k in ("src", "href", "srcset", "data")]
p = Loads(); p.feed(open(sys.argv[1], encoding="utf-8").read()); print(p.found)
PY
)"
les_true "report: a policy that forbids fetching" grep -q "default-src 'none'" "$R"

# The page's data, as the browser parses it.
python3 - "$R" >"$WORK/data.json" <<'EOF' || les_fail "report: no data in the page"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="les-data">(.*?)</script>', page, re.S)
json.dump(json.loads(m.group(1)), sys.stdout)
EOF
d() { jq -r "$1" "$WORK/data.json"; }

# --- rendered in headless Chromium ----------------------------------------------

# Console messages (errors, failed fetches refused by the policy) are
# INFO:CONSOLE lines on stderr with --enable-logging=stderr.
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$WORK/chrome" --enable-logging=stderr --v=0 \
		--virtual-time-budget=15000 "$@" "file://$R"
}
chrome --dump-dom >"$WORK/dom.html" 2>"$WORK/chrome.err" || les_fail "chromium: $(tail -n 3 "$WORK/chrome.err")"
les_eq "chromium: no console message (script errors, refused fetches)" "" \
	"$(grep -a 'CONSOLE' "$WORK/chrome.err" | head -n 5)"
les_eq "chromium: the page counted no error" "" \
	"$(grep -o 'data-errors="[0-9]*"' "$WORK/dom.html")"
SERIES_CHARTS=$(d '[.series[].dim] | unique | length * 2')
HEAT_CHARTS=$(d '[.heat[].op] | unique | length')
WAIT_CHARTS=$(d 'if (.waits | length) > 0 then 1 else 0 end')
CHARTS=$((SERIES_CHARTS + HEAT_CHARTS + WAIT_CHARTS + $(d '.slow | length')))
les_eq "chromium: every chart rendered" "data-charts=\"$CHARTS\"" \
	"$(grep -o 'data-charts="[0-9]*"' "$WORK/dom.html")"
les_ge "chromium: an SVG per chart" "$CHARTS" "$(grep -o '<svg' "$WORK/dom.html" | wc -l)"
les_eq "series: job, user and process charted (--by user,process)" '["job","process","user"]' \
	"$(d '[.series[].dim] | unique | tojson')"
les_true "chromium: the jobs are named in the charts' legends" \
	grep -q '>101</text>' "$WORK/dom.html"

# The tables the browser built, as {table id: [{column: text}]}.
python3 - "$WORK/dom.html" >"$WORK/tables.json" <<'EOF' || les_fail "the tables of the page"
import json, sys
from html.parser import HTMLParser
class Tables(HTMLParser):
    def __init__(self):
        super().__init__(); self.t = {}; self.id = None; self.row = None; self.col = None
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag == "table": self.id = a.get("id"); self.t[self.id] = []
        elif tag == "td" and self.id: self.col = a.get("data-col"); self.row[self.col] = ""
        elif tag == "tr" and self.id: self.row = {}
    def handle_endtag(self, tag):
        if tag == "tr" and self.id and self.row: self.t[self.id].append(self.row)
        if tag == "table": self.id = None
        if tag == "td": self.col = None
    def handle_data(self, s):
        if self.col: self.row[self.col] += s
p = Tables(); p.feed(open(sys.argv[1], encoding="utf-8").read()); json.dump(p.t, sys.stdout)
EOF
t() { jq -r "$1" "$WORK/tables.json"; }

# --- its numbers against --aggregate and against jq ----------------------------------

# A table as {key: {ops, bytes, errors}}, keys as the page writes them.
TABLE='map({key: .[$c], value: {ops: (.ops | tonumber), bytes: (.bytes | tonumber), errors: (.errors | tonumber)}}) | from_entries'
# An instance's access windows summed per FIELD, the same shape; null is "(none)".
windows() { # FILE FIELD
	les_jq "$1" "[.[] | select(.type==\"window\" and .record_type==\"access\")]
		| group_by(.$2) | map({key: (.[0].$2 // \"(none)\" | tostring),
			value: {ops: (map(.count) | add), bytes: (map(.bytes) | add),
				errors: ([.[].errors[]] | add // 0)}}) | from_entries"
}
# The capture's access records summed per FIELD by jq, the same shape.
records() { # FIELD
	q "[.[] | select(.type==\"access\")] | group_by(.$1)
		| map({key: (.[0].$1 // \"(none)\" | tostring), value: {ops: length,
			bytes: (map(.bytes) | add), errors: (map(select(.errno_class != null)) | length)}})
		| from_entries"
}
check_top() { # DIM TABLE_COLUMN FIELD INSTANCE_FILE
	local shown
	shown=$(t ".\"top-$1\" | $(sed "s/\$c/\"$2\"/" <<<"$TABLE")" | jq -S -c .)
	les_eq "top $1s as shown == instance's --aggregate windows by $3, summed" \
		"$(windows "$4" "$3" | jq -S -c .)" "$shown"
	les_eq "top $1s as shown == jq over the capture's records" "$(records "$3" | jq -S -c .)" \
		"$shown"
}
check_top job job job_id "$WORK/B.jsonl"
check_top user user username "$WORK/C.jsonl"
check_top process process process "$WORK/D.jsonl"
les_eq "top jobs: the bytes of job 101 (written) and 102 (read, the failed reads none)" "$((NW * K)) $(((NR - NR / 5) * K))" \
	"$(t '[.["top-job"][] | select(.job=="101" or .job=="102")] | sort_by(.job) | map(.bytes) | join(" ")')"
les_eq "top jobs: job 102's EIO reads" $((NR / 5)) "$(t '.["top-job"][] | select(.job=="102") | .errors')"
les_eq "top jobs: the busiest first" true \
	"$(t '[.["top-job"][].ops | tonumber] | . == (sort | reverse)')"

les_eq "series: job ops per window sum to the access records" \
	"$(q '[.[] | select(.type=="access")] | length')" \
	"$(d '[.series[] | select(.dim=="job") | .ops] | add')"
les_eq "series: windows of 2 s, starting on even seconds" true \
	"$(d '[.series[].t] | all(. % 2000 == 0)')"
les_eq "heatmap: ops per op == access records per op" \
	"$(q '[.[] | select(.type=="access")] | group_by(.op) | map({key: .[0].op, value: length}) | from_entries | tojson')" \
	"$(d '.heat | group_by(.op) | map({key: .[0].op, value: (map(.n) | add)}) | from_entries | tojson')"
les_eq "heatmap: every op inside its octave's bounds" true \
	"$(d '[.heat[] | .hi == 2 * .lo] | all')"
les_eq "waits: requests and wait time by target == the capture's rpc records" \
	"$(q '[.[] | select(.type=="rpc")] | "\(length) \(map(.latency_ns) | add)"')" \
	"$(d '"\(.waits | map(.n) | add) \(.waits | map(.wait_ns) | add)"')"

# --- the slowest ops and their chains ----------------------------------------------

SLOW_ID=$(d '.slow[0].op_id')
les_eq "slowest op: the capture's slowest access op" \
	"$(q '[.[] | select(.type=="access")] | max_by(.latency_ns) | .latency_ns')" \
	"$(d '.slow[0].latency_ns')"
les_ge "slowest op: it waited on a 60 ms request (ms)" 60 "$(d '.slow[0].latency_ns / 1000000 | floor')"
les_eq "slowest op: its chain is the capture's records of op_id $SLOW_ID" \
	"$(q "[.[] | select((.type==\"rpc\" or .type==\"rpc_event\") and .parent_op_id==$SLOW_ID)] | length")" \
	"$(d '.slow[0].chain | length')"
les_eq "slowest op: the chain's request ids" \
	"$(q "[.[] | select(.type==\"rpc\" and .parent_op_id==$SLOW_ID) | .req_id] | sort | tojson")" \
	"$(d '[.slow[0].chain[] | select(.type=="rpc") | .req_id] | sort | tojson')"
les_ge "slowest op: a 60 ms request in its chain (ms)" 60 \
	"$(d '[.slow[0].chain[].latency_ns] | max / 1000000 | floor')"
les_eq "slowest op: the chain in start order, inside the op (1 ms of slack)" true \
	"$(d '.slow[0] as $o | [.slow[0].chain[].start_us] == ([.slow[0].chain[].start_us] | sort)
		and ([$o.chain[] | .start_us >= -1000 and .end_us <= $o.latency_ns / 1000 + 1000] | all)')"
les_eq "slowest ops: listed as shown, slowest first" true \
	"$(t '[.["slow-ops"][].ms | tonumber] | . == (sort | reverse)')"
les_eq "slowest ops: chain table of #1 has the chain's rows" "$(d '.slow[0].chain | length')" \
	"$(t '.["chain-1"] | length')"

chrome --screenshot="$WORK/report.png" --window-size=1280,2600 2>/dev/null ||
	les_fail "chromium --screenshot"
les_true "screenshot: a PNG" sh -c "head -c 8 '$WORK/report.png' | od -c | grep -q 'P   N   G'"
cp "$WORK/report.png" "$LES_BUILD/report.png"
les_pass "screenshot in $LES_BUILD/report.png ($(stat -c %s "$WORK/report.png") bytes)"

# --- bad input: one line on stderr, the documented exit status --------------------------

rep() { # EXPECTED_STATUS DESCRIPTION ARGS...: run report, check status and one line
	local want=$1 what=$2 st
	shift 2
	"$LES_BIN" report "$@" 2>"$WORK/bad.err"
	st=$?
	les_eq "$what: exit status" "$want" "$st"
	les_eq "$what: one line on stderr" 1 "$(wc -l <"$WORK/bad.err")"
}
rep 1 "missing capture" "$WORK/nothing.jsonl" -o "$WORK/x.html" --js-dir "$JS"
les_true "missing capture: no page" test ! -e "$WORK/x.html"
{ head -n 5 "$WORK/capture.jsonl"; echo '{"type":"access","ts":'; echo 'not json'; tail -n +6 "$WORK/capture.jsonl"; } >"$WORK/corrupt.jsonl"
rep 0 "two corrupt lines" "$WORK/corrupt.jsonl" -o "$WORK/c.html" --js-dir "$JS"
les_true "two corrupt lines: counted as malformed" grep -q "skipped 2 malformed" "$WORK/bad.err"
head -c 3000 "$CAP" >"$WORK/cut.jsonl.gz"
rep 0 "a cut gzip stream" "$WORK/cut.jsonl.gz" -o "$WORK/cut.html" --js-dir "$JS"
les_true "a cut gzip stream: said so" grep -q "gzip stream ends early" "$WORK/bad.err"
python3 -c "
import sys; b = bytearray(open(sys.argv[1], 'rb').read())
for i in range(200, 400): b[i] ^= 0x5a
open(sys.argv[2], 'wb').write(b)" "$CAP" "$WORK/bad.jsonl.gz"
rep 1 "a corrupt gzip stream" "$WORK/bad.jsonl.gz" -o "$WORK/bad.html" --js-dir "$JS"
les_true "a corrupt gzip stream: no page" test ! -e "$WORK/bad.html"
rep 1 "no scripts" "$CAP" -o "$WORK/nojs.html" --js-dir "$WORK/none"
rep 2 "no capture named" -o "$WORK/x.html"
rep 2 "--by a word of no dimension" "$CAP" --by group
rep 2 "--window of an unknown unit" "$CAP" --window 2x
rep 2 "an unknown option" "$CAP" --colour

les_done
