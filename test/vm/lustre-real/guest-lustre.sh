# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# guest-lustre.sh: a real single-node Lustre (MGS+MDT and OSTs on ldiskfs,
# client at /mnt/lustre) inside the 6.12 guest, from the install tree that
# test/vm/lustre-real/build made on the host. Sourced by the guest tests
# (test/vm/lustre-real/t_*.sh, run by test/vm/run-in-vm with
# LES_VM_KVER=6.12.117+deb12-amd64 LES_VM_MEM=4096):
#
#   . "$(dirname "${BASH_SOURCE[0]}")/guest-lustre.sh"
#   lustre_real_start [--nobtf]  modules, LNet, mkfs, servers, client;
#                                prints how long each stage took
#   lustre_real_stop [--rmmod|--client]  unmount client and servers (and unload
#                                every Lustre module with --rmmod; the client
#                                mounts alone with --client)
#   lustre_real_jobid VAR [NAME] lctl set_param jobid_var=VAR [jobid_name=NAME]
#   lustre_real_clear_stats      reset llite/osc/mdc stats on the client
#   lustre_real_stat PARAM NAME [sum]   a counter of `lctl get_param -n
#                                PARAM` (e.g. llite.*.stats write_bytes):
#                                its sample count, or with "sum" its sum
#
# --nobtf loads the copies of the modules without a .BTF section (the
# kprobe path; checks that no /sys/kernel/btf/<lustre module> appears).
# Without it, the modules carry BTF as built against Debian's 6.12 headers.
#
# Environment (only LES_* variables reach the guest):
#   LES_LR_INSTALL  the build's cache directory (default: what CTest's
#                   lustre.build wrote to $LES_BUILD/lustre-real-dir, else
#                   what `test/vm/lustre-real/build --print-dir` computes)
#   LES_LR_IP       LNet's IPv4 address on the dummy interface lr0
#                   (default 127.77.0.1; prefix length LES_LR_PREFIX, 8)
#   LES_LR_MDT_MB, LES_LR_OST_MB   loop file sizes (256, 1024) in the
#                   guest's tmpfs /tmp/lustre-real
#   LES_LR_OSTS     OSTs (1; LR_OSTS, which a test may set instead)
# Set by lustre_real_start: LR_INST, LR_MODE (btf|nobtf), LR_NID
# (127.77.0.1@tcp), LR_FSNAME (lustre), LR_MNT (/mnt/lustre), LR_MODULES
# (the Lustre modules loaded), LR_TIMES ("stage=seconds ...").
#
# Not a test itself: CTest takes only t_*.sh.

_lr_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LR_FSNAME=lustre
LR_MNT=/mnt/lustre
LR_MNT2=/mnt/lustre2 # the same filesystem mounted again (a second client)
LR_SCRATCH=/tmp/lustre-real
LR_IF=lr0
LR_IP=${LES_LR_IP:-127.77.0.1}
LR_NID=$LR_IP@tcp
LR_MODE=
LR_INST=
LR_TIMES=
# OSTs of the single-node filesystem (OST0000, OST0001, ...: one loop file
# and mount point /mnt/lustre-ost<i> each); a test may set it before
# lustre_real_start.
LR_OSTS=${LES_LR_OSTS:-1}
# The modules a single-node client + ldiskfs server needs; modprobe brings
# the rest (libcfs, ksocklnd, obdclass, ptlrpc, mdc, osc, lov, lmv, ...).
LR_MODULES="lnet lustre ldiskfs osd_ldiskfs mgs mdt ofd"

_lr_say()
{
	echo "lustre-real: $*"
}

_lr_uptime()
{
	cut -d' ' -f1 /proc/uptime
}

# _lr_stage NAME T0: note and print how long the stage since T0 took.
_lr_stage()
{
	local secs

	secs=$(awk -v a="$2" -v b="$(_lr_uptime)" 'BEGIN { printf "%.1f", b - a }')
	LR_TIMES+="${LR_TIMES:+ }$1=$secs"
	_lr_say "stage $1: $secs s"
}

