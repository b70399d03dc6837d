// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cgroup path parsing: Slurm, PBS, Kubernetes, container runtimes. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "enrich/cgroup.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID   "6f1c8e2a-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
#define UID_  "6f1c8e2a_3b4d_4e5f_9a0b_1c2d3e4f5a6b"

struct cg_case {
	const char *path;
	int found;
	enum les_sched sched;
	const char *job_id;
	const char *pod_uid;
	enum les_container_runtime rt;
	const char *container_id;
};

static void check_case(const struct cg_case *c)
{
	struct les_cgroup_info info;

	memset(&info, 0x5a, sizeof(info)); /* must be fully overwritten */
	ck_assert_int_eq(les_cgroup_parse(c->path, strlen(c->path), &info), c->found);
	ck_assert_msg(info.sched == c->sched, "%s: sched %u", c->path, info.sched);
	ck_assert_str_eq(info.job_id, c->job_id);
	ck_assert_str_eq(info.pod_uid, c->pod_uid);
	ck_assert_msg(info.runtime == c->rt, "%s: runtime %u", c->path, info.runtime);
	ck_assert_str_eq(info.container_id, c->container_id);
}

static const struct cg_case slurm_cases[] = {
	{"/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0", 1, LES_SCHED_SLURM, "1234",
	 "", 0, ""},
	{"/system.slice/slurmstepd.scope/job_1234/step_batch/user/task_special", 1, LES_SCHED_SLURM,
	 "1234", "", 0, ""},
	{"/system.slice/slurmstepd.scope/job_77", 1, LES_SCHED_SLURM, "77", "", 0, ""},
	{"/system.slice/node1_slurmstepd.scope/job_5/step_0", 1, LES_SCHED_SLURM, "5", "", 0, ""},
	{"/slurm/uid_1000/job_1234/step_batch", 1, LES_SCHED_SLURM, "1234", "", 0, ""},
	{"/slurm/uid_1000/job_1234/step_0/task_3", 1, LES_SCHED_SLURM, "1234", "", 0, ""},
	{"/slurm_node042/uid_1000/job_98765/step_extern", 1, LES_SCHED_SLURM, "98765", "", 0, ""},
	{"/sys/fs/cgroup/freezer/slurm/uid_0/job_3/step_0", 1, LES_SCHED_SLURM, "3", "", 0, ""},
	/* The daemon itself and the scope without a job: no job. */
	{"/system.slice/slurmd.service", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/slurmstepd.scope/system", 0, LES_SCHED_NONE, "", "", 0, ""},
	/* job_ outside a Slurm hierarchy, or not a number: no job. */
	{"/user.slice/job_1234", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/slurm/uid_1000/job_12a4/step_0", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/slurm/uid_1000/job_/step_0", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/slurm/uid_1000/job_123456789012345678901/step_0", 0, LES_SCHED_NONE, "", "", 0, ""},
	/* Slurm's layout only: job_N right below the scope or uid_N, nowhere else. */
	{"/slurm/job_1/job_2", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/slurmstepd.scope/step_0/job_5", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/slurmstepd.scope/system/job_5", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/slurmstepd.scope/job_5", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/slurmd.service/job_5", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/myslurm.service/job_3", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/slurm/uid_1000/step_0/job_3", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/user.slice/user-1000.slice/session-3.scope/job_5", 0, LES_SCHED_NONE, "", "", 0, ""},
	/* A user's own delegated subtree (user@UID.service) cannot forge a job. */
	{"/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/job_999", 0,
	 LES_SCHED_NONE, "", "", 0, ""},
	{"/user.slice/user-1000.slice/user@1000.service/system.slice/slurmstepd.scope/job_999/step_0/"
	 "user/task_0",
	 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/slurm/uid_1000/job_999/step_0",
	 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" HEX64
	 ".scope/container/system.slice/slurmstepd.scope/job_7",
	 1, LES_SCHED_NONE, "", "", LES_CRT_PODMAN, HEX64},
	/* A slurmd in a pod (as the host sees it): the job, the pod and the container. */
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/cri-containerd-" HEX64 ".scope/system.slice/slurmstepd.scope/job_12/step_0",
	 1, LES_SCHED_SLURM, "12", UID, LES_CRT_CONTAINERD, HEX64},
};

static const struct cg_case pbs_cases[] = {
	{"/pbs_jobs.service/jobid/1234.server", 1, LES_SCHED_PBS, "1234.server", "", 0, ""},
	{"/sys/fs/cgroup/cpu,cpuacct/pbs_jobs.service/jobid/2404743.opbs", 1, LES_SCHED_PBS,
	 "2404743.opbs", "", 0, ""},
	{"/pbs_jobs.service/jobid/1234[7].server/tasks", 1, LES_SCHED_PBS, "1234[7].server", "", 0,
	 ""},
	{"/pbs_jobs.service/jobs/55.pbs-head", 1, LES_SCHED_PBS, "55.pbs-head", "", 0, ""},
	{"/pbs.service/jobid/9.srv", 1, LES_SCHED_PBS, "9.srv", "", 0, ""},
	{"/pbs.slice/pbs-1234.server.slice", 1, LES_SCHED_PBS, "1234.server", "", 0, ""},
	{"/pbs.slice/pbs-1234\\x5b7\\x5d.server.slice", 1, LES_SCHED_PBS, "1234[7].server", "", 0,
	 ""},
	{"/pbspro.slice/pbspro-1234.server.slice", 1, LES_SCHED_PBS, "1234.server", "", 0, ""},
	{"/pbs/88.cluster", 1, LES_SCHED_PBS, "88.cluster", "", 0, ""},
	{"/pbspro/88.cluster/x", 1, LES_SCHED_PBS, "88.cluster", "", 0, ""},
	{"/torque/4321.head", 1, LES_SCHED_PBS, "4321.head", "", 0, ""},
	/* Not jobs: the service itself, ids not starting with a digit, bad escapes. */
	{"/pbs_jobs.service", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs_jobs.service/jobid", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs_jobs.service/other/1234.server", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs_jobs.service/jobid/server.1234", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs_jobs.service/jobid/12 34", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/pbs-1234\\x5.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/pbs-1234\\y41.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/other-1234.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/pbs-.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/pbs.service", 0, LES_SCHED_NONE, "", "", 0, ""},
};

static const struct cg_case container_cases[] = {
	{"/docker/" HEX64, 1, LES_SCHED_NONE, "", "", LES_CRT_DOCKER, HEX64},
	{"/system.slice/docker-" HEX64 ".scope", 1, LES_SCHED_NONE, "", "", LES_CRT_DOCKER, HEX64},
	{"/system.slice/containerd.service/cri-containerd-" HEX64 ".scope", 1, LES_SCHED_NONE, "",
	 "", LES_CRT_CONTAINERD, HEX64},
	{"/machine.slice/crio-" HEX64 ".scope", 1, LES_SCHED_NONE, "", "", LES_CRT_CRIO, HEX64},
	{"/machine.slice/libpod-" HEX64 ".scope/container", 1, LES_SCHED_NONE, "", "",
	 LES_CRT_PODMAN, HEX64},
	{"/libpod_parent/libpod-" HEX64, 1, LES_SCHED_NONE, "", "", LES_CRT_PODMAN, HEX64},
	{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-abcdef123456.scope", 1,
	 LES_SCHED_NONE, "", "", LES_CRT_PODMAN, "abcdef123456"},
	/* Nested docker: the innermost container wins. */
	{"/docker/" HEX64
	 "/docker/fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
	 1, LES_SCHED_NONE, "", "", LES_CRT_DOCKER,
	 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"},
	/* Monitors, short ids, non-hex, wrong length: no container. */
	{"/machine.slice/libpod-conmon-" HEX64 ".scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/machine.slice/crio-conmon-" HEX64 ".scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/docker-abc.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/docker-" HEX64 "00.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/docker-0123456789abcdefg123.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/system.slice/docker.service", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/docker/abcdef", 0, LES_SCHED_NONE, "", "", 0, ""},
	/* A Slurm job inside a container. */
	{"/docker/" HEX64 "/slurm/uid_1/job_9/step_0", 1, LES_SCHED_SLURM, "9", "", LES_CRT_DOCKER,
	 HEX64},
};

static const struct cg_case kube_cases[] = {
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/cri-containerd-" HEX64 ".scope",
	 1, LES_SCHED_NONE, "", UID, LES_CRT_CONTAINERD, HEX64},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	 ".slice/crio-" HEX64 ".scope",
	 1, LES_SCHED_NONE, "", UID, LES_CRT_CRIO, HEX64},
	/* Guaranteed QoS: no QoS level in the path. */
	{"/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" HEX64 ".scope", 1,
	 LES_SCHED_NONE, "", UID, LES_CRT_CONTAINERD, HEX64},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/docker-" HEX64 ".scope",
	 1, LES_SCHED_NONE, "", UID, LES_CRT_DOCKER, HEX64},
	/* The pod slice alone (a process in the pod but in no container scope). */
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice", 1,
	 LES_SCHED_NONE, "", UID, 0, ""},
	/* kind / nested kubelet: kubelet.slice prefix. */
	{"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	 "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" HEX64 ".scope",
	 1, LES_SCHED_NONE, "", UID, LES_CRT_CONTAINERD, HEX64},
	/* Static pod: 32 hex digits. */
	{"/kubepods.slice/kubepods-burstable.slice/"
	 "kubepods-burstable-pod2b2d3f5ae6cb8d8de5dd3a9b4c8c0f21.slice",
	 1, LES_SCHED_NONE, "", "2b2d3f5ae6cb8d8de5dd3a9b4c8c0f21", 0, ""},
	/* cgroupfs driver. */
	{"/kubepods/burstable/pod" UID "/" HEX64, 1, LES_SCHED_NONE, "", UID, LES_CRT_UNKNOWN,
	 HEX64},
	{"/kubepods/besteffort/pod" UID "/" HEX64, 1, LES_SCHED_NONE, "", UID, LES_CRT_UNKNOWN,
	 HEX64},
	{"/kubepods/pod" UID "/" HEX64, 1, LES_SCHED_NONE, "", UID, LES_CRT_UNKNOWN, HEX64},
	{"/kubepods/burstable/pod" UID, 1, LES_SCHED_NONE, "", UID, 0, ""},
	/* Malformed uids and QoS slices alone. */
	{"/kubepods.slice/kubepods-burstable.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice", 0,
	 LES_SCHED_NONE, "", "", 0, ""},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod.slice", 0, LES_SCHED_NONE,
	 "", "", 0, ""},
	{"/kubepods/burstable/pod6f1c8e2a-3b4d-4e5f-9a0b-1c2d3e4f5a6", 0, LES_SCHED_NONE, "", "", 0,
	 ""},
	{"/kubepods/burstable/podzz1c8e2a-3b4d-4e5f-9a0b-1c2d3e4f5a6b", 0, LES_SCHED_NONE, "", "",
	 0, ""},
	{"/kubepods/burstable/pod6f1c8e2a33b4d-4e5f-9a0b-1c2d3e4f5a6b", 0, LES_SCHED_NONE, "", "",
	 0, ""},
	/* pod<uid> outside kubepods is not a pod. */
	{"/user.slice/pod" UID, 0, LES_SCHED_NONE, "", "", 0, ""},
};

