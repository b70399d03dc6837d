// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Filters: option lists to the masks the BPF programs test. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "decode/filter.h"
#include "model/ops.h"

#define ALL_ACCESS_OPS ((1u << LES_OP_MAX) - 1)

/* The names a list may hold, as one comma list for an error message. */
static void list_valid(char *out, size_t len, const char *(*name_of)(unsigned int), unsigned int n)
{
	size_t used = 0;

	out[0] = '\0';
	for (unsigned int i = 0; i < n && used < len; i++) {
		int w = snprintf(out + used, len - used, "%s%s", i ? ", " : "", name_of(i));

		if (w < 0)
			return;
		used += (size_t)w;
	}
}

static const char *intent_name_of(unsigned int i)
{
	return les_intent_name((enum les_intent)i);
}

/*
 * Split a comma list and OR in the bit of each name; empty names are errors,
 * and an unknown one is answered with the names that are known.
 */
static int parse_list(const char *list, int (*lookup)(const char *),
		      const char *(*name_of)(unsigned int), unsigned int n_names, const char *what,
		      uint32_t *mask, char *err, size_t errlen)
{
	char name[64];
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ",");
		int bit;

		if (n == 0 || n >= sizeof(name)) {
			snprintf(err, errlen, "invalid %s list '%s'", what, list);
			return -EINVAL;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		bit = lookup(name);
		if (bit < 0) {
			char valid[512];

			list_valid(valid, sizeof(valid), name_of, n_names);
			snprintf(err, errlen, "unknown %s '%s' (valid: %s)", what, name, valid);
			return -EINVAL;
		}
		*mask |= 1u << bit;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int les_filter_parse_ops(const char *list, uint32_t *mask, char *err, size_t errlen)
{
	return parse_list(list, les_op_from_name, les_op_name, LES_OP_MAX, "op", mask, err, errlen);
}

int les_filter_parse_intents(const char *list, uint32_t *mask, char *err, size_t errlen)
{
	return parse_list(list, les_intent_from_name, intent_name_of, LES_INTENT_MAX, "intent", mask,
			  err, errlen);
}

uint32_t les_filter_access_ops(uint32_t ops_mask, uint32_t intents_mask)
{
	uint32_t ops = ops_mask ? ops_mask : ALL_ACCESS_OPS;

	if (!intents_mask)
		return ops_mask;
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		if (!(intents_mask & (1u << les_op_intent(op))))
			ops &= ~(1u << op);
	/* Nothing passes: still a filter, unlike 0. */
	return ops ? ops : 1u << LES_OP_MAX;
}

/* FUSE requests whose name is not an access op's, and the op they serve. */
static const struct {
	const char *fuse;
	enum les_access_op op;
} fuse_aliases[] = {
	{"release", LES_OP_CLOSE},	 {"flush", LES_OP_CLOSE},
	{"releasedir", LES_OP_CLOSE},	 {"opendir", LES_OP_OPEN},
	{"readdirplus", LES_OP_READDIR}, {"fsyncdir", LES_OP_FSYNC},
	{"syncfs", LES_OP_FSYNC},	 {"removexattr", LES_OP_SETXATTR},
	{"rename2", LES_OP_RENAME},	 {"access", LES_OP_GETATTR},
	{"statx", LES_OP_GETATTR},	 {"tmpfile", LES_OP_CREATE},
	{"fallocate", LES_OP_WRITE},	 {"copy_file_range", LES_OP_WRITE},
	{"lseek", LES_OP_READ},
};

int les_filter_fuse_op(unsigned int opcode)
{
	const char *name = les_fuse_opcode_name(opcode);

	for (size_t i = 0; i < sizeof(fuse_aliases) / sizeof(fuse_aliases[0]); i++)
		if (strcmp(name, fuse_aliases[i].fuse) == 0)
			return (int)fuse_aliases[i].op;
	return les_op_from_name(name);
}

void les_filter_fuse_opcodes(uint32_t access_ops, uint64_t bits[2], bool *high)
{
	if (!access_ops) {
		bits[0] = bits[1] = ~0ULL;
		*high = true;
		return;
	}
	bits[0] = bits[1] = 0;
	*high = false;
	for (unsigned int opcode = 0; opcode < LES_FUSE_OPCODE_BITS; opcode++) {
		int op = les_filter_fuse_op(opcode);

		if (op >= 0 && (access_ops & (1u << op)))
			bits[opcode / 64] |= 1ULL << (opcode % 64);
	}
}

int les_filter_comm(const char *name, uint64_t out[2])
{
	size_t n = strlen(name);
	char buf[16] = {0};

	/* The kernel keeps 15 bytes of a command name: longer ones never match. */
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, name, n);
	memcpy(out, buf, sizeof(buf));
	return 0;
}

bool les_filter_job_passes(const char *want, const char *job_id)
{
	return !want || (job_id && strcmp(want, job_id) == 0);
}
