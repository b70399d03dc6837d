// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The table of record kinds (see kinds.h). */
#include <string.h>
#include "model/kinds.h"

static const struct les_rec_kind_info kinds[LES_REC_KIND_MAX] = {
	[LES_REC_ACCESS] = {"access", sizeof(struct les_rec_access), true},
	[LES_REC_RPC] = {"rpc", sizeof(struct les_rec_rpc), true},
	[LES_REC_RPC_EVENT] = {"rpc_event", sizeof(struct les_rec_rpc_event), true},
	[LES_REC_PROC_EXEC] = {"proc_exec", sizeof(struct les_rec_proc), false},
	/* Reserved: named in the stats record's counts, never in the ring. */
	[LES_REC_PROC_EXIT] = {"proc_exit", 0, false},
	[LES_REC_PROC_FORK] = {"proc_fork", sizeof(struct les_rec_fork), false},
};

const struct les_rec_kind_info *les_rec_kind_info(unsigned int kind)
{
	return kind < LES_REC_KIND_MAX && kinds[kind].name ? &kinds[kind] : NULL;
}

const char *les_rec_kind_name(unsigned int kind)
{
	const struct les_rec_kind_info *k = les_rec_kind_info(kind);

	return k ? k->name : NULL;
}

bool les_rec_kind_size_ok(unsigned int kind, size_t size)
{
	const struct les_rec_kind_info *k = les_rec_kind_info(kind);

	return k && k->size && size >= k->size;
}

bool les_rec_kind_is_op(unsigned int kind)
{
	const struct les_rec_kind_info *k = les_rec_kind_info(kind);

	return k && k->op_record;
}

unsigned int les_rec_op_kind_by_name(const char *name)
{
	for (unsigned int kind = 0; name && kind < LES_REC_KIND_MAX; kind++)
		if (les_rec_kind_is_op(kind) && strcmp(name, kinds[kind].name) == 0)
			return kind;
	return LES_REC_NONE;
}
