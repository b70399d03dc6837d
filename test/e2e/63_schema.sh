#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Every line of a real capture is valid against docs/record.schema.json, and
# every field name in it is documented in the man page's FIELDS section.
# The capture holds every record type this machine can make: access, rpc
# (with a worker thread's writeback), stats (with the aggregate and
# prometheus members), window and notice (a mount going away); --file-id,
# a job and an --env-tag fill the optional fields.

. "$(dirname "$0")/lib.sh"
les_init 63_schema gzip
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null ||
	les_fail "python3-jsonschema not installed (scripts/install-deps)"
SCHEMA=$LES_SRC/docs/record.schema.json
MAN=$LES_SRC/man/lustre-ebpf-stream.8
[ -f "$SCHEMA" ] || les_fail "$SCHEMA missing"
[ -f "$MAN" ] || les_fail "$MAN missing"

M=$WORK/mnt
M2=$WORK/mnt2
les_testfs "$M" --latency-ms=1 --inject=mkdir:ENOSPC:2
les_testfs "$M2" --fsname=les-second

OUT=$WORK/all.jsonl
les_start "$OUT" --mount "$M" --mount "$M2" --file-id --env-tag LES_TAG --aggregate 1s \
	--records --prometheus 127.0.0.1:0 --stats-interval 1s
export SLURM_JOB_ID=4242 LES_TAG=blue
dd if=/dev/zero of="$M/f" bs=64k count=4 status=none
sync "$M/f"
cat "$M/f" >/dev/null
mkdir "$M/a" 2>/dev/null
mkdir "$M/b" 2>/dev/null
ls -l "$M" >/dev/null
stat "$M/nonexistent" 2>/dev/null
touch "$M2/x"
unset SLURM_JOB_ID LES_TAG
fusermount3 -u "$M2"
sleep 2.5
les_stop
les_eq "capture: exit 0" 0 "$LES_STATUS"

les_eq "capture has access, notice, rpc, stats and window lines" "access,notice,rpc,stats,window" \
	"$(jq -r '.type' "$OUT" | sort -u | paste -sd,)"
les_true "a job, a tag and file ids in the access records" \
	jq -se '[.[] | select(.type=="access" and .job_id=="4242" and .tags.LES_TAG=="blue" and .dev != null)] | length > 0' "$OUT"

cat >"$WORK/validate.py" <<'PYEOF'
import json, sys
import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
bad = 0
n = 0
for lineno, line in enumerate(open(sys.argv[2]), 1):
    n += 1
    rec = json.loads(line)
    for err in validator.iter_errors(rec):
        bad += 1
        print("line %d (%s): %s at %s" % (lineno, rec.get("type"), err.message,
              "/".join(str(p) for p in err.absolute_path)))
        if bad > 20:
            sys.exit(1)
print("%d lines, %d errors" % (n, bad))
sys.exit(1 if bad or n == 0 else 0)
PYEOF
les_true "every line is valid against docs/record.schema.json" $PY "$WORK/validate.py" "$SCHEMA" "$OUT"
les_pass "$(tail -n 1 "$WORK/check.out")"

# The schema rejects what it does not describe.
echo '{"type":"access","undocumented":1}' >"$WORK/bogus.jsonl"
if $PY "$WORK/validate.py" "$SCHEMA" "$WORK/bogus.jsonl" >/dev/null; then
	les_fail "the schema accepts an undocumented field"
fi
les_pass "the schema rejects an undocumented field"

# Field names: top-level members of every line, and members of the stats
# record's objects (not tags and errors, whose keys are data).
jq -r '(keys[]), (select(.type=="stats") | (.records, .kernel, .probe_hits, .aggregate, .inflight, .inflight.by_proto,
	.prometheus, .kafka // {}) | keys[])' "$OUT" | sort -u >"$WORK/fields"
FIELDS=$(sed -n '/^\.SH FIELDS/,/^\.SH [A-Z]/p' "$MAN" | sed 's/\\-/-/g; s/\\(em//g')
missing=""
while read -r f; do
	grep -qw -- "$f" <<<"$FIELDS" || missing="$missing $f"
done <"$WORK/fields"
les_eq "every field of the capture is in the man page's FIELDS ($(wc -l <"$WORK/fields") names)" \
	"" "$missing"

# The stream says which program and schema wrote it.
les_eq "stats records carry the program's version and the schema's" \
	"$("$LES_BIN" --version | cut -d' ' -f2) $(jq .version "$LES_SRC/docs/record.schema.json")" \
	"$(jq -r 'select(.type == "stats") | "\(.version) \(.schema_version)"' "$OUT" | sort -u)"
les_true "the schema's \$id names its version" \
	jq -e '.["$id"] | endswith("/v\(1)")' "$LES_SRC/docs/record.schema.json"
les_done
