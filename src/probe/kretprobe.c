// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Return probes made in tracefs, with maxactive: see kretprobe.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "probe/kfacts.h"
#include "probe/kretprobe.h"

static int kprobe_events_write_at(const char *root, const char *line)
{
	char path[256];
	ssize_t len = (ssize_t)strlen(line), n;
	int fd;

	if (!root)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/kprobe_events", root);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, (size_t)len);
	n = n < 0 ? -errno : n;
	close(fd);
	return n == len ? 0 : n < 0 ? (int)n : -EIO;
}

static int kprobe_events_write(const char *line)
{
	return kprobe_events_write_at(les_tracefs_root(), line);
}

/* The tracepoint id tracefs gave the event, or a negative errno. */
static int event_id(const char *event)
{
	const char *root = les_tracefs_root();
	char path[256];
	FILE *f;
	int id = -ENOENT;

	snprintf(path, sizeof(path), "%s/events/kprobes/%s/id", root ? root : "", event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", &id) != 1)
		id = -EINVAL;
	fclose(f);
	return id;
}

/* "les<pid>_<seq>_<func>", [A-Za-z0-9_] only, as tracefs wants event names. */
static void event_name(char *buf, size_t len, unsigned int seq, const char *func)
{
	int n = snprintf(buf, len, "les%d_%u_%s", (int)getpid(), seq, func);

	for (int i = 0; i < n && (size_t)i < len - 1; i++)
		if (!(buf[i] == '_' || (buf[i] >= '0' && buf[i] <= '9') ||
		      (buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z')))
			buf[i] = '_';
}

static int remove_event_at(const char *root, const char *event)
{
	char line[LES_KRETPROBE_NAME_LEN + 8];

	/* Bounded: an event name of ours is shorter; gcc cannot tell. */
	snprintf(line, sizeof(line), "-:%.*s\n", (int)LES_KRETPROBE_NAME_LEN - 1, event);
	return kprobe_events_write_at(root, line);
}

static void remove_event(const char *event)
{
	remove_event_at(les_tracefs_root(), event);
}

/*
 * The pid in an event name of ours ("les<pid>_<seq>_<func>", in a line
 * "r1024:kprobes/les<pid>_..."), 0 when the line is not one.
 */
static pid_t event_pid(const char *line, char *event, size_t len)
{
	const char *slash = strchr(line, '/'), *p;
	size_t n;
	long pid = 0;

	if (!slash || strncmp(slash + 1, "les", 3) != 0)
		return 0;
	for (p = slash + 4; *p >= '0' && *p <= '9' && pid < 4194304; p++)
		pid = pid * 10 + (*p - '0');
	n = strcspn(slash + 1, " \n");
	if (*p != '_' || pid <= 0 || n >= len)
		return 0;
	memcpy(event, slash + 1, n);
	event[n] = '\0';
	return (pid_t)pid;
}

#define REAP_BATCH 256

/* Up to REAP_BATCH events of dead runs, read before any is removed. */
static size_t stale_events(const char *root, char (*event)[LES_KRETPROBE_NAME_LEN])
{
	char path[256], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kprobe_events", root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < REAP_BATCH && fgets(line, sizeof(line), f)) {
		pid_t pid = event_pid(line, event[n], LES_KRETPROBE_NAME_LEN);

		/* A live run's, or one in a PID namespace we do not see: kept (in use: EBUSY). */
		if (pid > 0 && kill(pid, 0) && errno == ESRCH)
			n++;
	}
	fclose(f);
	return n;
}

int les_kretprobes_reap(const char *root)
{
	static char event[REAP_BATCH][LES_KRETPROBE_NAME_LEN];
	int removed = 0, pass_removed, passes = 0;
	size_t n;

	if (!root)
		return 0;
	/* A batch at a time (tracefs' list changes under a reader as events go), 16 at most. */
	do {
		n = stale_events(root, event);
		pass_removed = 0;
		for (size_t i = 0; i < n; i++)
			pass_removed += remove_event_at(root, event[i]) == 0;
		removed += pass_removed;
	} while (n == REAP_BATCH && pass_removed && ++passes < 16);
	return removed;
}

struct bpf_link *les_kretprobe_attach(struct les_kretprobes *k, struct bpf_program *prog,
				      const char *func)
{
	struct perf_event_attr attr = {.size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT};
	char line[LES_KRETPROBE_NAME_LEN + 160], *event;
	struct bpf_link *link;
	int err, id, pfd;

	if (k->n >= LES_KRETPROBES_MAX) {
		errno = E2BIG;
		return NULL;
	}
	event = k->event[k->n];
	event_name(event, LES_KRETPROBE_NAME_LEN, k->seq++, func);
	snprintf(line, sizeof(line), "r%d:kprobes/%s %s\n", LES_KRETPROBE_MAXACTIVE, event, func);
	err = kprobe_events_write(line);
	if (err) {
		errno = -err;
		return NULL;
	}
	id = event_id(event);
	if (id < 0) {
		remove_event(event);
		errno = -id;
		return NULL;
	}
	attr.config = (__u64)id;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	pfd = (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0) {
		err = errno;
		remove_event(event);
		errno = err;
		return NULL;
	}
	link = bpf_program__attach_perf_event(prog, pfd);
	if (!link) {
		err = errno;
		close(pfd);
		remove_event(event);
		errno = err;
		return NULL;
	}
	k->n++;
	return link;
}

uint64_t les_kretprobes_missed(const struct les_kretprobes *k)
{
	const char *root = les_tracefs_root();
	char path[256], line[512], name[128];
	unsigned long long hit, missed;
	uint64_t total = 0;
	FILE *f;

	if (!k->n || !root)
		return 0;
	snprintf(path, sizeof(path), "%s/kprobe_profile", root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %llu %llu", name, &hit, &missed) != 3)
			continue;
		for (size_t i = 0; i < k->n; i++)
			if (strcmp(name, k->event[i]) == 0)
				total += missed;
	}
	fclose(f);
	return total;
}

void les_kretprobes_remove(struct les_kretprobes *k)
{
	for (size_t i = 0; i < k->n; i++)
		remove_event(k->event[i]);
	k->n = 0;
}
