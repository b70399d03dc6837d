#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Packaging: cmake --install puts every file in its usual place; cpack
# builds a .deb with the right dependencies; the .deb installs with dpkg,
# its binary runs, its man page and completion are found, and the shipped
# unit's ExecStart line runs as it is (plus --duration 2) against a test
# mount. The package is purged at exit.

. "$(dirname "$0")/lib.sh"
les_init 64_package cpack dpkg dpkg-deb man lintian strace systemd-analyze
PKG=lustre-ebpf-stream
[ -f "$LES_BUILD/CPackConfig.cmake" ] || les_fail "$LES_BUILD/CPackConfig.cmake missing (include(CPack))"
[ -f "$LES_SRC/contrib/lustre-ebpf-stream.service.in" ] ||
	les_fail "contrib/lustre-ebpf-stream.service.in missing"
if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q "ok installed"; then
	les_fail "$PKG is already installed on this machine; remove it first (dpkg --purge $PKG)"
fi
INSTALLED=
purge() {
	[ -n "$INSTALLED" ] && dpkg --purge "$PKG" >/dev/null 2>&1
	_les_cleanup
}
trap purge EXIT

# --- cmake --install, staged -------------------------------------------------
STAGE=$WORK/stage
DESTDIR=$STAGE cmake --install "$LES_BUILD" --prefix /usr >"$WORK/install.log" 2>&1 ||
	les_fail "cmake --install: $(tail -n 5 "$WORK/install.log")"
for f in usr/sbin/lustre-ebpf-stream usr/share/man/man8/lustre-ebpf-stream.8.gz \
	usr/lib/systemd/system/lustre-ebpf-stream.service \
	usr/share/bash-completion/completions/lustre-ebpf-stream \
	etc/logrotate.d/lustre-ebpf-stream \
	usr/share/doc/lustre-ebpf-stream/lustre-ebpf-stream.conf.example \
	usr/share/doc/lustre-ebpf-stream/copyright usr/share/doc/lustre-ebpf-stream/changelog.gz \
	usr/share/doc/lustre-ebpf-stream/docs/security.md; do
	[ -e "$STAGE/$f" ] || les_fail "cmake --install did not install /$f"
done
les_pass "cmake --install: binary, man page, unit, completion, logrotate, config example"
[ ! -e "$STAGE/etc/lustre-ebpf-stream.conf" ] ||
	les_fail "installing must not create the default config file"
les_pass "no /etc/lustre-ebpf-stream.conf installed (only the example)"
les_eq "--prefix /usr: the unit runs /usr/sbin/lustre-ebpf-stream" \
	"ExecStart=/usr/sbin/lustre-ebpf-stream" \
	"$(grep '^ExecStart=' "$STAGE/usr/lib/systemd/system/lustre-ebpf-stream.service")"
# The unit's paths follow the install prefix.
DESTDIR=$WORK/local cmake --install "$LES_BUILD" --prefix /opt/les >"$WORK/local.log" 2>&1 ||
	les_fail "cmake --install --prefix /opt/les: $(tail -n 5 "$WORK/local.log")"
les_eq "--prefix /opt/les: the unit runs /opt/les/sbin/lustre-ebpf-stream" \
	"ExecStart=/opt/les/sbin/lustre-ebpf-stream" \
	"$(grep '^ExecStart=' "$WORK/local/opt/les/lib/systemd/system/lustre-ebpf-stream.service")"

# --- the .deb ------------------------------------------------------------------
(cd "$LES_BUILD" && cpack -G DEB -B "$WORK/pkg") >"$WORK/cpack.log" 2>&1 ||
	les_fail "cpack: $(tail -n 5 "$WORK/cpack.log")"
