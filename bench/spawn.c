// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Many distinct short-lived processes: N runs of /bin/true, PAR at a time,
 * each a new pid (fork notice + exec notice for the tool).
 *
 *   spawn N PAR same|distinct
 *
 * same: every child has this process's environment (one job);
 * distinct: every child gets its own SLURM_JOB_ID, the worst case for the
 * per-job attribution table. Prints:  spawned=N seconds=S per_s=R
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char *child_argv[] = { "true", NULL };
	char job[64], *distinct_env[] = { "PATH=/usr/bin:/bin", job, NULL };
	unsigned long n, par, started = 0, running = 0;
	bool distinct;
	double t0;

	if (argc != 4)
		return 2;
	n = strtoul(argv[1], NULL, 10);
	par = strtoul(argv[2], NULL, 10);
	distinct = !strcmp(argv[3], "distinct");
	if (!par)
		return 2;
	t0 = now_s();
	while (started < n || running) {
		pid_t pid;

		if (started < n && running < par) {
			snprintf(job, sizeof(job), "SLURM_JOB_ID=%lu", 100000 + started);
			if (posix_spawn(&pid, "/bin/true", NULL, NULL, child_argv,
					distinct ? distinct_env : environ)) {
				perror("posix_spawn");
				return 1;
			}
			started++;
			running++;
			continue;
		}
		if (wait(NULL) > 0)
			running--;
	}
	t0 = now_s() - t0;
	printf("spawned=%lu seconds=%.3f per_s=%.0f\n", n, t0, (double)n / t0);
	return 0;
}
