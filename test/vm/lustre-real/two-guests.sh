#!/bin/bash
# two-guests.sh: a real Lustre over two qemu guests, on the host: the
# servers (MGS+MDT, OST: master on ldiskfs) in a 6.12 guest
# (guest-server.sh), a client (Lustre 2.15.8 or master) in a second guest
# on another Debian kernel, joined by a qemu socket netdev on 127.0.0.1
# (virtio-net, eth0 in both; 192.168.77.1 and .2; LNet tcp0 on eth0).
#
# Usage: two-guests.sh [CLIENT_SCRIPT [ARGS...]]
#   CLIENT_SCRIPT  run in the client guest (default guest-client.sh: mount,
#                  workload as SLURM_JOB_ID=501, Lustre's counters, unmount;
#                  another script can source guest-client.sh for
#                  lustre_client_start/lustre_client_stop)
# Exit status: 0 when both guests' scripts passed; else the client's status
# when it failed, else the server's.
#
# Steps: start the server guest (it listens on the socket); once qemu
# listens, start the client guest (it boots and loads its modules while
# the servers come up). When the server guest prints LR-SERVER-READY this
# script creates server-ready in a scratch directory that the client guest
# reads through its view of the host's / (/run/les-vm/host); the client
# mounts then. When the client guest has ended, client-done tells the
# server guest to check its job_stats and stop.
#
# Environment:
#   LES_LR_CLIENT_VERSION  2.15.8 (default) or master; or server: the servers'
#                          build (master on their kernel, modules with BTF) as
#                          the client too
#   LES_LR_CLIENT_KVER     the client guest's kernel (default 6.1.0-57-amd64;
#                          or 5.10.0-32-amd64)
#   LES_LR_SERVER_KVER     default 6.12.117+deb12-amd64
#   LES_LR_PORT            the socket's TCP port on 127.0.0.1 (default: the
#                          first free one from a random start in 17800-17899)
#   LES_LR_LOGS            directory for server.log and client.log (default:
#                          the scratch directory, kept and named at the end)
#   LES_LR_SERVER_MEM      MiB (default 4096); LES_LR_CLIENT_MEM (2048)
#   LES_LR_TIMEOUT         run-in-vm's LES_VM_TIMEOUT of each guest (1500 s)
#   LES_LR_CLIENT_NOBTF    1: the client loads its modules without .BTF
#   LES_LR_CLIENT_USERLAND client: lctl, lfs, mount.lustre of the client
#                          build when it has them (default), else of the
#                          server build; server: always the server build's
#   LES_LR_INSTALL, LES_LR_CLIENT_INSTALL, LES_LR_UTILS_INSTALL: use these
#                          build directories instead of the ones
#                          build/build-client --print-dir name (the
#                          userland one defaults to the server build)
#   LES_LR_JOBID           the workload's job ID (501)
# The builds must exist: test/vm/lustre-real/build (servers) and
# test/vm/lustre-real/build-client VERSION KVER (client); this script only
# reads them (--print-dir).
set -uo pipefail

prog=lustre-real/two-guests
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vm_dir=$(dirname "$here")
cversion=${LES_LR_CLIENT_VERSION:-2.15.8}
ckver=${LES_LR_CLIENT_KVER:-6.1.0-57-amd64}
skver=${LES_LR_SERVER_KVER:-6.12.117+deb12-amd64}
timeout_s=${LES_LR_TIMEOUT:-1500}
jobid=${LES_LR_JOBID:-501}
server_ip=192.168.77.1
client_ip=192.168.77.2
spid=
sync=
logs=
t0=$SECONDS

die()
{
	echo "$prog: $*" >&2
	exit 125
}

say()
{
	echo "$prog: [$((SECONDS - t0)) s] $*"
}

port_free()
{
	[ -z "$(ss -Htan "( sport = :$1 or dport = :$1 )" 2>/dev/null)" ]
}