DEB=$(ls "$WORK"/pkg/*.deb 2>/dev/null | head -n 1)
[ -f "$DEB" ] || les_fail "cpack made no .deb"
les_pass "cpack -G DEB: $(basename "$DEB")"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for d in libbpf1 libc6 zlib1g librdkafka1 libmicrohttpd12; do
	grep -q "\\b$d\\b" <<<"$DEPENDS" || les_fail "Depends lacks $d: $DEPENDS"
done
les_pass "Depends: $DEPENDS"
dpkg-deb -c "$DEB" >"$WORK/contents"
for f in ./usr/sbin/lustre-ebpf-stream ./usr/share/man/man8/lustre-ebpf-stream.8.gz \
	./usr/lib/systemd/system/lustre-ebpf-stream.service \
	./usr/share/bash-completion/completions/lustre-ebpf-stream ./etc/logrotate.d/lustre-ebpf-stream; do
	grep -q " $f\$" "$WORK/contents" || les_fail "the .deb lacks $f"
done
les_pass "the .deb holds the binary, man page, unit, completion, logrotate snippet"
lintian --tag-display-limit 0 "$DEB" 2>&1 | grep -v 'running with root privileges' >"$WORK/lintian.txt"
les_eq "lintian: no error and no warning on the .deb" "" "$(cat "$WORK/lintian.txt")"
for s in postinst prerm postrm; do
	dpkg-deb --ctrl-tarfile "$DEB" | tar -t | grep -qx "./$s" || les_fail "the .deb has no $s"
done
les_pass "maintainer scripts: postinst, prerm, postrm"

dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 || les_fail "dpkg -i: $(tail -n 5 "$WORK/dpkg.log")"
INSTALLED=1
les_pass "dpkg -i installs it"
# deb-systemd-helper answers only maintainer scripts: asked as one would.
les_true "postinst registered the unit with deb-systemd-helper" \
	env DPKG_MAINTSCRIPT_PACKAGE=lustre-ebpf-stream \
	deb-systemd-helper debian-installed lustre-ebpf-stream.service
les_true "... without enabling it (no output is set yet)" \
	bash -c "! ls /etc/systemd/system/*.wants/lustre-ebpf-stream.service 2>/dev/null | grep -q ."
les_eq "installed binary --version" "lustre-ebpf-stream $(sed -n 's/^project(lustre-ebpf-stream VERSION \([0-9.]*\).*/\1/p' "$LES_SRC/CMakeLists.txt")" \
	"$(/usr/sbin/lustre-ebpf-stream --version)"
les_eq "man finds the installed page" /usr/share/man/man8/lustre-ebpf-stream.8.gz \
	"$(man -w lustre-ebpf-stream 2>/dev/null)"

# --- the unit -----------------------------------------------------------------
UNIT=/usr/lib/systemd/system/lustre-ebpf-stream.service
les_true "unit is Type=notify (READY=1 once attached)" grep -qx 'Type=notify' "$UNIT"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify "$UNIT" >"$WORK/verify.log" 2>&1
	grep -v -e 'Failed to prepare filename' -e 'Command .* is not executable' \
		-e '^$' "$WORK/verify.log" | grep -i "$PKG" >"$WORK/verify.bad"
	les_eq "systemd-analyze verify: no complaint about the unit" "" "$(cat "$WORK/verify.bad")"
fi
EXEC=$(sed -n 's/^ExecStart=[-@+!:]*//p' "$UNIT" | head -n 1)
[ -n "$EXEC" ] || les_fail "no ExecStart= in the unit"
case "$EXEC" in /usr/sbin/lustre-ebpf-stream*) ;; *) les_fail "ExecStart runs '$EXEC'" ;; esac
les_pass "ExecStart=$EXEC"
les_true "a usage error (exit 2) does not restart-loop" grep -qx 'RestartPreventExitStatus=2' "$UNIT"
# Module BTF (fentry on Lustre, reads of module types) needs it at start-up.
les_true "the bounding set has CAP_SYS_ADMIN (module BTF)" bash -c "grep '^CapabilityBoundingSet=' '$UNIT' | grep -q CAP_SYS_ADMIN"
EXPOSURE=$(systemd-analyze security --offline=true "$UNIT" 2>/dev/null |
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
les_true "systemd-analyze security: exposure $EXPOSURE, at most docs/security.md's figure" \
	awk -v e="$EXPOSURE" -v d="$(sed -n 's/.*systemd-analyze security.*exposure \([0-9.]*\).*/\1/p' \
		"$LES_SRC/docs/security.md" | head -n 1)" 'BEGIN { exit !(e != "" && d != "" && e <= d) }'
# No config file: standard output would be the journal, so it refuses.
: >"$WORK/journal"
JOURNAL_STREAM=$(stat -c '%d:%i' "$WORK/journal") $EXEC >"$WORK/journal" 2>"$WORK/journal.err"
les_eq "no output set, stdout the journal: exit 2 (no restart)" 2 "$?"
les_true "... with a line saying what to set" grep -q "set output = FILE" "$WORK/journal.err"

M=$WORK/mnt
les_testfs "$M"
OUT=$WORK/unit.jsonl
( sleep 4; for _ in $(seq 1 10); do stat "$M" >/dev/null 2>&1; done ) &
# shellcheck disable=SC2086 # the unit's line, split as systemd splits it
strace -f -qq -c -o "$WORK/syscalls" \
	$EXEC --duration 2s --mount "$M" -o "$OUT" 2>"$WORK/unit.err" </dev/null
st=$?
[ "$st" = 0 ] || les_fail "the unit's ExecStart line, run as is on a fresh install, exits $st: $(cat "$WORK/unit.err")"
les_pass "the unit's ExecStart line runs on a fresh install (exit 0)"
wait
les_eq "it wrote the final stats record" true "$(tail -n 1 "$OUT" | jq '.type == "stats" and .final')"
# Every call that run made is one the unit's SystemCallFilter= allows.
awk 'NR > 2 && $NF ~ /^[a-z_0-9]+$/ && $NF != "total" { print $NF }' "$WORK/syscalls" >"$WORK/used"
FILTER=$(sed -n 's/^SystemCallFilter=//p' "$UNIT")
[ -n "$FILTER" ] || les_fail "the unit has no SystemCallFilter="
systemd-analyze syscall-filter >"$WORK/groups"
# shellcheck disable=SC2086 # the unit's list of groups and calls
les_eq "every system call of the run is in SystemCallFilter=$FILTER" "" \
	"$(python3 - "$WORK/groups" "$WORK/used" $FILTER <<'PY'
import sys
groups, cur = {}, None
for line in open(sys.argv[1]):
    t = line.strip()
    if line.startswith("@"):
        cur = t
        groups[cur] = []
    elif cur and t and not t.startswith("#"):
        groups[cur].append(t)
def expand(names, seen):
    out = set()
    for n in names:
        if n.startswith("@"):
            if n not in seen:
                seen.add(n)
                out |= expand(groups.get(n, []), seen)
        else:
            out.add(n)
    return out
allowed = expand(sys.argv[3:], set())
print(" ".join(sorted({l.strip() for l in open(sys.argv[2]) if l.strip()} - allowed)))
PY
)"

