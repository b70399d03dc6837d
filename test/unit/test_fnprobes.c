// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The access plane's function table: every row names a real op of a known
 * filesystem, a function at most once, the module it lives in, and a target
 * argument kind; every op of the vocabulary has at least one Lustre row.
 */
#include <check.h>
#include <string.h>
#include "probe/fnprobes.h"
#include "model/ops.h"

START_TEST(test_rows_are_well_formed)
{
	size_t n;
	const struct les_fn_entry *t = les_fn_table(&n);

	ck_assert_uint_gt(n, 0);
	ck_assert_uint_le(n, LES_FN_TABLE_MAX);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(t[i].family == LES_FS_LUSTRE || t[i].family == LES_FS_NFS ||
				      t[i].family == LES_FS_FUSE,
			      "row %zu (%s): family %d", i, t[i].func, t[i].family);
		ck_assert_msg((unsigned int)t[i].op < LES_OP_MAX, "row %zu: op %d", i, t[i].op);
		ck_assert_msg(t[i].func && t[i].func[0], "row %zu: no function", i);
		ck_assert_msg(t[i].kinds != 0, "row %zu (%s): no target kind", i, t[i].func);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(strcmp(t[i].func, t[j].func) != 0, "%s listed twice",
				      t[i].func);
	}
}
END_TEST

START_TEST(test_lustre_covers_the_vocabulary)
{
	size_t n;
	const struct les_fn_entry *t = les_fn_table(&n);
	unsigned int seen = 0;

	for (size_t i = 0; i < n; i++)
		if (t[i].family == LES_FS_LUSTRE)
			seen |= 1u << t[i].op;
	for (unsigned int op = 0; op < LES_OP_MAX; op++)
		ck_assert_msg(seen & (1u << op), "no llite function for op %s", les_op_name(op));
}
END_TEST

START_TEST(test_prog_names_parse)
{
	enum les_attach_method method;
	bool multi;
	int slot;

	ck_assert(les_fn_prog_parse("fn_fentry_3", &slot, &method, &multi));
	ck_assert_int_eq(slot, 3);
	ck_assert_int_eq(method, LES_ATTACH_FENTRY);
	ck_assert(!multi);
	ck_assert(les_fn_prog_parse("fn_fexit_0", &slot, &method, &multi));
	ck_assert_int_eq(slot, 0);
	ck_assert_int_eq(method, LES_ATTACH_FENTRY);
	ck_assert(les_fn_prog_parse("fn_kretprobe_17", &slot, &method, &multi));
	ck_assert_int_eq(slot, 17);
	ck_assert_int_eq(method, LES_ATTACH_KPROBE);
	ck_assert(les_fn_prog_parse("fn_kprobe_multi", &slot, &method, &multi));
	ck_assert(multi);
	ck_assert_int_eq(slot, -1);
	ck_assert_int_eq(method, LES_ATTACH_KPROBE);
	multi = false;
	ck_assert(les_fn_prog_parse("fn_kprobe_multi_cast", &slot, &method, &multi));
	ck_assert(multi);
	ck_assert_int_eq(slot, -1);
	ck_assert(!les_fn_prog_parse("fn_kprobe_multi_x", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("fn_fexit_", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("fn_fexit_1x", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("fn_kprobe_-1", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("fn_kprobe_99999", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("sys_enter", &slot, &method, &multi));
	ck_assert(!les_fn_prog_parse("fuse_send_btf", &slot, &method, &multi));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fnprobes");
	TCase *tc = tcase_create("table");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rows_are_well_formed);
	tcase_add_test(tc, test_lustre_covers_the_vocabulary);
	tcase_add_test(tc, test_prog_names_parse);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
