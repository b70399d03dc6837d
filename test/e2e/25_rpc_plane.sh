#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The RPC plane on this kernel: the FUSE request plane in the shape shared
# with PtlRPC and sunrpc (proto, op, opcode, req_id, parent_op_id), the
# in-flight object of the stats records (a slow request counted on its
# mount while it runs, nothing at the end), and --list-probes naming every
# PtlRPC, LDLM and sunrpc probe with its method or the reason there is none.
# PtlRPC and sunrpc records themselves need Lustre and NFS: they are proven
# in the stock-kernel guest (test/vm/t_rpc_lustre.sh, t_rpc_nfs.sh).

. "$(dirname "$0")/lib.sh"
les_init 25_rpc_plane

M=$WORK/mnt
SLOW_MS=2500
# Only mkdir is slow: the stats records (every second) catch it in flight.
les_testfs "$M" --latency-ms=$SLOW_MS --latency-ops=mkdir

les_start "$WORK/out.jsonl" --mount "$M" --stats-interval 1s
mkdir "$M/slow" &
MKDIR_PID=$!
wait $MKDIR_PID
stat "$M/slow" >/dev/null
sleep 1.5
les_stop
les_eq "tool exit status" 0 "$LES_STATUS"

OUT=$WORK/out.jsonl
q() { les_jq "$OUT" "$1"; }

les_true "every line is valid JSON" jq -e . "$OUT"
les_eq "the slow mkdir: one FUSE rpc record of mkdir's pid" 1 \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"mkdir\" and .pid==$MKDIR_PID)] | length")"
les_eq "FUSE record shape: proto, opcode, req_id, parent_op_id, no PtlRPC/sunrpc fields" true \
	"$(q "[.[] | select(.type==\"rpc\" and .op==\"mkdir\")][0] |
		.proto==\"fuse\" and .opcode==9 and (.req_id|type)==\"number\"
		and (.parent_op_id|type)==\"number\" and (has(\"opcode_name\")|not)
		and (has(\"execute_ns\")|not) and (has(\"function\")|not)")"
les_eq "its parent access op waited for it (rpc_wait_ns >= ${SLOW_MS} ms)" true \
	"$(q "([.[] | select(.type==\"rpc\" and .op==\"mkdir\")][0].parent_op_id) as \$id
		| [.[] | select(.type==\"access\" and .op_id==\$id)][0]
		| .rpc_wait_ns >= $((SLOW_MS * 1000000)) and .rpc_count >= 1")"
les_eq "stats while the mkdir ran: one FUSE request in flight on the mount" true \
	"$(q "[.[] | select(.type==\"stats\") | .inflight] | any(.by_proto.fuse >= 1
		and any(.by_mount[]; .proto==\"fuse\" and .mount==\"$M\" and .requests >= 1))")"
les_eq "every stats record has the in-flight object for all protocols" true \
	"$(q "[.[] | select(.type==\"stats\") | .inflight] | length > 0 and all(
		(.total|type)==\"number\" and (.by_proto|keys)==[\"fuse\",\"ptlrpc\",\"sunrpc\"]
		and (.by_mount|type)==\"array\")")"
les_eq "final stats: nothing in flight" "0 0" \
	"$(q "[.[] | select(.type==\"stats\" and .final)][0].inflight | \"\(.total) \(.by_mount|length)\"")"

# --list-probes: every RPC-plane probe with a method, or none and why.
"$LES_BIN" --list-probes=json >"$WORK/probes.json" || les_fail "--list-probes=json failed"
les_eq "--list-probes: 24 PtlRPC/LDLM client functions (osc_brw_prep_request, ptlrpc_request_alloc_pack, lustre_msg_get_status, sptlrpc_cli_free_reqbuf, ptlrpc_invalidate_import_thread, class_new_import among them), 8 server functions (ptlrpc_nrs_req_add ... ptlrpc_send_reply, target_bulk_io, osd_fini_iobuf), 4 sunrpc client tracepoints and 8 server ones (svc_xprt_enqueue, svc_process, svc_stats_latency, svc_send, nfsd_read/write_start/done)" 44 \
	"$(jq '[.probes[] | select(.plane=="rpc" and (.proto=="ptlrpc" or .proto=="ldlm" or .proto=="sunrpc"))] | length' "$WORK/probes.json")"
les_eq "--list-probes: each has a method, or none with a reason" true \
	"$(jq '[.probes[] | select(.plane=="rpc" and .proto != "fuse" and .proto != null)]
		| length > 0 and all(.method != "none" or (.reason | type)=="string")' "$WORK/probes.json")"
les_eq "--list-probes: where PtlRPC opcodes come from" true \
	"$(jq '[.probes[] | select(.proto=="ptlrpc")] | length > 0 and all(.opcode | type=="string")' "$WORK/probes.json")"
les_eq "LES_PTLRPC_REQMSG_OFFSET is taken (without Lustre BTF)" true \
	"$(LES_PTLRPC_REQMSG_OFFSET=32 "$LES_BIN" --list-probes=json |
		jq '[.probes[] | select(.proto=="ptlrpc")][0].opcode | test("offset 32")')"
les_eq "a bad LES_PTLRPC_REQMSG_OFFSET is refused, opcodes left out" true \
	"$(LES_PTLRPC_REQMSG_OFFSET=x "$LES_BIN" --list-probes=json |
		jq '[.probes[] | select(.proto=="ptlrpc")][0].opcode | startswith("none")')"
les_done
