#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A name service that hangs, through glibc's real NSS path: a module built
# here (libnss_leshang.so.2) answers uid 4243 with the name lesnss4243 and
# never returns for uid 4242. The tool runs in a private mount namespace
# whose /etc/nsswitch.conf reads "passwd: leshang files". Documented
# (docs/reliability.md, "User names that wait"): the records still flow;
# the uid whose lookup hung, and every uid queued behind it, go out with
# "username": null (username_pending); nothing is dropped; and the exit is
# not held: the lookup in progress gets a second, then one line on stderr.

. "$(dirname "$0")/lib.sh"
les_init 56_nss_hung setpriv unshare cc

M=$WORK/mnt
les_testfs "$M"
chmod 1777 "$M"
echo data >"$M/f"
chmod 644 "$M/f"

mkdir "$WORK/nss"
cat >"$WORK/nss/leshang.c" <<'EOF'
#include <errno.h>
#include <nss.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* uid 4243 is lesnss4243; uid 4242's lookup never returns; nobody else is known. */
enum nss_status _nss_leshang_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len,
					 int *err)
{
	if (uid == 4242)
		for (;;)
			sleep(3600);
	if (uid != 4243 || len < 64) {
		*err = uid != 4243 ? ENOENT : ERANGE;
		return uid != 4243 ? NSS_STATUS_NOTFOUND : NSS_STATUS_TRYAGAIN;
	}
	snprintf(buf, len, "lesnss4243");
	pw->pw_name = buf;
	pw->pw_passwd = buf + 10; /* "" */
	pw->pw_uid = 4243;
	pw->pw_gid = 4243;
	pw->pw_gecos = buf + 10;
	pw->pw_dir = "/";
	pw->pw_shell = "/bin/false";
	return NSS_STATUS_SUCCESS;
}

enum nss_status _nss_leshang_getpwnam_r(const char *name, struct passwd *pw, char *buf,
					 size_t len, int *err)
{
	(void)name, (void)pw, (void)buf, (void)len;
	*err = ENOENT;
	return NSS_STATUS_NOTFOUND;
}
EOF
cc -shared -fPIC -o "$WORK/nss/libnss_leshang.so.2" "$WORK/nss/leshang.c" ||
	les_fail "cannot build the NSS module"
printf 'passwd: leshang files\ngroup: files\n' >"$WORK/nsswitch.conf"

OUT=$WORK/out.jsonl
unshare -m --propagation private sh -c \
	'mount --bind "$1" /etc/nsswitch.conf && lib=$2 && shift 2 && exec env LD_LIBRARY_PATH="$lib" "$@"' \
	sh "$WORK/nsswitch.conf" "$WORK/nss" "$LES_BIN" -o "$OUT" -v --mount "$M" \
	2>"$OUT.err" &
LES_PID=$!
les_wait_ready "$LES_PID" "$OUT.err"

as_uid() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}
# The module answers: lesnss4243 resolves.
as_uid 4243 cat "$M/f" >/dev/null
sleep 0.5
as_uid 4243 cat "$M/f" >/dev/null
# The lookup that hangs, then a uid queued behind it.
as_uid 4242 cat "$M/f" >/dev/null
sleep 0.3
for _ in 1 2 3; do
	as_uid 4242 cat "$M/f" >/dev/null
	as_uid "$(id -u nobody)" cat "$M/f" >/dev/null
done
sleep 0.5

t0=$(date +%s%N)
les_stop
ms=$((($(date +%s%N) - t0) / 1000000))
les_eq "exit status" 0 "$LES_STATUS"
les_true "exit not held by the hung lookup: ${ms} ms" test "$ms" -lt 3000
les_true "one line on stderr says why" \
	grep -qF "a user name lookup did not return (NSS hung?): exiting without it" "$OUT.err"

q() { les_jq "$OUT" "$1"; }
NOBODY=$(id -u nobody)
les_eq "uid 4243: named by the NSS module (the namespace's nsswitch.conf is in use)" lesnss4243 \
	"$(q '[.[] | select(.type == "access" and .uid == 4243 and .username != null)
		| .username] | unique | join(",")')"
les_eq "uid 4242: its 4 opens recorded, every record's username null" "4 true" \
	"$(q '[.[] | select(.type == "access" and .uid == 4242)]
		| "\([.[] | select(.op == "open")] | length) \(all(.username == null))"')"
les_eq "nobody, queued behind the hung lookup: its 3 opens recorded, username null" "3 true" \
	"$(q "[.[] | select(.type == \"access\" and .uid == $NOBODY)]
		| \"\\([.[] | select(.op == \"open\")] | length) \\(all(.username == null))\"")"
F='[.[] | select(.type == "stats" and .final)][0]'
les_true "final stats: username_pending counted" \
	test "$(q "$F.enrich.username_pending")" -ge 2
les_eq "final stats: nothing dropped" "0 0" \
	"$(q "$F | \"\(.dropped_kernel) \(.dropped_userspace)\"")"
les_eq "final stats: produced == emitted == record lines" true \
	"$(q "$F.produced_kernel == $F.emitted and $F.emitted == ([.[] | select(.type == \"access\" or .type == \"rpc\")] | length)")"

les_done