_lr_fail()
{
	_lr_say "FAILED: $*"
	dmesg | tail -n 40 | sed 's/^/  dmesg| /'
	return 1
}

# The install tree: LES_LR_INSTALL, else the path the host's build script
# computes for this kernel (it must have been built there).
# _lr_host_path PATH: the host's PATH as this guest sees it. A cache under
# the host's /tmp (LES_CACHE=$(mktemp -d), as a cold run makes it) is hidden
# by the guest's private /tmp; the host's whole root is also at
# /run/les-vm/host (test/vm/guest-init).
_lr_host_path()
{
	if [ -e "$1" ] || [ ! -e "/run/les-vm/host$1" ]; then
		echo "$1"
	else
		echo "/run/les-vm/host$1"
	fi
}

_lr_install_dir()
{
	local dir

	if [ -n "${LES_LR_INSTALL:-}" ]; then
		dir=$LES_LR_INSTALL
	elif [ -s "${LES_BUILD:-build}/lustre-real-dir" ]; then
		# Written by CTest's lustre.build on the host.
		dir=$(cat "${LES_BUILD:-build}/lustre-real-dir")
	else
		dir=$(LES_LR_KVER=$(uname -r) "$_lr_dir/build" --print-dir) ||
			{ _lr_say "no Lustre build for $(uname -r) at $dir: run test/vm/lustre-real/build on the host" >&2; return 1; }
	fi
	dir=$(_lr_host_path "$dir")
	# On stderr: the caller takes stdout as the directory.
	[ -e "$dir/.complete" ] || { _lr_say "incomplete Lustre build: $dir" >&2; return 1; }
	echo "$dir"
}

# The modules overlay on /lib/modules/<kver> (a read-only 9p bind): the
# merged depmod index on top, Lustre's modules below it, the kernel's at
# the bottom, a tmpfs upper layer. Nothing is copied.
_lr_overlay_modules()
{
	local kv mods upper=/run/lr-mod

	kv=$(uname -r)
	if [ "$LR_MODE" = nobtf ]; then
		mods=$LR_INST/nobtf/lib/modules/$kv
	else
		mods=$LR_INST/install/lib/modules/$kv
	fi
	if grep -q "^lr-mod /lib/modules/$kv " /proc/mounts; then
		[ "$(cat $upper/mode 2>/dev/null)" = "$LR_MODE" ] ||
			{ _lr_say "modules already overlaid in mode $(cat $upper/mode)"; return 1; }
		return 0
	fi
	mkdir -p $upper/upper $upper/work
	mount -t overlay -o "lowerdir=$LR_INST/modidx:$mods:/lib/modules/$kv,upperdir=$upper/upper,workdir=$upper/work" \
		lr-mod "/lib/modules/$kv" || return 1
	echo "$LR_MODE" >$upper/mode
}

# lctl, lfs, mount.lustre, mkfs.lustre and their libraries into the guest's
# writable root (tmpfs overlay). The libraries land in /usr/lib, which the
# dynamic linker searches anyway: ldconfig (5.7 s over 9p under TCG) only
# when lctl does not start without it.
_lr_install_userland()
{
	local d

	for d in usr etc sbin; do
		[ -d "$LR_INST/install/$d" ] || continue
		cp -a "$LR_INST/install/$d/." "/$d/" || return 1
	done
	lctl --version >/dev/null 2>&1 || ldconfig
}

# The MDT's connection to OST index $1 (default 0; its OSP device) is
# ready to precreate objects. A client mounted before that waits ~20 s in
# mount(2); waiting here takes ~4 s.
_lr_wait_osp()
{
	local i st ost

	ost=$(printf 'OST%04x' "${1:-0}")
	for ((i = 0; i < 600; i++)); do
		st=$(lctl get_param -n "osp.$LR_FSNAME-$ost-osc-MDT0000.prealloc_status" 2>/dev/null)
		[ "$st" = 0 ] && return 0
		sleep 0.1
	done
	lctl get_param "osp.*.prealloc_status" "osp.*.state" 2>&1
	return 1
}