# --- bash completion of every option ---------------------------------------------
COMP=/usr/share/bash-completion/completions/lustre-ebpf-stream
/usr/sbin/lustre-ebpf-stream --help | grep -o -- '--[a-z][a-z0-9.-]*' | sort -u >"$WORK/help.opts"
bash -c 'source "$1"; COMP_WORDS=(/usr/sbin/lustre-ebpf-stream --); COMP_CWORD=1
	_lustre_ebpf_stream; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" | sort -u >"$WORK/comp.opts"
les_eq "completion offers every --help option" "" \
	"$(comm -23 "$WORK/help.opts" "$WORK/comp.opts" | paste -sd' ')"
les_eq "completion of --op values" "read,readdir" \
	"$(bash -c 'source "$1"; COMP_WORDS=(lustre-ebpf-stream --op read,readd); COMP_CWORD=2
		_lustre_ebpf_stream; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" | sort | paste -sd' ')"
les_eq "completion of --attach values" "auto" \
	"$(bash -c 'source "$1"; COMP_WORDS=(lustre-ebpf-stream --attach au); COMP_CWORD=2
		_lustre_ebpf_stream; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP")"

dpkg --purge "$PKG" >"$WORK/purge.log" 2>&1 || les_fail "dpkg --purge: $(cat "$WORK/purge.log")"
INSTALLED=
[ ! -e /usr/sbin/lustre-ebpf-stream ] || les_fail "purge left /usr/sbin/lustre-ebpf-stream"
les_pass "dpkg --purge removes it"

les_done
