// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * All probes of lustre-ebpf-stream in one object, so they share the ring
 * buffer, the counters and the per-thread op table. Userspace disables the
 * programs of the attach methods it did not choose before load.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "les_record.h"
#include "compat.h"
#include "common.bpf.h"
#include "rpc_fuse.bpf.h"
/* Before the syscall plane: it asks fn_covers_op() what to leave out. */
#include "access_fn.bpf.h"
#include "access_syscall.bpf.h"
/* After access_fn.bpf.h: the fentry twins read arguments with fn_ctx_arg(). */
#include "rpc_ptlrpc.bpf.h"
#include "rpc_sunrpc.bpf.h"
#include "proc.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
