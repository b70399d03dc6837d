// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The traced process of the benchmarks: a tight loop of one cheap file
 * operation on one open file.
 *
 *   oploop OP FILE cost CHUNKS OPS_PER_CHUNK
 *	Time CHUNKS chunks of OPS_PER_CHUNK ops in the thread's CPU time (the
 *	machine is shared: wall time would count other tenants); print the
 *	median and the fastest chunk in ns per op:  ns_median=N ns_min=N
 *   oploop OP FILE wall CHUNKS OPS_PER_CHUNK
 *	The same in wall-clock time (CLOCK_MONOTONIC): what the traced process
 *	waits, including the consumer preempting it on a shared CPU.
 *   oploop OP FILE rate SECONDS THREADS [TARGET_PER_S]
 *	THREADS threads, each with its own descriptor, for SECONDS; paced to
 *	TARGET_PER_S ops/s in total when given. Prints:  ops=N seconds=S per_s=R
 *
 * OP: pread (1 byte at offset 0: served by the page cache once warm, so it
 * never reaches the filesystem), fstat (the raw syscall: glibc's fstat()
 * is newfstatat with an empty path), getppid (not a file op: the cost of a
 * syscall no probe records), stat (newfstatat on FILE's absolute path: a
 * path syscall, which the syscall fallback decides at its exit), relstat
 * (the same by the name relative to FILE's directory, made the cwd),
 * openclose (open FILE read-only and close it: two syscalls, one open and
 * one close op; on FUSE the open is a request to the daemon).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum op { OP_PREAD, OP_FSTAT, OP_GETPPID, OP_STAT, OP_RELSTAT, OP_OPENCLOSE };

static enum op op;
static const char *file;
static const char *stat_path; /* FILE, or its name after chdir for relstat */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int open_file(void)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "oploop: %s: %s\n", file, strerror(errno));
		exit(1);
	}
	return fd;
}

static inline void one_op(int fd)
{
	struct stat st;
	char byte;

	switch (op) {
	case OP_PREAD:
		if (pread(fd, &byte, 1, 0) < 0)
			abort();
		break;
	case OP_FSTAT:
		if (syscall(SYS_fstat, fd, &st))
			abort();
		break;
	case OP_GETPPID:
		syscall(SYS_getppid);
		break;
	case OP_STAT:
	case OP_RELSTAT:
		if (fstatat(AT_FDCWD, stat_path, &st, 0))
			abort();
		break;
	case OP_OPENCLOSE:
		close(open_file());
		break;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* CPU time of this thread: time the scheduler gave to others is left out. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	return now_ns();
}

static int run_cost(unsigned long chunks, unsigned long per_chunk, uint64_t (*clock_ns)(void))
{
	uint64_t *ns = calloc(chunks, sizeof(*ns));
	int fd = open_file();

	if (!ns || !chunks || !per_chunk)
		return 2;
	for (unsigned long i = 0; i < per_chunk / 10 + 1; i++) /* warm the cache */
		one_op(fd);
	for (unsigned long c = 0; c < chunks; c++) {
		uint64_t t0 = clock_ns();

		for (unsigned long i = 0; i < per_chunk; i++)
			one_op(fd);
		ns[c] = clock_ns() - t0;
	}
	qsort(ns, chunks, sizeof(*ns), cmp_u64);
	printf("ns_median=%.1f ns_min=%.1f\n", (double)ns[chunks / 2] / (double)per_chunk,
	       (double)ns[0] / (double)per_chunk);
	close(fd);
	free(ns);
	return 0;
}

struct worker {
	pthread_t thread;
	uint64_t end_ns;
	double per_s; /* 0: as fast as possible */
	uint64_t ops;
};

#define PACE_BATCH 64 /* ops between two looks at the clock */

static void *rate_worker(void *arg)
{
	struct worker *w = arg;
	int fd = open_file();
	uint64_t start = now_ns(), t = start;

	while (t < w->end_ns) {
		for (int i = 0; i < PACE_BATCH; i++)
			one_op(fd);
		w->ops += PACE_BATCH;
		t = now_ns();
		if (w->per_s > 0) {
			/* Ahead of schedule: sleep until this many ops are due. */
			uint64_t due = start + (uint64_t)((double)w->ops * 1e9 / w->per_s);

			if (due > t + 50000) {
				struct timespec d = { .tv_sec = (time_t)((due - t) / 1000000000ULL),
						      .tv_nsec = (long)((due - t) % 1000000000ULL) };

				nanosleep(&d, NULL);
				t = now_ns();
			}
		}
	}
	close(fd);
	return NULL;
}

static int run_rate(double seconds, unsigned int threads, double target)
{
	struct worker *w = calloc(threads, sizeof(*w));
	uint64_t t0 = now_ns(), ops = 0;
	double elapsed;

	if (!w || !threads)
		return 2;
	for (unsigned int i = 0; i < threads; i++) {
		w[i].end_ns = t0 + (uint64_t)(seconds * 1e9);
		w[i].per_s = target / threads;
		if (pthread_create(&w[i].thread, NULL, rate_worker, &w[i]))
			return 1;
	}
	for (unsigned int i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		ops += w[i].ops;
	}
	elapsed = (double)(now_ns() - t0) / 1e9;
	printf("ops=%llu seconds=%.3f per_s=%.0f\n", (unsigned long long)ops, elapsed,
	       (double)ops / elapsed);
	free(w);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: oploop OP FILE cost|wall CHUNKS OPS\n"
				"       oploop OP FILE rate SECONDS THREADS [PER_S]\n"
				"OP: pread, fstat, getppid, stat, relstat, openclose\n");
		return 2;
	}
	if (!strcmp(argv[1], "pread"))
		op = OP_PREAD;
	else if (!strcmp(argv[1], "fstat"))
		op = OP_FSTAT;
	else if (!strcmp(argv[1], "getppid"))
		op = OP_GETPPID;
	else if (!strcmp(argv[1], "stat"))
		op = OP_STAT;
	else if (!strcmp(argv[1], "relstat"))
		op = OP_RELSTAT;
	else if (!strcmp(argv[1], "openclose"))
		op = OP_OPENCLOSE;
	else
		return 2;
	file = argv[2];
	stat_path = file;
	if (op == OP_RELSTAT) {
		char *dir = strdup(file), *slash = strrchr(dir, '/');

		if (!slash || chdir(slash == dir ? "/" : (*slash = 0, dir))) {
			fprintf(stderr, "oploop: relstat needs an absolute FILE\n");
			return 2;
		}
		stat_path = strrchr(file, '/') + 1;
	}
	if (!strcmp(argv[3], "cost"))
		return run_cost(strtoul(argv[4], NULL, 10), strtoul(argv[5], NULL, 10), cpu_ns);
	if (!strcmp(argv[3], "wall"))
		return run_cost(strtoul(argv[4], NULL, 10), strtoul(argv[5], NULL, 10), wall_ns);
	if (!strcmp(argv[3], "rate"))
		return run_rate(strtod(argv[4], NULL), (unsigned int)strtoul(argv[5], NULL, 10),
				argc > 6 ? strtod(argv[6], NULL) : 0);
	return 2;
}
