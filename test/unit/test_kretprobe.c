// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The return probes a killed run left in tracefs: removed at the next
 * start when their run is gone, kept when it lives. A directory stands
 * in for tracefs: writes to its kprobe_events append, so what the reaper
 * asked tracefs to remove is read back from the file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe/kretprobe.h"

/* A pid that was a process and is no more. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(test_reap)
{
	char root[] = "/tmp/les-kretprobe.XXXXXX", path[128], want[128];
	pid_t dead = dead_pid(), alive = getpid();
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/kprobe_events", root);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "r1024:kprobes/les%d_0_ll_file_read_iter ll_file_read_iter\n", (int)dead);
	fprintf(f, "r1024:kprobes/les%d_1_ptlrpc_queue_wait ptlrpc_queue_wait\n", (int)alive);
	fprintf(f, "p:kprobes/lesser_known do_sys_open\n"); /* not ours: no pid */
	fprintf(f, "r:kprobes/other_42_x vfs_read\n");
	fclose(f);
	ck_assert_int_eq(les_kretprobes_reap(root), 1);
	snprintf(want, sizeof(want), "\n-:les%d_0_ll_file_read_iter\n", (int)dead);
	ck_assert_msg(strstr(slurp(path), want), "%s", slurp(path));
	snprintf(want, sizeof(want), "-:les%d_", (int)alive);
	ck_assert_ptr_null(strstr(slurp(path), want));
	ck_assert_ptr_null(strstr(slurp(path), "-:lesser"));
	ck_assert_ptr_null(strstr(slurp(path), "-:other"));
	/* No tracefs, or no kprobe_events in it: nothing to do. */
	ck_assert_int_eq(les_kretprobes_reap(NULL), 0);
	unlink(path);
	ck_assert_int_eq(les_kretprobes_reap(root), 0);
	rmdir(root);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kretprobe");
	TCase *tc = tcase_create("reap");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_reap);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
