// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/stat and status fields, from real files of this process and from odd texts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "enrich/procfs.h"

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

START_TEST(test_own_files)
{
	char buf[4096];
	uint32_t ppid = 0, uid = 12345;
	uint64_t flags = 0;

	slurp("/proc/self/stat", buf, sizeof(buf));
	ck_assert(les_procfs_stat(buf, &ppid, &flags));
	ck_assert_uint_eq(ppid, (uint32_t)getppid());
	slurp("/proc/self/status", buf, sizeof(buf));
	ck_assert(les_procfs_status_uid(buf, &uid));
	ck_assert_uint_eq(uid, getuid());
}
END_TEST

START_TEST(test_odd_texts)
{
	uint32_t ppid = 7, uid = 7;
	uint64_t flags = 0;

	/* a comm with ") " and a newline: the fields follow the last ')' */
	ck_assert(les_procfs_stat("42 (a) S 9 (b\n) R 314 42 42 0 -1 2097152 0 0", &ppid, &flags));
	ck_assert_uint_eq(ppid, 314);
	ck_assert_uint_eq(flags, 2097152);
	ck_assert(!les_procfs_stat("42 no paren S 1 2 3 4 5 6", &ppid, &flags));
	ck_assert(!les_procfs_stat("42 (x) S", &ppid, &flags));
	ck_assert(!les_procfs_stat("", &ppid, &flags));
	ck_assert_uint_eq(ppid, 314); /* untouched on failure */
	ck_assert(les_procfs_status_uid("Uid:\t1000\t1000\t1000\t1000\n", &uid));
	ck_assert_uint_eq(uid, 1000);
	ck_assert(les_procfs_status_uid("Name:\tUid: 5\nUid:\t0\t0\t0\t0\n", &uid));
	ck_assert_uint_eq(uid, 0);
	ck_assert(!les_procfs_status_uid("Name:\tx\nGid:\t1\n", &uid));
	ck_assert(!les_procfs_status_uid("Name:\tx\nUid:", &uid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("procfs");
	TCase *tc = tcase_create("procfs");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_own_files);
	tcase_add_test(tc, test_odd_texts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
