#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The bash completion, driven through bash-completion's own machinery
# (_init_completion from /usr/share/bash-completion/bash_completion): what
# it offers must be what the program accepts.

. "$(dirname "$0")/lib.sh"
les_init 66_completion
BC=/usr/share/bash-completion/bash_completion
[ -r "$BC" ] || les_fail "bash-completion is not installed (scripts/install-deps)"

# complete LINE: the words bash-completion offers at the end of LINE.
complete_line() {
	bash --norc --noprofile -c '
		. "$1" && . "$2" || exit 1
		PATH=$3:$PATH
		line=$4
		COMP_LINE=$line COMP_POINT=${#line}
		read -ra COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_lustre_ebpf_stream lustre-ebpf-stream "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$BC" "$LES_SRC/completion/lustre-ebpf-stream" \
		"$(dirname "$LES_BIN")" "$1"
}

les_eq "--list-probes= offers text and json" "json
text" "$(complete_line "lustre-ebpf-stream --list-probes=")"
for v in text json; do
	"$LES_BIN" --list-probes="$v" >/dev/null 2>&1 || les_fail "--list-probes=$v is refused"
done
les_pass "both values are accepted after '='"
les_true "--list-probes followed by a space offers options, not a value" \
	grep -qx -- "--mount" <<<"$(complete_line "lustre-ebpf-stream --list-probes --mo")"
les_eq "--mountinfo completes as an option" "--mountinfo" \
	"$(complete_line "lustre-ebpf-stream --mounti")"
touch "$WORK/mi.txt"
les_eq "--mountinfo takes a file name" "$WORK/mi.txt" \
	"$(complete_line "lustre-ebpf-stream --mountinfo $WORK/mi.")"
les_eq "--kernel-facts takes a file name" "$WORK/mi.txt" \
	"$(complete_line "lustre-ebpf-stream --kernel-facts $WORK/mi.")"
les_eq "--attach values" "auto
fentry
kprobe
syscall" "$(complete_line "lustre-ebpf-stream --attach ")"
les_true "-p, -u and -V are offered" \
	bash -c '[ "$(grep -cx -- "-[puV]" <<<"$1")" = 3 ]' _ "$(complete_line "lustre-ebpf-stream -")"
les_eq "--op completes list items after a comma" "read,read
read,readdir
read,readlink" "$(complete_line "lustre-ebpf-stream --op read,rea")"
# Every option the completion offers is one the program knows; an empty
# offer would pass that loop, so it must offer some first.
offered=$(complete_line "lustre-ebpf-stream --")
les_ge "options offered after --" 10 "$(grep -c -- '^--' <<<"$offered")"
for opt in $offered; do
	name=${opt%=}
	"$LES_BIN" --help | grep -q -- "$name\b" || les_fail "completion offers $opt, --help has no $name"
done
les_pass "every offered option is in --help"
les_done
