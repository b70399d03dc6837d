// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * les-churn: short-lived processes, many jobs and many users, for the soak
 * test (test/soak/README.md).
 *
 *   les-churn FILE --leaders N --forks K --jobs J --uids U --uid-base B
 *             [--workers W] [--tail T] [--seconds S]
 *
 * N leaders are exec'd, W at a time, each as user B + i % U with
 * SLURM_JOB_ID=soak-(i % J) in an environment of its own: a new job for
 * the tool to learn from the exec. A leader reads one byte of FILE (on the
 * observed mount), then forks K - 1 children that each read it once more
 * and exit: N * K processes in all, every one with a record of its own. The last T leaders
 * write a line "PID JOB UID" for themselves and each of their children to
 * fd 3, so that the test can look their records up. With --seconds the
 * leaders are paced over S seconds instead of as fast as they go.
 * Progress (leaders done) goes to stderr every 10 %. Exit status 0 when
 * every process ran and read, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct churn {
	const char *file;
	long leaders, forks, jobs, uids, uid_base, workers, tail, seconds;
};

static void tail_line(long pid, const char *job, long uid)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "%ld %s %ld\n", pid, job, uid);

	/* One write per line: fd 3 is O_APPEND, shared by every leader. */
	if (write(3, line, n) != n)
		_exit(1);
}

/* One read of the observed file: the record each child leaves. */
static int read_fd(int fd)
{
	char byte;

	return pread(fd, &byte, 1, 0) == 1 ? 0 : -1;
}

/*
 * A leader: it opens the file and reads it, then K - 1 children read it
 * through the descriptor they inherit, from the page cache: a record each
 * without a round trip to the FUSE daemon, which would bound the rate.
 */
static int leader(const char *file, long forks, int tail)
{
	const char *job = getenv("SLURM_JOB_ID");
	long uid = getuid(), i;
	int fd = open(file, O_RDONLY | O_CLOEXEC), ok, status;
	pid_t pid;

	if (fd < 0)
		return 1;
	ok = read_fd(fd) == 0;
	if (tail)
		tail_line(getpid(), job ? job : "", uid);
	for (i = 1; i < forks; i++) {
		/*
		 * vfork: a process of its own (pid, exit, the tool's fork
		 * notice) without copying page tables, so that a million fit
		 * in minutes. The child only makes system calls.
		 */
		pid = vfork();
		if (pid == 0)
			_exit(read_fd(fd) == 0 ? 0 : 1);
		if (pid < 0)
			return 1;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			ok = 0;
		if (tail)
			tail_line(pid, job ? job : "", uid);
	}
	close(fd);
	return ok ? 0 : 1;
}

static pid_t spawn_leader(const struct churn *c, const char *self, long i)
{
	char job[48], forks[24], *argv[6], *envp[3];
	uid_t uid = c->uid_base + i % c->uids;
	pid_t pid;

	snprintf(job, sizeof(job), "SLURM_JOB_ID=soak-%ld", i % c->jobs);
	snprintf(forks, sizeof(forks), "%ld", c->forks);
	argv[0] = "les-churn";
	argv[1] = "--leader";
	argv[2] = (char *)c->file;
	argv[3] = forks;
	argv[4] = i >= c->leaders - c->tail ? "tail" : "quiet";
	argv[5] = NULL;
	envp[0] = job;
	envp[1] = "PATH=/usr/bin:/bin";
	envp[2] = NULL;
	/* vfork as above; the raw calls change this task's credentials only. */
	pid = vfork();
	if (pid == 0) {
		if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, uid, uid, uid) ||
		    syscall(SYS_setresuid, uid, uid, uid))
			_exit(126);
		execve(self, argv, envp);
		_exit(127);
	}
	return pid;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Leaders i = w, w + W, ...: one worker process of W. */
static int worker(const struct churn *c, const char *self, long w)
{
	double start = now_s(), due;
	long i, failed = 0, step = c->leaders / 10 ? c->leaders / 10 : 1;
	int status;
	pid_t pid;

	for (i = w; i < c->leaders; i += c->workers) {
		if (c->seconds) {
			due = start + (double)c->seconds * i / c->leaders;
			while (now_s() < due)
				usleep(1000);
		}
		pid = spawn_leader(c, self, i);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed++;
		if (w == 0 && i % step < c->workers)
			fprintf(stderr, "les-churn: %ld of %ld leaders, %.0f s\n", i, c->leaders,
				now_s() - start);
	}
	if (failed)
		fprintf(stderr, "les-churn: worker %ld: %ld leaders failed\n", w, failed);
	return failed ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: les-churn FILE --leaders N --forks K --jobs J --uids U "
			"--uid-base B [--workers W] [--tail T] [--seconds S]\n");
	return 2;
}

static int parse(struct churn *c, int argc, char **argv)
{
	static const char *names[] = {"--leaders",  "--forks",	 "--jobs", "--uids",
				      "--uid-base", "--workers", "--tail", "--seconds"};
	long *slots[] = {&c->leaders,  &c->forks,   &c->jobs, &c->uids,
			 &c->uid_base, &c->workers, &c->tail, &c->seconds};
	char *end;
	int a, k;

	c->file = argv[1];
	c->workers = 2;
	for (a = 2; a + 1 < argc; a += 2) {
		for (k = 0; k < 8 && strcmp(argv[a], names[k]); k++)
			;
		if (k == 8)
			return -1;
		errno = 0;
		*slots[k] = strtol(argv[a + 1], &end, 10);
		if (errno || *end || *slots[k] < 0)
			return -1;
	}
	if (a != argc || c->leaders < 1 || c->forks < 1 || c->jobs < 1 || c->uids < 1 ||
	    c->workers < 1)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct churn c = {0};
	char self[4096];
	ssize_t n;
	long w;
	int status, failed = 0;

	if (argc == 5 && !strcmp(argv[1], "--leader"))
		return leader(argv[2], strtol(argv[3], NULL, 10), !strcmp(argv[4], "tail"));
	if (argc < 2 || parse(&c, argc, argv))
		return usage();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("les-churn: /proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	if (c.tail && fcntl(3, F_GETFD) < 0) {
		fprintf(stderr, "les-churn: --tail needs fd 3 open (O_APPEND)\n");
		return 2;
	}
	for (w = 0; w < c.workers; w++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(worker(&c, self, w));
		if (pid < 0) {
			perror("les-churn: fork");
			return 1;
		}
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	return failed;
}
