#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The syscall fallback on paths that do not start at the observed mount
# point as the tool sees it, on a FUSE mount this project did not write
# (bindfs): relative paths from a cwd outside the mount, paths relative to
# a dirfd, a bind mount at another path in a private mount namespace made
# after the tool started (what a container sees), and a chroot. Each case
# runs the same known operations under its own comm and must give exactly
# the same records, and every FUSE request of each case must link to one
# of its access records.

. "$(dirname "$0")/lib.sh"
les_init 13_paths_views bindfs unshare python3

SRC=$WORK/src
M=$WORK/m
mkdir -p "$SRC" "$M" "$WORK/other"
printf 'hello world\n' >"$SRC/f2"
bindfs "$SRC" "$M" || les_fail "bindfs failed"
les_track_mount "$M"

# case.py COMM BASE [DIRFD_DIR] [CHROOT]: the operations, under comm COMM,
# on BASE/... (relative to DIRFD_DIR's fd when given, after chroot CHROOT).
cat >"$WORK/case.py" <<'PY'
import ctypes, os, sys
comm, base = sys.argv[1], sys.argv[2]
dirfd_dir = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
root = sys.argv[4] if len(sys.argv) > 4 else None
ctypes.CDLL(None).prctl(15, comm.encode(), 0, 0, 0)  # PR_SET_NAME
if root:
    os.chroot(root)
    os.chdir("/")
kw = {"dir_fd": os.open(dirfd_dir, os.O_RDONLY | os.O_DIRECTORY)} if dirfd_dir else {}
p = lambda name: os.path.join(base, name)
os.stat(p("f2"), **kw)
fd = os.open(p("f2"), os.O_RDONLY, **kw)
os.read(fd, 100)
os.close(fd)
fd = os.open(p("new1"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, **kw)
os.write(fd, b"hello")
os.close(fd)
os.mkdir(p("d"), **kw)
os.rmdir(p("d"), **kw)
os.unlink(p("new1"), **kw)
try:
    os.open(p("missing"), os.O_RDONLY, **kw)
except FileNotFoundError:
    pass
PY

les_start "$WORK/out.jsonl" --mount "$M"
(cd "$WORK" && python3 case.py rel m) || les_fail "relative case"
python3 "$WORK/case.py" dirfd m "$WORK" || les_fail "dirfd case"
unshare -m --propagation private sh -c \
	"mount --bind '$M' '$WORK/other' && python3 '$WORK/case.py' ns '$WORK/other'" ||
	les_fail "namespace case"
python3 "$WORK/case.py" chroot /m "" "$WORK" || les_fail "chroot case"
sleep 0.3
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
expected='close ok 2 0
create ok 1 0
getattr ok 1 0
mkdir ok 1 0
open notfound 1 0
open ok 1 0
read ok 1 12
rmdir ok 1 0
unlink ok 1 0
write ok 1 5'
for c in rel dirfd ns chroot; do
	got=$(jq -r --arg c "$c" 'select(.type == "access" and .comm == $c)
		| [.op, (.errno_class // "ok"), .bytes] | @tsv' "$OUT" |
		awk -F'\t' '{ n[$1" "$2]++; b[$1" "$2] += $3 } END { for (k in n) print k, n[k], b[k] }' |
		sort)
	les_eq "$c: exactly the operations run, by op and outcome" "$expected" "$got"
	les_eq "$c: every FUSE request links to one of its access records" true \
		"$(jq -s -r --arg c "$c" '([.[] | select(.type == "access" and .comm == $c) | .op_id]) as $ids
			| [.[] | select(.type == "rpc" and .comm == $c)]
			| length > 0 and all(.parent_op_id as $p | $ids | index($p) != null)' "$OUT")"
done
les_eq "final stats: zero drops, path_unresolved reported" "0 0 true" \
	"$(les_jq "$OUT" '[.[] | select(.type=="stats" and .final)][0]
		| "\(.dropped_kernel) \(.dropped_userspace) \(.kernel.path_unresolved | type == "number")"')"
les_done
