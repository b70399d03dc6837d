// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The table of record kinds (see kinds.h). */
#include <string.h>
#include "model/kinds.h"

#define KIND_ROW(kind, name, size, shape, formatter, decoder) \
	[kind] = {name, size, shape, shape != LES_SHAPE_NOTICE},

static const struct les_rec_kind_info kinds[LES_REC_KIND_MAX] = {LES_REC_KINDS(KIND_ROW)};

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

enum les_rec_shape les_rec_kind_shape(unsigned int kind)
{
	const struct les_rec_kind_info *k = les_rec_kind_info(kind);

	return k ? k->shape : LES_SHAPE_NOTICE;
}

unsigned int les_rec_op_kind_by_name(const char *name)
{
	for (unsigned int kind = 0; name && kind < LES_REC_KIND_MAX; kind++)
		if (les_rec_kind_is_op(kind) && strcmp(name, kinds[kind].name) == 0)
			return kind;
	return LES_REC_NONE;
}
