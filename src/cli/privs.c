// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Capability dropping and the check of the --config path (see privs.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "sink/outfile.h"
#include "cli/privs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

/* Names as capabilities(7) and /proc/PID/status tools print them. */
static const char *const cap_names[] = {
	"cap_chown",
	"cap_dac_override",
	"cap_dac_read_search",
	"cap_fowner",
	"cap_fsetid",
	"cap_kill",
	"cap_setgid",
	"cap_setuid",
	"cap_setpcap",
	"cap_linux_immutable",
	"cap_net_bind_service",
	"cap_net_broadcast",
	"cap_net_admin",
	"cap_net_raw",
	"cap_ipc_lock",
	"cap_ipc_owner",
	"cap_sys_module",
	"cap_sys_rawio",
	"cap_sys_chroot",
	"cap_sys_ptrace",
	"cap_sys_pacct",
	"cap_sys_admin",
	"cap_sys_boot",
	"cap_sys_nice",
	"cap_sys_resource",
	"cap_sys_time",
	"cap_sys_tty_config",
	"cap_mknod",
	"cap_lease",
	"cap_audit_write",
	"cap_audit_control",
	"cap_setfcap",
	"cap_mac_override",
	"cap_mac_admin",
	"cap_syslog",
	"cap_wake_alarm",
	"cap_block_suspend",
	"cap_audit_read",
	"cap_perfmon",
	"cap_bpf",
	"cap_checkpoint_restore",
};

#define N_CAP_NAMES (sizeof(cap_names) / sizeof(cap_names[0]))

void les_privs_caps_names(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (unsigned int cap = 0; cap < 64; cap++) {
		char num[16];
		const char *name = num;
		int n;

		if (!(mask & LES_CAP_BIT(cap)))
			continue;
		if (cap < N_CAP_NAMES)
			name = cap_names[cap];
		else
			snprintf(num, sizeof(num), "cap_%u", cap);
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", name);
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += (size_t)n;
	}
	if (!off)
		snprintf(buf, len, "none");
}

/* The three sets of the calling thread, as masks. */
struct capsets {
	uint64_t effective, permitted, inheritable;
};

static int caps_get(struct capsets *s)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {0};

	*s = (struct capsets){ 0 }; /* empty sets when capget fails */
	if (syscall(SYS_capget, &hdr, d))
		return errno ? -errno : -EPERM;
	s->effective = d[0].effective | (uint64_t)d[1].effective << 32;
	s->permitted = d[0].permitted | (uint64_t)d[1].permitted << 32;
	s->inheritable = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct capsets *s)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	d[0].effective = (uint32_t)s->effective;
	d[1].effective = (uint32_t)(s->effective >> 32);
	d[0].permitted = (uint32_t)s->permitted;
	d[1].permitted = (uint32_t)(s->permitted >> 32);
	d[0].inheritable = (uint32_t)s->inheritable;
	d[1].inheritable = (uint32_t)(s->inheritable >> 32);
	return syscall(SYS_capset, &hdr, d) ? -errno : 0;
}

uint64_t les_privs_effective(void)
{
	struct capsets s;

	return caps_get(&s) ? 0 : s.effective;
}

static unsigned int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	unsigned int last = CAP_CHECKPOINT_RESTORE;

	if (f) {
		if (fscanf(f, "%u", &last) != 1 || last > 63)
			last = CAP_CHECKPOINT_RESTORE;
		fclose(f);
	}
	return last;
}

/* Threads of this process besides the caller: they would keep their sets. */
static int count_other_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0;
}

/* Remove from the bounding set everything not in keep (needs CAP_SETPCAP). */
static int drop_bounding(uint64_t keep)
{
	unsigned int last = last_cap();

	for (unsigned int cap = 0; cap <= last; cap++) {
		if (keep & LES_CAP_BIT(cap))
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -errno;
	}
	return 0;
}

int les_privs_drop(uint64_t keep, les_privs_probe_fn probe, void *probe_ctx,
		   struct les_privs_result *res, char *err, size_t errlen)
{
	struct capsets cur, s;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = caps_get(&cur);
	if (ret) {
		snprintf(err, errlen, "capget: %s", strerror(-ret));
		return ret;
	}
	keep &= cur.permitted;
	/*
	 * Step 1: lower the effective set to what is kept (plus CAP_SETPCAP
	 * for the bounding set), the permitted set intact, and see whether
	 * the maps still answer. Only then is it known whether CAP_BPF stays.
	 */
	s = cur;
	s.effective = keep | (cur.permitted & LES_CAP_BIT(CAP_SETPCAP));
	s.inheritable = 0;
	ret = caps_set(&s);
	if (ret) {
		snprintf(err, errlen, "capset: %s", strerror(-ret));
		return ret;
	}
	if (probe && probe(probe_ctx) == -EPERM && (cur.permitted & LES_CAP_BIT(CAP_BPF))) {
		keep |= LES_CAP_BIT(CAP_BPF);
		res->bpf_for_maps = true;
	}
	/* Step 2: the bounding and ambient sets, so that no exec regains anything. */
	if (cur.permitted & LES_CAP_BIT(CAP_SETPCAP)) {
		ret = drop_bounding(keep);
		if (ret) {
			snprintf(err, errlen, "dropping the bounding set: %s", strerror(-ret));
			return ret;
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/* Step 3: the final sets, then no_new_privs. */
	s.effective = keep;
	s.permitted = keep;
	s.inheritable = 0;
	ret = caps_set(&s);
	if (!ret && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "dropping capabilities: %s", strerror(-ret));
		return ret;
	}
	ret = caps_get(&cur);
	if (ret || cur.effective != keep || cur.permitted != keep) {
		snprintf(err, errlen, "capabilities not dropped as asked");
		return -EPERM;
	}
	res->kept = keep;
	res->other_threads = count_other_threads();
	return 0;
}

int les_privs_check_path(const char *what, const char *path, char *err, size_t errlen)
{
	char why[256];
	const char *base;
	struct stat st;
	int dfd, ret;

	if (!path || strcmp(path, "-") == 0)
		return 0;
	/* The directory is examined by fstat of what was opened, not by name. */
	dfd = les_outfile_open_dir(path, &base, why, sizeof(why));
	if (dfd < 0) {
		snprintf(err, errlen, "%s %s: %s", what, path, why);
		return dfd;
	}
	ret = fstatat(dfd, base, &st, 0) ? 0 : les_outfile_check_file(&st, why, sizeof(why));
	close(dfd);
	if (ret)
		snprintf(err, errlen, "%s %s: %s", what, path, why);
	return ret;
}
