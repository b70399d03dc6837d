#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Self-test of les-testfs, the slow, faulty FUSE filesystem the other
# end-to-end tests trace. Mounts it a few times in a temporary directory and
# checks POSIX behaviour, permissions, injected faults, latency and the stats
# file. Needs root (FUSE mounts with allow_other, setpriv).
#
# Environment: LES_BUILD (build directory holding les-testfs), LES_SRC.
# Stops at the first failed check; ends with "N passed, 0 failed".

set -u

if [ "$(id -u)" -ne 0 ]; then
	echo "00_testfs.sh: must run as root (it mounts FUSE filesystems)" >&2
	exit 1
fi

LES_SRC=${LES_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LES_BUILD=${LES_BUILD:-$LES_SRC/build}
TESTFS=$LES_BUILD/les-testfs
if [ ! -x "$TESTFS" ]; then
	echo "00_testfs.sh: $TESTFS not found; build the les-testfs target" >&2
	exit 1
fi
for tool in fusermount3 setfattr getfattr setpriv python3 mountpoint; do
	if ! command -v "$tool" >/dev/null; then
		echo "00_testfs.sh: $tool not installed (scripts/install-deps)" >&2
		exit 1
	fi
done

WORK=$(mktemp -d /tmp/les-testfs.XXXXXX)
chmod 755 "$WORK" # the unprivileged checks walk through it
MOUNTS=()
PIDS=()
passed=0

cleanup() {
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" && fusermount3 -u -z "$m"
	done
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "${LES_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

pass() {
	passed=$((passed + 1))
	echo "ok $passed - $*"
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	local what=$1
	shift
	"$@" >"$WORK/out" 2>&1 || fail "$what: '$*' failed: $(cat "$WORK/out")"
	pass "$what"
}

# check_err DESCRIPTION MESSAGE COMMAND...: the command must fail saying MESSAGE.
check_err() {
	local what=$1 msg=$2
	shift 2
	if "$@" >"$WORK/out" 2>&1; then
		fail "$what: '$*' succeeded, expected '$msg'"
	fi
	grep -q "$msg" "$WORK/out" || fail "$what: expected '$msg', got: $(cat "$WORK/out")"
	pass "$what"
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	pass "$1"
}

# mount_testfs DIR ARGS...: mounts in the foreground (background job), waits for it.
mount_testfs() {
	local dir=$1 i
	shift
	mkdir -p "$dir"
	"$TESTFS" "$dir" -f "$@" 2>>"$WORK/testfs.log" &
	PIDS+=($!)
	MOUNTS+=("$dir")
	for i in $(seq 100); do
		mountpoint -q "$dir" && return 0
		kill -0 "$!" 2>/dev/null || fail "les-testfs $* exited: $(cat "$WORK/testfs.log")"
		sleep 0.05
	done
	fail "les-testfs did not mount $dir within 5 s"
}

# unmount_testfs DIR: unmounts and waits for the server to exit 0.
unmount_testfs() {
	local pid=${PIDS[-1]}
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	wait "$pid" || fail "les-testfs exited with status $? after unmount"
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

# --- 1: the plain filesystem -------------------------------------------------
M=$WORK/plain
mount_testfs "$M"
check_eq "mount type is fuse.les-testfs" "fuse.les-testfs les-testfs" \
	"$(awk -v m="$M" '$5 == m { for (i = 7; $i != "-"; i++); print $(i + 1), $(i + 2) }' \
		/proc/self/mountinfo)"

head -c 1048576 /dev/urandom >"$WORK/data"
check "dd write 1 MiB" dd if="$WORK/data" of="$M/f" bs=64k status=none
check "read back equals what was written" cmp "$WORK/data" "$M/f"
check_eq "st_size after write" 1048576 "$(stat -c %s "$M/f")"

check "truncate grows sparsely" truncate -s 3M "$M/f"
check "the hole reads as zeros" cmp -n 2097152 -i 1048576:0 "$M/f" /dev/zero
check "write past EOF" dd if="$WORK/data" of="$M/f" bs=4k count=1 seek=1024 conv=notrunc \
	status=none
check_eq "size after write past EOF" 4198400 "$(stat -c %s "$M/f")"
check "truncate shrinks" truncate -s 100 "$M/f"
check "shrunk file keeps its head" cmp -n 100 "$WORK/data" "$M/f"
check "regrowth does not resurrect old bytes" truncate -s 200 "$M/f"
check "regrown tail is zeros" cmp -n 100 -i 100:0 "$M/f" /dev/zero

check "mkdir" mkdir "$M/d"
check "mkdir nested" mkdir "$M/d/sub"
check_eq "directory nlink counts subdirectories" 3 "$(stat -c %h "$M/d")"
check "rename into a directory" mv "$M/f" "$M/d/g"
check_eq "directory listing" "g sub" "$(ls "$M/d" | tr '\n' ' ' | sed 's/ $//')"
check_err "old name is gone" "No such file" stat "$M/f"
check_err "rmdir of a non-empty directory" "not empty" rmdir "$M/d"
check "rename a directory across parents" mv "$M/d/sub" "$M/sub2"
check_eq "nlink follows the moved directory" "2 4" \
	"$(stat -c %h "$M/d") $(stat -c %h "$M")"
check "unlink" rm "$M/d/g"
check "rmdir" rmdir "$M/d" "$M/sub2"
check_eq "empty root" "" "$(ls -A "$M")"

echo target-data >"$M/t"
check "symlink" ln -s t "$M/l"
check_eq "readlink" t "$(readlink "$M/l")"
check_eq "reading through the symlink" target-data "$(cat "$M/l")"

check "hard link" ln "$M/t" "$M/h"
check_eq "nlink is 2 after link" 2 "$(stat -c %h "$M/t")"
check_eq "both names share an inode" "$(stat -c %i "$M/t")" "$(stat -c %i "$M/h")"
check "unlink one name" rm "$M/h"
check_eq "nlink is 1 after unlink" 1 "$(stat -c %h "$M/t")"

check "setfattr" setfattr -n user.color -v blue "$M/t"
check "second attribute" setfattr -n user.shape -v round "$M/t"
check_eq "getfattr" blue "$(getfattr --only-values --absolute-names -n user.color "$M/t")"
check_eq "listxattr" "user.color user.shape" \
	"$(getfattr -m - --absolute-names "$M/t" | grep '^user' | sort | tr '\n' ' ' |
		sed 's/ $//')"
check "removexattr" setfattr -x user.color "$M/t"
check_err "removed attribute is ENODATA" "No such attribute" \
	getfattr -n user.color "$M/t"
check "xattr ERANGE and size query" python3 - "$M/t" <<'EOF'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
path = sys.argv[1].encode()
size = libc.getxattr(path, b"user.shape", None, 0)
assert size == 5, size
buf = ctypes.create_string_buffer(2)
assert libc.getxattr(path, b"user.shape", buf, 2) == -1
assert ctypes.get_errno() == errno.ERANGE, ctypes.get_errno()
assert libc.listxattr(path, buf, 2) == -1 and ctypes.get_errno() == errno.ERANGE
try:
	os.setxattr(sys.argv[1], "user.shape", b"x", os.XATTR_CREATE)
	raise SystemExit("XATTR_CREATE replaced an attribute")
except FileExistsError:
	pass
try:
	os.setxattr(sys.argv[1], "user.none", b"x", os.XATTR_REPLACE)
	raise SystemExit("XATTR_REPLACE created an attribute")
except OSError as e:
	assert e.errno == errno.ENODATA, e
EOF

check "chmod" chmod 640 "$M/t"
check_eq "mode after chmod" 640 "$(stat -c %a "$M/t")"
check "chown" chown nobody:nogroup "$M/t"
check_eq "owner after chown" "nobody nogroup" "$(stat -c '%U %G' "$M/t")"
check "utimens" touch -d "2001-02-03 04:05:06 UTC" "$M/t"
check_eq "mtime after touch -d" 981173106 "$(stat -c %Y "$M/t")"
check "mkfifo" mkfifo "$M/fifo"
check_eq "mknod made a FIFO" fifo "$(stat -c %F "$M/fifo")"
check_eq "statfs" "4096 255" "$(stat -f -c '%S %l' "$M")"

check "renameat2 NOREPLACE, EXCHANGE; I/O on an unlinked open file" python3 - "$M" <<'EOF'
import ctypes, errno, os, sys
m = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, NOREPLACE, EXCHANGE = -100, 1, 2
for name, text in (("x", b"xx"), ("y", b"yyy")):
	with open(os.path.join(m, name), "wb") as f:
		f.write(text)
def renameat2(a, b, flags):
	return libc.renameat2(AT_FDCWD, os.path.join(m, a).encode(), AT_FDCWD,
			      os.path.join(m, b).encode(), flags)
assert renameat2("x", "y", NOREPLACE) == -1 and ctypes.get_errno() == errno.EEXIST
assert renameat2("x", "y", EXCHANGE) == 0, ctypes.get_errno()
assert open(os.path.join(m, "x"), "rb").read() == b"yyy"
assert open(os.path.join(m, "y"), "rb").read() == b"xx"
fd = os.open(os.path.join(m, "x"), os.O_RDWR)
os.unlink(os.path.join(m, "x"))
os.pwrite(fd, b"zz", 3)
assert os.pread(fd, 10, 0) == b"yyyzz"
os.close(fd)
assert not os.path.exists(os.path.join(m, "x"))
EOF

# Permissions: the kernel checks them (default_permissions) for other users.
mkdir "$M/rootdir"
echo visible >"$M/rootdir/readable"
check_eq "root-owned 0755 directory" "755 root" "$(stat -c '%a %U' "$M/rootdir")"
check_eq "another user can read (allow_other)" visible \
	"$(as_nobody cat "$M/rootdir/readable")"
check_err "another user cannot write into it" "Permission denied" \
	as_nobody sh -c "echo x >'$M/rootdir/new'"
check_err "another user cannot unlink in it" "Permission denied" \
	as_nobody rm -f "$M/rootdir/readable"
mkdir -m 1777 "$M/shared"
check "another user creates a file in a 1777 directory" \
	as_nobody sh -c "echo mine >'$M/shared/mine'"
check_eq "the creator owns the file" "65534 65534" "$(stat -c '%u %g' "$M/shared/mine")"

# Path-named faults: creating and stat work, data access fails.
check "create fail-etimedout file" touch "$M/fail-etimedout-1"
check "stat of a fault file works" stat "$M/fail-etimedout-1"
check "open of fail-etimedout gives ETIMEDOUT" python3 - "$M/fail-etimedout-1" <<'EOF'
import errno, sys
try:
	open(sys.argv[1]).close()
	raise SystemExit("open succeeded")
except OSError as e:
	assert e.errno == errno.ETIMEDOUT, e
EOF
check_err "dd into a new fail-eio file" "Input/output error" \
	dd if=/dev/zero of="$M/fail-eio-new" bs=4k count=1 status=none
touch "$M/fail-enotconn-1"
check_err "cat of fail-enotconn" "Transport endpoint is not connected" cat "$M/fail-enotconn-1"
unmount_testfs "$M"
check_eq "unmounted" "" "$(awk -v m="$M" '$5 == m' /proc/self/mountinfo)"

# --- 2: injected errors -------------------------------------------------------
M=$WORK/inject
mount_testfs "$M" --inject=read:EIO --inject=mkdir:ENOSPC:2,readlink:ETIMEDOUT
echo data >"$M/f"
check_err "--inject=read:EIO makes cat fail" "Input/output error" cat "$M/f"
check "mkdir call 1 of EVERY=2 succeeds" mkdir "$M/a"
check_err "mkdir call 2 fails with ENOSPC" "No space left" mkdir "$M/b"
check "mkdir call 3 succeeds" mkdir "$M/c"
ln -s f "$M/l"
check_err "comma-separated rule: readlink ETIMEDOUT" "timed out" readlink -v "$M/l"
unmount_testfs "$M"

# --- 3: latency ---------------------------------------------------------------
M=$WORK/slow
mount_testfs "$M" --latency-ms=100 --latency-ops=getattr
touch "$M/f"
t0=$(now_ms)
stat "$M/f" >/dev/null || fail "stat on the slow mount"
dt=$(($(now_ms) - t0))
[ "$dt" -ge 100 ] || fail "stat took $dt ms, expected >= 100 ms"
pass "--latency-ms=100 --latency-ops=getattr: stat took $dt ms"
check "ops not listed are not delayed (fstatvfs < 100 ms)" python3 - "$M/f" <<'EOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
t = time.monotonic()
os.fstatvfs(fd)
dt = time.monotonic() - t
os.close(fd)
assert dt < 0.1, dt
EOF
unmount_testfs "$M"

# --- 4: slow-every, direct I/O, stats file, SIGTERM ---------------------------
M=$WORK/stats
STATS=$WORK/stats.txt
mount_testfs "$M" --latency-ops=mkdir --slow-every=3 --slow-ms=300 --direct-io \
	--stats-file="$STATS"
# Timed in one process: fork and exec under load must not look like latency.
check_eq "--slow-every=3: exactly mkdir 3 and 6 are slow" "3 6" "$(python3 - "$M" <<'EOF'
import os, sys, time
slow = []
for i in range(1, 7):
	t = time.monotonic()
	os.mkdir(os.path.join(sys.argv[1], "d%d" % i))
	if time.monotonic() - t >= 0.3:
		slow.append(str(i))
print(" ".join(slow))
EOF
)"

# dump_stats: asks the server for its stats file and waits until it is there.
dump_stats() {
	local i
	rm -f "$STATS"
	kill -USR1 "${PIDS[-1]}"
	for i in $(seq 100); do
		[ -f "$STATS" ] && return 0
		sleep 0.05
	done
	fail "no $STATS 5 s after SIGUSR1"
}

head -c 8192 "$WORK/data" >"$M/f"
dump_stats
before=$(awk '$1 == "read" { print $2 }' "$STATS")
check_eq "stats file counts mkdir" 6 "$(awk '$1 == "mkdir" { print $2 }' "$STATS")"
dd if="$M/f" of=/dev/null bs=1k count=8 status=none
dump_stats
after=$(awk '$1 == "read" { print $2 }' "$STATS")
check_eq "--direct-io: 8 read(2) calls are 8 FUSE reads" 8 $((after - before))

pid=${PIDS[-1]}
rm -f "$STATS"
kill -TERM "$pid"
wait "$pid"
check_eq "SIGTERM: server exits 0" 0 $?
check_eq "SIGTERM: mount is gone" "" "$(awk -v m="$M" '$5 == m' /proc/self/mountinfo)"
check_eq "stats file written again at exit" 6 "$(awk '$1 == "mkdir" { print $2 }' "$STATS" 2>&1)"

echo "$passed passed, 0 failed"
