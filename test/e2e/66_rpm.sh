#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The RPM beside the .deb (Lustre sites run RHEL, Rocky, Alma): cpack -G
# RPM with Debian's rpm tools. rpmlint finds nothing past the filters of
# packaging/rpm/rpmlintrc (each with its reason); the RPM holds the same
# files as the .deb with the same modes; it requires the libraries the
# binary links, logrotate and systemd for its scriptlets; the logrotate
# snippet is a noreplace config file; the scriptlets parse; installed into
# an empty root, its binary runs.

. "$(dirname "$0")/lib.sh"
les_init 66_rpm cpack rpm rpmbuild rpmlint dpkg-deb
[ -f "$LES_BUILD/CPackConfig.cmake" ] || les_fail "$LES_BUILD/CPackConfig.cmake missing (include(CPack))"

(cd "$LES_BUILD" && cpack -G RPM -B "$WORK/rpm") >"$WORK/cpack-rpm.log" 2>&1 ||
	les_fail "cpack -G RPM: $(tail -n 5 "$WORK/cpack-rpm.log")"
RPM=$(ls "$WORK"/rpm/*.rpm 2>/dev/null | head -n 1)
[ -f "$RPM" ] || les_fail "cpack made no .rpm"
les_pass "cpack -G RPM: $(basename "$RPM")"
(cd "$LES_BUILD" && cpack -G DEB -B "$WORK/deb") >"$WORK/cpack-deb.log" 2>&1 ||
	les_fail "cpack -G DEB: $(tail -n 5 "$WORK/cpack-deb.log")"
DEB=$(ls "$WORK"/deb/*.deb 2>/dev/null | head -n 1)

rpmlint -r "$LES_SRC/packaging/rpm/rpmlintrc" "$RPM" >"$WORK/rpmlint.txt" 2>&1
les_eq "rpmlint: 0 errors, 0 warnings (past packaging/rpm/rpmlintrc)" 1 \
	"$(grep -c ' 0 errors, 0 warnings' "$WORK/rpmlint.txt")"

# The same files with the same modes: "MODE PATH" of every non-directory.
rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$RPM" 2>/dev/null | grep -v '^d' |
	sort >"$WORK/rpm.files"
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { p = $6; sub(/^\./, "", p); print $1, p }' |
	sort >"$WORK/deb.files"
les_ge "the RPM holds files" 20 "$(wc -l <"$WORK/rpm.files")"
cmp -s "$WORK/deb.files" "$WORK/rpm.files" ||
	les_fail "file lists differ (< deb, > rpm): $(diff "$WORK/deb.files" "$WORK/rpm.files" | head -n 6)"
les_pass "the RPM and the .deb hold the same $(wc -l <"$WORK/rpm.files") files, modes alike"
les_eq "no directory of the base system claimed" "" \
	"$(rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$RPM" 2>/dev/null |
		awk '$1 ~ /^d/ && $2 !~ /lustre-ebpf-stream/ { print $2 }')"

rpm -qp --requires "$RPM" >"$WORK/requires" 2>/dev/null
for r in 'libbpf.so.1()(64bit)' 'librdkafka.so.1()(64bit)' 'libmicrohttpd.so.12()(64bit)' \
	'libz.so.1()(64bit)' logrotate systemd; do
	grep -qxF "$r" "$WORK/requires" || les_fail "Requires lacks $r: $(tr '\n' ' ' <"$WORK/requires")"
done
les_pass "Requires: the linked libraries (rpmbuild's scan), logrotate, systemd"
les_eq "the logrotate snippet is a config file" /etc/logrotate.d/lustre-ebpf-stream \
	"$(rpm -qcp "$RPM" 2>/dev/null)"
les_true "... kept on upgrade when edited (noreplace)" \
	bash -c "rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' '$RPM' 2>/dev/null |
		grep -q '^cn /etc/logrotate.d/lustre-ebpf-stream$'"
rpm -qp --scripts "$RPM" >"$WORK/scripts" 2>/dev/null
for s in postinstall preuninstall postuninstall; do
	grep -q "^$s scriptlet" "$WORK/scripts" || les_fail "no $s scriptlet"
done
for s in post preun postun; do
	sh -n "$LES_SRC/packaging/rpm/$s" || les_fail "packaging/rpm/$s does not parse"
done
les_pass "scriptlets %post, %preun, %postun, each parses"

ROOT=$WORK/root
mkdir -p "$ROOT"
rpm --root "$ROOT" --initdb
rpm --root "$ROOT" -i --nodeps --noscripts "$RPM" >"$WORK/rpm-i.log" 2>&1 ||
	les_fail "rpm -i into an empty root: $(tail -n 3 "$WORK/rpm-i.log")"
les_eq "installed: rpm -V finds every file as packaged" "" \
	"$(rpm --root "$ROOT" -V --nodeps lustre-ebpf-stream 2>&1)"
les_eq "installed: its binary runs" "lustre-ebpf-stream $("$LES_BIN" --version | cut -d' ' -f2)" \
	"$("$ROOT/usr/sbin/lustre-ebpf-stream" --version | head -n 1 | cut -d' ' -f1-2)"
les_done
