// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "les_record.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
