// SPDX-License-Identifier: GPL-2.0
/*
 * les_lustre_standin: TEST-ONLY stand-in for a Lustre client, see README.md.
 * Starts the ptlrpcd worker, then registers the filesystem type "lustre".
 */
#include <linux/module.h>

#include "standin.h"

static int __init les_standin_init(void)
{
	int rc;

	rc = les_ptlrpc_init();
	if (rc)
		return rc;
	rc = les_llite_init();
	if (rc)
		les_ptlrpc_fini();
	return rc;
}

static void __exit les_standin_exit(void)
{
	les_llite_fini();
	les_ptlrpc_fini();
}

module_init(les_standin_init);
module_exit(les_standin_exit);

MODULE_DESCRIPTION(
	"Test-only Lustre client stand-in (llite/PtlRPC/LDLM names, in-memory store, no network)");
MODULE_AUTHOR("lustre-ebpf-stream");
MODULE_LICENSE("GPL");