static const struct cg_case garbage_cases[] = {
	{"", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"////", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/user.slice/user-1000.slice/session-3.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/init.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"slurm", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"job_1", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"kubepods-pod", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"kubepods-pod.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"-pod.slice", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"docker-.scope", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/pbs-\\x", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/pbs.slice/pbs-\\", 0, LES_SCHED_NONE, "", "", 0, ""},
	{"/\xff\xfe/\x01\x02/slurm\xff/job_\xff", 0, LES_SCHED_NONE, "", "", 0, ""},
};

START_TEST(slurm_paths)
{
	check_case(&slurm_cases[_i]);
}
END_TEST

START_TEST(pbs_paths)
{
	check_case(&pbs_cases[_i]);
}
END_TEST

START_TEST(container_paths)
{
	check_case(&container_cases[_i]);
}
END_TEST

START_TEST(kube_paths)
{
	check_case(&kube_cases[_i]);
}
END_TEST

START_TEST(garbage_paths)
{
	check_case(&garbage_cases[_i]);
}
END_TEST

/* The length bounds the parse: bytes past it are never looked at. */
START_TEST(length_bounds_parse)
{
	const char path[] = "/slurm/uid_1/job_123/step_0";
	struct les_cgroup_info info;

	ck_assert_int_eq(les_cgroup_parse(path, strlen("/slurm/uid_1/job_12"), &info), 1);
	ck_assert_str_eq(info.job_id, "12");
	ck_assert_int_eq(les_cgroup_parse(path, strlen("/slurm/uid_1/"), &info), 0);
	ck_assert_int_eq(les_cgroup_parse(NULL, 10, &info), 0);
}
END_TEST

START_TEST(random_bytes_no_crash)
{
	static const char *const parts[] = {
		"/",	   "slurm", "job_",   "1",	   "kubepods-", "pod",	 UID_,	  ".slice",
		"docker-", HEX64,   ".scope", "pbs.slice", "pbs-",	"\\x5b", "jobid", "\xff"};
	struct les_cgroup_info info;
	char path[512];

	srand(777);
	for (int round = 0; round < 20000; round++) {
		size_t len = 0;
		int pieces = rand() % 12;

		for (int p = 0; p < pieces; p++) {
			const char *s = parts[rand() % (sizeof(parts) / sizeof(parts[0]))];
			size_t n = strlen(s);

			if (len + n > sizeof(path))
				break;
			memcpy(path + len, s, n);
			len += n;
		}
		if (rand() % 4 == 0 && len)
			path[rand() % len] = (char)rand();
		les_cgroup_parse(path, len, &info);
		ck_assert_uint_lt(strnlen(info.job_id, sizeof(info.job_id)), sizeof(info.job_id));
		ck_assert_uint_lt(strnlen(info.pod_uid, sizeof(info.pod_uid)),
				  sizeof(info.pod_uid));
		ck_assert_uint_lt(strnlen(info.container_id, sizeof(info.container_id)),
				  sizeof(info.container_id));
		ck_assert_uint_lt(info.sched, LES_SCHED_MAX);
		ck_assert_uint_lt(info.runtime, LES_CRT_MAX);
	}
}
END_TEST

/* ---- picking the line of /proc/PID/cgroup ----------------------------------- */

static const struct {
	const char *content;
	const char *path; /* NULL: -ENOENT */
	const char *job_id;
} pick_cases[] = {
	/* Pure v2. */
	{"0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n",
	 "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0", "42"},
	/* Hybrid: v2 line says nothing, a v1 line holds the job. */
	{"12:pids:/system.slice/sshd.service\n"
	 "7:freezer:/slurm/uid_1000/job_1234/step_0\n"
	 "4:cpuset:/slurm/uid_1000/job_1234/step_0\n"
	 "1:name=systemd:/system.slice/slurmd.service\n"
	 "0::/system.slice/slurmd.service\n",
	 "/slurm/uid_1000/job_1234/step_0", "1234"},
	/* v2 line with a job wins over v1 lines. */
	{"3:memory:/slurm/uid_1/job_1/step_0\n0::/pbs_jobs.service/jobid/7.srv\n",
	 "/pbs_jobs.service/jobid/7.srv", "7.srv"},
	/* Nothing anywhere: the v2 line. */
	{"5:cpu:/user.slice\n0::/user.slice/user-0.slice/session-1.scope\n",
	 "/user.slice/user-0.slice/session-1.scope", ""},
	/* v1 only, nothing: the first line. */
	{"5:cpu,cpuacct:/user.slice\n4:memory:/other\n", "/user.slice", ""},
	/* No trailing newline, colons in the path, malformed lines skipped. */
	{"garbage\n\n:\n0::/a:b/slurm/uid_1/job_3", "/a:b/slurm/uid_1/job_3", "3"},
	{"", NULL, ""},
	{"no colons here\nnor here", NULL, ""},
};

START_TEST(pick_line)
{
	const char *content = pick_cases[_i].content;
	struct les_cgroup_info info;
	const char *path = NULL;
	size_t n = 0;
	int rc = les_cgroup_pick_line(content, strlen(content), &path, &n);

	if (!pick_cases[_i].path) {
		ck_assert_int_eq(rc, -ENOENT);
		ck_assert_int_eq(les_cgroup_parse_proc(content, strlen(content), &info), 0);
		return;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(n, strlen(pick_cases[_i].path));
	ck_assert(memcmp(path, pick_cases[_i].path, n) == 0);
	les_cgroup_parse_proc(content, strlen(content), &info);
	ck_assert_str_eq(info.job_id, pick_cases[_i].job_id);
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(les_sched_name(LES_SCHED_SLURM), "slurm");
	ck_assert_str_eq(les_sched_name(LES_SCHED_PBS), "pbs");
	ck_assert_ptr_null(les_sched_name(LES_SCHED_NONE));
	ck_assert_ptr_null(les_sched_name(99));
	ck_assert_str_eq(les_container_runtime_name(LES_CRT_CRIO), "crio");
	ck_assert_str_eq(les_container_runtime_name(LES_CRT_PODMAN), "podman");
	ck_assert_ptr_null(les_container_runtime_name(LES_CRT_UNKNOWN));
	ck_assert_ptr_null(les_container_runtime_name(LES_CRT_MAX));
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof((a)[0]))

static Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc;

	tc = tcase_create("slurm");
	tcase_add_loop_test(tc, slurm_paths, 0, N(slurm_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("pbs");
	tcase_add_loop_test(tc, pbs_paths, 0, N(pbs_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("containers");
	tcase_add_loop_test(tc, container_paths, 0, N(container_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("kubernetes");
	tcase_add_loop_test(tc, kube_paths, 0, N(kube_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("garbage");
	tcase_add_loop_test(tc, garbage_paths, 0, N(garbage_cases));
	tcase_add_test(tc, length_bounds_parse);
	tcase_add_test(tc, random_bytes_no_crash);
	suite_add_tcase(s, tc);

	tc = tcase_create("proc_file");
	tcase_add_loop_test(tc, pick_line, 0, N(pick_cases));
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cgroup_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
