#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The man page renders without a single groff warning, has the sections an
# admin looks for, and documents every option --help lists. (The fields of
# a real capture are checked against its FIELDS section in 63_schema.sh.)

. "$(dirname "$0")/lib.sh"
les_init 60_man man groff
MAN=$LES_SRC/man/lustre-ebpf-stream.8
[ -f "$MAN" ] || les_fail "$MAN missing"

MANWIDTH=80 man --warnings -l "$MAN" >"$WORK/man.txt" 2>"$WORK/man.err"
les_eq "man --warnings -l renders" 0 $?
les_eq "no warnings" "" "$(cat "$WORK/man.err")"
for width in 60 200; do
	MANWIDTH=$width man --warnings -l "$MAN" 2>&1 >/dev/null | grep . >"$WORK/w.err"
	les_eq "no warnings at $width columns" "" "$(cat "$WORK/w.err")"
done

for s in NAME SYNOPSIS DESCRIPTION OPTIONS "CONFIGURATION FILE" FIELDS SIGNALS EXAMPLES \
	"EXIT STATUS" OVERHEAD FILES "SEE ALSO"; do
	grep -q "^$s\$" "$WORK/man.txt" || les_fail "section $s missing"
done
les_pass "sections NAME ... SEE ALSO present"

# Every long option of --help, in the page's source (rendered text may
# hyphenate a long option at a line end).
"$LES_BIN" --help >"$WORK/help.txt" || les_fail "--help failed"
grep -o -- '--[a-z][a-z0-9.-]*' "$WORK/help.txt" | sort -u >"$WORK/help.opts"
les_ge "--help lists options" 40 "$(wc -l <"$WORK/help.opts")"
sed 's/\\-/-/g' "$MAN" >"$WORK/man.src"
missing=""
while read -r opt; do
	grep -q -- "$opt\\b" "$WORK/man.src" || missing="$missing $opt"
done <"$WORK/help.opts"
les_eq "every --help option is in the man page" "" "$missing"
for short in -m -o -d -c -v -h -X; do
	grep -q -- "$short\\b" "$WORK/man.src" || les_fail "short option $short not in the man page"
done
les_pass "short options in the man page"

# The jq recipes of EXAMPLES run on a capture-shaped file.
cat >"$WORK/cap.jsonl" <<'JSON'
{"type":"access","op":"mkdir","access_intent":"namespace_mutation","job_id":"42","comm":"mkdir","uid":0,"latency_ns":5000000,"errno_class":null,"rpc_wait_ns":4000000}
{"type":"access","op":"read","access_intent":"data_read","job_id":null,"comm":"cat","uid":0,"latency_ns":9000000,"errno_class":"io","rpc_wait_ns":0}
{"type":"rpc","op":"mkdir","process":"mkdir","latency_ns":4000000,"errno_class":null}
JSON
gzip -k "$WORK/cap.jsonl"
sed -n '/^\.SH EXAMPLES/,/^\.SH EXIT/p' "$MAN" |
	awk '/^\.nf/ { on = 1; cmd = ""; next } /^\.fi/ { on = 0; print cmd; next }
	     on { cmd = cmd $0 "\n" }' |
	sed 's/\\-/-/g; s/\\(aq/'"'"'/g; s/\\e/\\/g' >"$WORK/recipes"
n=0
while IFS= read -r -d '' recipe; do
	case "$recipe" in *jq*) ;; *) continue ;; esac
	(cd "$WORK" && bash -o pipefail -c "$recipe") >"$WORK/recipe.out" 2>&1 ||
		les_fail "recipe failed: $recipe: $(cat "$WORK/recipe.out")"
	[ -s "$WORK/recipe.out" ] || les_fail "recipe printed nothing: $recipe"
	n=$((n + 1))
done < <(awk 'BEGIN { RS = "\n\n" } { printf "%s%c", $0, 0 }' "$WORK/recipes")
les_ge "jq recipes of EXAMPLES run" 4 "$n"
# A capture can be larger than memory: no recipe slurps it (jq -s).
les_eq "no recipe of the man page or README uses jq -s" "" \
	"$(grep -nE 'jq( +-[a-zA-Z]+)* +(-[a-zA-Z]*s[a-zA-Z]*|--slurp)\b' "$WORK/recipes" "$LES_SRC/README.md")"
# The README's recipes run on the same file.
sed -n '/^## jq recipes/,/^## /p' "$LES_SRC/README.md" | sed -n 's/^    //p' |
	awk '/^#/ { if (cmd != "") printf "%s%c", cmd, 0; cmd = ""; next } { cmd = cmd $0 "\n" }
	     END { if (cmd != "") printf "%s%c", cmd, 0 }' >"$WORK/readme-recipes"
m=0
while IFS= read -r -d '' recipe; do
	(cd "$WORK" && bash -o pipefail -c "$recipe") >"$WORK/recipe.out" 2>&1 ||
		les_fail "README recipe failed: $recipe: $(cat "$WORK/recipe.out")"
	[ -s "$WORK/recipe.out" ] || les_fail "README recipe printed nothing: $recipe"
	m=$((m + 1))
done <"$WORK/readme-recipes"
les_ge "jq recipes of the README run" 4 "$m"

# The README's set-up: exactly two commands, both runnable as root on a
# fresh Debian, which has no sudo.
setup=$(awk '/^## Set-up on a fresh machine/ { on = 1; next } /^## / { on = 0 }
	on && /^    [^ ]/ { sub(/^    /, ""); print }' "$LES_SRC/README.md")
les_eq "README set-up: the two commands" "scripts/demo
scripts/test" "$setup"
for cmd in $setup; do
	[ -x "$LES_SRC/$cmd" ] || les_fail "README set-up: $cmd is not executable"
done
les_pass "README set-up: both commands exist, neither needs sudo"

les_done
