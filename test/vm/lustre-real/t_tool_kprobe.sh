#!/bin/bash
# t_tool_kprobe.sh: the tool on a real Lustre 2.17.57 client whose modules
# have no BTF (as most sites build them): kprobes (kprobe_multi for llite),
# checked exactly against Lustre's own counters. See tool-lib.sh.
#   LES_VM_KVER=6.12.117+deb12-amd64 LES_VM_MEM=4096 \
#       test/vm/run-in-vm test/vm/lustre-real/t_tool_kprobe.sh
set -u
# shellcheck source=test/vm/lustre-real/tool-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/tool-lib.sh"
guest_init t_tool_kprobe
trap 'tracer_kill; guest_remove_work' EXIT
guest_require_tool
lr_tool_test kprobe --nobtf