# LNet needs an interface that is not IFF_LOOPBACK: a dummy one, with an
# address in 127/8 (traffic stays on the loopback path of this guest).
_lr_network()
{
	ip link show $LR_IF >/dev/null 2>&1 || ip link add $LR_IF type dummy || return 1
	ip addr show dev $LR_IF | grep -q "inet $LR_IP/" ||
		ip addr add "$LR_IP/${LES_LR_PREFIX:-8}" dev $LR_IF || return 1
	ip link set $LR_IF up || return 1
	mkdir -p /etc/modprobe.d
	echo "options lnet networks=tcp0($LR_IF) accept=all" >/etc/modprobe.d/lustre-real.conf
}

# With --nobtf, no Lustre module may show up in /sys/kernel/btf.
_lr_check_btf()
{
	local m with='' loaded=0

	for m in $(find "$LR_INST/install/lib/modules" -name '*.ko' -printf '%f\n' | sed 's/\.ko$//' | sort); do
		[ -d "/sys/module/$m" ] || continue
		loaded=$((loaded + 1))
		[ -e "/sys/kernel/btf/$m" ] && with+=" $m"
	done
	if [ "$LR_MODE" = nobtf ] && [ -n "$with" ]; then
		_lr_say "modules with BTF although --nobtf:$with"
		return 1
	fi
	_lr_say "$loaded Lustre modules loaded; with BTF:${with:- none}"
}

lustre_real_start()
{
	local t0 t
	local mdt_kb=$((${LES_LR_MDT_MB:-256} * 1024)) ost_kb=$((${LES_LR_OST_MB:-1024} * 1024)) i

	LR_MODE=btf
	LR_TIMES=
	case ${1:-} in
	--nobtf) LR_MODE=nobtf ;;
	"") ;;
	*) _lr_say "usage: lustre_real_start [--nobtf]"; return 2 ;;
	esac
	[ "${LES_VM:-}" = 1 ] || { _lr_say "not in the guest (test/vm/run-in-vm)"; return 1; }
	t0=$(_lr_uptime)
	LR_INST=$(_lr_install_dir) || return 1
	_lr_say "install tree $LR_INST ($LR_MODE), NID $LR_NID"

	_lr_overlay_modules || { _lr_fail "overlay on /lib/modules"; return 1; }
	_lr_install_userland || { _lr_fail "copying the userland"; return 1; }
	modprobe loop || { _lr_fail "modprobe loop"; return 1; }
	_lr_stage setup "$t0"

	t=$(_lr_uptime)
	_lr_network || { _lr_fail "dummy interface $LR_IF $LR_IP"; return 1; }
	modprobe lnet || { _lr_fail "modprobe lnet"; return 1; }
	lctl network up >/dev/null || { _lr_fail "lctl network up ($LR_NID)"; return 1; }
	lctl list_nids | grep -qx "$LR_NID" ||
		{ _lr_fail "LNet has not $LR_NID: $(lctl list_nids | tr '\n' ' ')"; return 1; }
	_lr_stage lnet "$t"

	t=$(_lr_uptime)
	for m in $LR_MODULES; do
		modprobe "$m" || { _lr_fail "modprobe $m"; return 1; }
	done
	_lr_check_btf || { _lr_fail "module BTF"; return 1; }
	# The pinger's obd_ping every 25 s lands at random in a test's window,
	# sometimes before any access op has taught the tool which mount an
	# import serves (such a ping has no mount, by design). Set before any
	# import exists, an hour keeps pings out of the counters compared.
	lctl set_param ping_interval=3600 >/dev/null ||
		{ _lr_fail "lctl set_param ping_interval=3600"; return 1; }
	_lr_stage modprobe "$t"

	t=$(_lr_uptime)
	mkdir -p $LR_SCRATCH /mnt/lustre-mdt0 $LR_MNT
	mkfs.lustre --fsname=$LR_FSNAME --mgs --mdt --index=0 --reformat \
		--device-size=$mdt_kb $LR_SCRATCH/mdt0.img >$LR_SCRATCH/mkfs-mdt.log 2>&1 ||
		{ cat $LR_SCRATCH/mkfs-mdt.log; _lr_fail "mkfs.lustre MGS+MDT"; return 1; }
	for ((i = 0; i < LR_OSTS; i++)); do
		mkdir -p /mnt/lustre-ost$i
		mkfs.lustre --fsname=$LR_FSNAME --ost --index=$i --mgsnode="$LR_NID" --reformat \
			--device-size=$ost_kb $LR_SCRATCH/ost$i.img >$LR_SCRATCH/mkfs-ost$i.log 2>&1 ||
			{ cat $LR_SCRATCH/mkfs-ost$i.log; _lr_fail "mkfs.lustre OST $i"; return 1; }
	done
	_lr_stage mkfs "$t"

	t=$(_lr_uptime)
	mount -t lustre -o loop $LR_SCRATCH/mdt0.img /mnt/lustre-mdt0 || { _lr_fail "mount MGS+MDT"; return 1; }
	for ((i = 0; i < LR_OSTS; i++)); do
		mount -t lustre -o loop $LR_SCRATCH/ost$i.img /mnt/lustre-ost$i ||
			{ _lr_fail "mount OST $i"; return 1; }
	done
	for ((i = 0; i < LR_OSTS; i++)); do
		_lr_wait_osp $i || { _lr_fail "the MDT did not connect to OST $i within 60 s"; return 1; }
	done
	_lr_stage servers "$t"

	t=$(_lr_uptime)
	mount -t lustre "$LR_NID:/$LR_FSNAME" $LR_MNT || { _lr_fail "mount the client"; return 1; }
	_lr_stage client "$t"
	_lr_stage total "$t0"
}