pick_port()
{
	local i p

	if [ -n "${LES_LR_PORT:-}" ]; then
		port_free "$LES_LR_PORT" || die "port $LES_LR_PORT is in use (LES_LR_PORT)"
		echo "$LES_LR_PORT"
		return
	fi
	for ((i = 0; i < 100; i++)); do
		p=$((17800 + (RANDOM + i) % 100))
		port_free "$p" && { echo "$p"; return; }
	done
	die "no free TCP port in 17800-17899"
}

# At exit: the server guest must not outlive this script. It stops by
# itself once client-done exists; only if it does not, its process group
# (started by setsid below: run-in-vm and its qemu, nothing else) is killed.
cleanup()
{
	local i

	if [ -n "$spid" ]; then
		touch "$sync/client-done" 2>/dev/null
		for ((i = 0; i < 120; i++)); do
			kill -0 "$spid" 2>/dev/null || break
			sleep 1
		done
		if kill -0 "$spid" 2>/dev/null; then
			echo "$prog: the server guest did not stop; killing its process group $spid" >&2
			kill -TERM -- "-$spid" 2>/dev/null
		fi
	fi
	# The scratch directory goes unless it holds the logs.
	[ -z "$sync" ] || [ "$logs" = "$sync" ] || rm -rf "$sync"
}

