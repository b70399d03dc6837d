// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every value of the record ABI's enums has a JSON name, and a unique one. */
#include <check.h>
#include <errno.h>
#include <string.h>
#include "model/kinds.h"
#include "model/ops.h"
#include "model/waits.h"

typedef const char *(*name_fn)(unsigned int);

static void assert_named(const char *what, name_fn fn, unsigned int max, unsigned int first)
{
	for (unsigned int i = first; i < max; i++) {
		const char *n = fn(i);

		ck_assert_msg(n && strcmp(n, "unknown") != 0, "%s %u has no name", what, i);
		for (unsigned int j = first; j < i; j++)
			ck_assert_msg(strcmp(n, fn(j)) != 0, "%s %u and %u share the name %s", what,
				      i, j, n);
	}
	ck_assert_str_eq(fn(max), "unknown");
}

static const char *op_name(unsigned int op)
{
	return les_op_name(op);
}

START_TEST(test_names)
{
	assert_named("op", op_name, LES_OP_MAX, 0);
	assert_named("counter", les_counter_name, LES_CNT_MAX, 0);
	assert_named("probe", les_probe_name, LES_PROBE_MAX, 0);
	assert_named("attach method", les_attach_method_name, LES_ATTACH_MAX, 0);
	assert_named("rpc proto", les_rpc_proto_name, LES_PROTO_MAX, 0);
	assert_named("rpc event", les_rpc_event_name, LES_EV_MAX, 0);
}
END_TEST

/* One name table per kind of thing, every entry named (they once drifted). */
START_TEST(test_kind_and_event_names)
{
	for (unsigned int k = 1; k < LES_REC_KIND_MAX; k++)
		ck_assert_ptr_nonnull(les_rec_kind_name(k));
	ck_assert_str_eq(les_rec_kind_name(LES_REC_PROC_FORK), "proc_fork");
	ck_assert_ptr_null(les_rec_kind_name(LES_REC_KIND_MAX));
	/* The kinds table: an unknown or reserved kind is never a record. */
	ck_assert(les_rec_kind_size_ok(LES_REC_RPC, sizeof(struct les_rec_rpc)));
	ck_assert(!les_rec_kind_size_ok(LES_REC_RPC, sizeof(struct les_rec_rpc) - 1));
	ck_assert(!les_rec_kind_size_ok(LES_REC_PROC_EXIT, 4096));
	ck_assert(!les_rec_kind_size_ok(LES_REC_KIND_MAX, 4096));
	ck_assert(les_rec_kind_is_op(LES_REC_RPC_EVENT));
	ck_assert(!les_rec_kind_is_op(LES_REC_PROC_EXEC));
	ck_assert(!les_rec_kind_is_op(LES_REC_NONE));
	ck_assert_uint_eq(les_rec_op_kind_by_name("rpc_event"), LES_REC_RPC_EVENT);
	ck_assert_uint_eq(les_rec_op_kind_by_name("proc_exec"), LES_REC_NONE);
	ck_assert_uint_eq(les_rec_op_kind_by_name("stats"), LES_REC_NONE);
	for (unsigned int e = 0; e < LES_EV_MAX; e++)
		ck_assert_int_eq(les_rpc_event_index(les_rpc_event_name(e)), (int)e);
	ck_assert_int_eq(les_rpc_event_index("no_such_event"), -1);
	ck_assert_int_eq(les_rpc_event_index(NULL), -1);
}
END_TEST

START_TEST(test_op_round_trip)
{
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		ck_assert_int_eq(les_op_from_name(les_op_name(op)), (int)op);
	ck_assert_int_eq(les_op_from_name("nope"), -1);
}
END_TEST

START_TEST(test_intents)
{
	ck_assert_int_eq(les_op_intent(LES_OP_READ), LES_INTENT_DATA_READ);
	ck_assert_int_eq(les_op_intent(LES_OP_WRITE), LES_INTENT_DATA_WRITE);
	ck_assert_int_eq(les_op_intent(LES_OP_FSYNC), LES_INTENT_SYNC);
	ck_assert_int_eq(les_op_intent(LES_OP_RENAME), LES_INTENT_NAMESPACE_MUTATION);
	ck_assert_int_eq(les_op_intent(LES_OP_GET_ACL), LES_INTENT_NAMESPACE_READ);
	ck_assert_int_eq(les_intent_from_name("namespace_read"), LES_INTENT_NAMESPACE_READ);
}
END_TEST

START_TEST(test_errno_classes)
{
	ck_assert_ptr_null(les_errno_class_name(les_errno_class(0)));
	ck_assert_str_eq(les_errno_class_name(les_errno_class(ETIMEDOUT)), "timeout");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(-ENOTCONN)), "notconn");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(EACCES)), "perm");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(ENOENT)), "notfound");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(EIO)), "io");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(EAGAIN)), "again");
	ck_assert_str_eq(les_errno_class_name(les_errno_class(ENOSPC)), "other");
}
END_TEST

START_TEST(test_fuse_opcodes)
{
	ck_assert_str_eq(les_fuse_opcode_name(16), "write");
	ck_assert_str_eq(les_fuse_opcode_name(15), "read");
	ck_assert_str_eq(les_fuse_opcode_name(45), "rename2");
	ck_assert_str_eq(les_fuse_opcode_name(7), "unknown");
	ck_assert_str_eq(les_fuse_opcode_name(100000), "unknown");
}
END_TEST

/*
 * The one wait rule keeps both sinks' earlier rules, record for record:
 * the aggregate windows skipped an rpc record with nested_wait; Prometheus
 * counted a PtlRPC queue_wait, an LDLM grant wait, and any other
 * protocol's wait not nested. They differ on purpose (see waits.h).
 */
START_TEST(test_wait_rule)
{
	for (unsigned int kind = 0; kind < LES_REC_KIND_MAX; kind++)
		for (unsigned int proto = 0; proto < LES_PROTO_MAX; proto++)
			for (unsigned int op = 0; op < LES_RPC_OP_MAX; op++)
				for (int nested = 0; nested < 2; nested++) {
					struct les_event ev = {.kind = kind,
							       .proto_id = proto,
							       .rpc_op = op,
							       .nested_wait = nested};
					enum les_wait_part w = les_wait_part(&ev);
					bool counted = proto == LES_PROTO_PTLRPC
							       ? op == LES_RPC_OP_QUEUE_WAIT
						       : proto == LES_PROTO_LDLM
							       ? op == LES_RPC_OP_LOCK_COMPLETION
							       : !nested;

					ck_assert_int_eq(les_wait_is_outer(w),
							 !(kind == LES_REC_RPC && nested));
					if (kind == LES_REC_RPC)
						ck_assert_int_eq(les_wait_is_piece(w), counted);
				}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("names");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_op_round_trip);
	tcase_add_test(tc, test_kind_and_event_names);
	tcase_add_test(tc, test_intents);
	tcase_add_test(tc, test_errno_classes);
	tcase_add_test(tc, test_fuse_opcodes);
	tcase_add_test(tc, test_wait_rule);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