lustre_real_stop()
{
	local st=0 t0 mp servers

	t0=$(_lr_uptime)
	servers="/mnt/lustre-ost[0-9] /mnt/lustre-mdt0"
	[ "${1:-}" != --client ] || servers=
	for mp in $LR_MNT2 $LR_MNT $servers; do
		grep -q " $mp lustre " /proc/mounts || continue
		umount "$mp" || { _lr_say "umount $mp failed"; st=1; }
	done
	if [ "${1:-}" = --rmmod ] && [ $st -eq 0 ]; then
		lustre_rmmod || { _lr_say "lustre_rmmod failed"; st=1; }
	fi
	_lr_stage stop "$t0"
	return $st
}

# Two guests: the virtio NIC that run-in-vm's LES_VM_QEMU_ARGS adds, as $LR_IF.
_lr_nic_up()
{
	modprobe virtio_net || return 1
	for _ in $(seq 100); do
		[ -e "/sys/class/net/$LR_IF" ] && return 0
		sleep 0.1
	done
	echo "no $LR_IF: $(ls /sys/class/net)"
	return 1
}

lustre_real_jobid()
{
	lctl set_param "jobid_var=$1" || return 1
	[ -z "${2:-}" ] || lctl set_param "jobid_name=$2"
}

lustre_real_clear_stats()
{
	lctl set_param -n llite.*.stats=clear osc.*.stats=clear mdc.*.stats=clear >/dev/null
}

# lustre_real_stat PARAM NAME [sum]: from `lctl get_param -n PARAM` (the
# first device only; a single-node setup has one llite, osc and mdc), the
# sample count of counter NAME, or with "sum" the sum of its values (e.g.
# bytes of write_bytes). Prints nothing when the counter is not there:
#   write_bytes  16 samples [bytes] 1048576 1048576 16777216 17592186044416
lustre_real_stat()
{
	lctl get_param -n "$1" 2>/dev/null | awk -v n="$2" -v f="${3:-count}" '
		$1 == n && !done { print (f == "sum" ? $7 : $2); done = 1 }'
}
