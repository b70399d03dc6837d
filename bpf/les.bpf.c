// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * All probes of lustre-ebpf-stream in one object, so they share the ring
 * buffer, the counters and the per-thread op table. Userspace disables the
 * programs of the attach methods it did not choose before load. Each plane
 * header includes what it uses; the order here does not matter.
 */
#include "access_fn.bpf.h"
#include "access_syscall.bpf.h"
#include "proc.bpf.h"
#include "rpc_fuse.bpf.h"
#include "rpc_lnet.bpf.h"
#include "rpc_ptlrpc.bpf.h"
#include "rpc_ptlrpc_srv.bpf.h"
#include "rpc_sunrpc.bpf.h"
#include "rpc_nfsd.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