main()
{
	local sdir cdir udir d client_script port sync_note broker w qemu_net st_c st_s t_ready=

	client_script=${1:-$here/guest-client.sh}
	[ $# -gt 0 ] && shift
	[ -f "$client_script" ] || die "no client script $client_script"
	client_script=$(realpath -e -- "$client_script")
	if [ -n "${LES_LR_INSTALL:-}" ]; then
		sdir=$LES_LR_INSTALL
	else
		sdir=$(LES_LR_KVER=$skver "$here/build" --print-dir) ||
			die "no server build at $sdir: run test/vm/lustre-real/build"
	fi
	if [ -n "${LES_LR_CLIENT_INSTALL:-}" ]; then
		cdir=$LES_LR_CLIENT_INSTALL
	elif [ "$cversion" = server ]; then
		cdir=$sdir
		ckver=$skver
	else
		cdir=$("$here/build-client" --print-dir "$cversion" "$ckver") ||
			die "no client build at $cdir: run test/vm/lustre-real/build-client $cversion $ckver"
	fi
	for d in "$sdir" "$cdir"; do
		[ -e "$d/.complete" ] || die "incomplete build $d"
	done
	udir=${LES_LR_UTILS_INSTALL:-$sdir}
	port=$(pick_port)
	sync=$(mktemp -d "${TMPDIR:-/tmp}/lr-two-guests.XXXXXX") || die "mktemp failed"
	logs=${LES_LR_LOGS:-$sync}
	mkdir -p "$logs" || die "cannot create $logs"
	say "servers: $skver, $sdir"
	say "client: Lustre $cversion on $ckver, $cdir"
	say "socket 127.0.0.1:$port; scratch $sync; logs $logs"

	trap cleanup EXIT
	# shellcheck disable=SC2054 # the commas belong to qemu's options
	qemu_net="-netdev socket,id=n0,listen=127.0.0.1:$port -device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:01,romfile="
	# shellcheck disable=SC2016 # expanded by that bash
	setsid env LES_VM_KVER="$skver" LES_VM_MEM="${LES_LR_SERVER_MEM:-4096}" LES_VM_TIMEOUT="$timeout_s" \
		LES_VM_QEMU_ARGS="$qemu_net" LES_LR_INSTALL="$sdir" LES_LR_IP=$server_ip LES_LR_PREFIX=24 \
		LES_LR_SYNC="$sync" LES_LR_JOBID="$jobid" LES_LR_SERVE_S=$((timeout_s - 120)) \
		bash -c '"$1" "$2" >"$3" 2>&1; echo $? >"$4"' _ \
		"$vm_dir/run-in-vm" "$here/guest-server.sh" "$logs/server.log" "$sync/server.status" &
	spid=$!
	# The client connects to the listening socket: wait until qemu has it.
	for ((w = 0; w < 120; w++)); do
		[ -z "$(ss -Htln "( sport = :$port )" 2>/dev/null)" ] || break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.5
	done
	[ -n "$(ss -Htln "( sport = :$port )" 2>/dev/null)" ] ||
		{ tail -n 30 "$logs/server.log" >&2; die "the server guest's qemu does not listen on 127.0.0.1:$port"; }
	say "server guest started (qemu listens)"

	# server-ready / server-failed for the client guest, from the server's log.
	(
		while kill -0 "$spid" 2>/dev/null; do
			if grep -q -a '^LR-SERVER-READY' "$logs/server.log" 2>/dev/null; then
				touch "$sync/server-ready"
				echo "$((SECONDS - t0))" >"$sync/server-ready.time"
				exit 0
			fi
			sleep 1
		done
		touch "$sync/server-failed"
	) &
	sync_note=$!

	# The client's requests to the servers (LR-REQUEST N WHAT on its console)
	# become req.N here for the server guest; its answer (between
	# LR-REPLY-BEGIN N and LR-REPLY-END N on its console) becomes reply.N.
	(
		n=1
		while kill -0 "$spid" 2>/dev/null; do
			if [ ! -e "$sync/req.$n" ]; then
				what=$(tr -d '\r' <"$logs/client.log" 2>/dev/null |
					sed -n "s/^LR-REQUEST $n \([a-z-]*\)\$/\1/p" | head -n 1)
				[ -z "$what" ] || echo "$what" >"$sync/req.$n"
			elif tr -d '\r' <"$logs/server.log" | grep -q -a "^LR-REPLY-END $n\$"; then
				tr -d '\r' <"$logs/server.log" |
					sed -n "/^LR-REPLY-BEGIN $n\$/,/^LR-REPLY-END $n\$/p" | sed '1d;$d' \
					>"$sync/reply.$n.tmp" && mv "$sync/reply.$n.tmp" "$sync/reply.$n"
				n=$((n + 1))
				continue
			fi
			sleep 0.5
		done
	) &
	broker=$!

	qemu_net="-netdev socket,id=n0,connect=127.0.0.1:$port -device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:02,romfile="
	say "client guest: $client_script $*"
	env LES_VM_KVER="$ckver" LES_VM_MEM="${LES_LR_CLIENT_MEM:-2048}" LES_VM_TIMEOUT="$timeout_s" \
		LES_VM_QEMU_ARGS="$qemu_net" LES_LR_CLIENT_INSTALL="$cdir" LES_LR_UTILS_INSTALL="$udir" \
		LES_LR_IP=$client_ip LES_LR_PREFIX=24 LES_LR_SERVER_NID=$server_ip@tcp \
		LES_LR_SYNC="$sync" LES_LR_JOBID="$jobid" LES_LR_WAIT_S=$((timeout_s - 120)) \
		LES_VM_CELLS_TAG="lustre-$cversion" \
		"$vm_dir/run-in-vm" "$client_script" "$@" 2>&1 | tee "$logs/client.log"
	st_c=${PIPESTATUS[0]}
	say "client guest ended: status $st_c"
	touch "$sync/client-done"
	wait "$spid"
	spid=
	st_s=$(cat "$sync/server.status" 2>/dev/null || echo 125)
	kill "$sync_note" "$broker" 2>/dev/null
	wait "$sync_note" "$broker" 2>/dev/null
	[ -e "$sync/server-ready.time" ] && t_ready=$(cat "$sync/server-ready.time")
	echo "----- server guest ($logs/server.log):"
	sed 's/^/server| /' "$logs/server.log"
	echo "-----"
	say "server guest ended: status $st_s; servers were ready at ${t_ready:-never} s"
	say "client $st_c, server $st_s, wall $((SECONDS - t0)) s; logs in $logs"
	[ "$st_c" -eq 0 ] || return "$st_c"
	return "$st_s"
}

main "$@"
