/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Job, pod and container identity from a cgroup path.
 *
 * Works on the path of a cgroup (as in /proc/PID/cgroup, or a directory
 * under /sys/fs/cgroup: only the components matter), component by
 * component, never allocating; any byte sequence is a valid input.
 *
 * Shapes recognised (empty components are ignored):
 *
 * Slurm (job id = the number; scheduler LES_SCHED_SLURM), Slurm's own
 * layout and nothing looser: "job_<digits>" right below the stepd scope,
 * itself right below "system.slice" (v2), or right below "uid_<digits>"
 * right below a component starting with "slurm" (v1):
 *     /system.slice/slurmstepd.scope/job_1234/step_0/user/task_0   (v2)
 *     /system.slice/node1_slurmstepd.scope/job_1234/...            (v2, multi-slurmd)
 *     /slurm/uid_1000/job_1234/step_batch                           (v1)
 *     /slurm_node1/uid_1000/job_1234/step_0                         (v1, multi-slurmd)
 *   What comes before is free (a slurmd in a container, a /sys/fs/cgroup
 *   directory), except a "user@<uid>.service" component: systemd delegates
 *   that subtree to the user, who could create the same names there, so no
 *   Slurm job is read below it.
 *
 * PBS Pro / OpenPBS / Torque (job id = the full PBS id as in PBS_JOBID,
 * e.g. "1234.server" or "1234[7].server"; scheduler LES_SCHED_PBS).
 * The cgroups hook's prefix is configurable; these assume it starts with
 * "pbs" (the default is "pbs_jobs"):
 *     /pbs_jobs.service/jobid/<id>       current hook (v1, and v2 with systemd)
 *     /pbs_jobs.service/jobs/<id>        hook variant on cgroup v2
 *     /pbs.slice/pbs-<escaped id>.slice  older hooks; systemd escaping (\xNN) undone
 *     /pbspro.slice/pbspro-<id>.slice    same, other prefix
 *     /pbs/<id>, /pbspro/<id>            oldest hooks
 *     /torque/<id>                       Torque's own cgroups
 *   where <id> starts with a digit and holds [A-Za-z0-9._-[]].
 *
 * Kubernetes (pod uid with dashes, 36 characters, or the 32 hex digits
 * kubelet uses for static pods):
 *     .../kubepods-burstable-pod<uid, '-' escaped as '_'>.slice/...   systemd driver
 *     .../kubepods-besteffort-pod<uid>.slice/...
 *     .../kubepods-pod<uid>.slice/...                                  guaranteed
 *     /kubepods/burstable/pod<uid>/<64 hex>                            cgroupfs driver
 *     /kubepods/besteffort/pod<uid>/..., /kubepods/pod<uid>/...
 *   (any component containing "kubepods" opens the pod hierarchy, so the
 *   kind/kubelet.slice nesting works too).
 *
 * Containers (id = the hex digits; the deepest container in the path wins):
 *     docker-<hex>.scope           docker, systemd driver
 *     /docker/<64 hex>             docker, cgroupfs driver
 *     cri-containerd-<hex>.scope   containerd (CRI)
 *     crio-<hex>.scope             cri-o
 *     libpod-<hex>[.scope]         podman
 *     pod<uid>/<64 hex>            container of a pod, cgroupfs driver: runtime unknown
 *   <hex> is 12 to 64 hex digits in the scope forms, exactly 64 in the bare
 *   ones. Monitor scopes (crio-conmon-..., libpod-conmon-...) are not
 *   containers and give no container id.
 */
#ifndef LES_CGROUP_H
#define LES_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#define LES_CGROUP_JOB_ID_MAX	    64 /* with NUL */
#define LES_CGROUP_CONTAINER_ID_MAX 65 /* 64 hex + NUL */
#define LES_CGROUP_POD_UID_MAX	    37 /* 36 + NUL */

enum les_sched {
	LES_SCHED_NONE = 0,
	LES_SCHED_SLURM,
	LES_SCHED_PBS,
	LES_SCHED_MAX,
};

enum les_container_runtime {
	LES_CRT_NONE = 0,
	LES_CRT_UNKNOWN, /* bare id under a pod (cgroupfs driver) */
	LES_CRT_DOCKER,
	LES_CRT_CONTAINERD,
	LES_CRT_CRIO,
	LES_CRT_PODMAN,
	LES_CRT_MAX,
};

struct les_cgroup_info {
	uint8_t sched;	 /* enum les_sched; LES_SCHED_NONE: job_id is "" */
	uint8_t runtime; /* enum les_container_runtime; NONE: container_id is "" */
	char job_id[LES_CGROUP_JOB_ID_MAX];
	char container_id[LES_CGROUP_CONTAINER_ID_MAX];
	char pod_uid[LES_CGROUP_POD_UID_MAX]; /* "" when not in a pod */
};

/*
 * Parse one cgroup path of len bytes. out is fully overwritten.
 * Returns 1 if a job, pod or container was found, else 0.
 */
int les_cgroup_parse(const char *path, size_t len, struct les_cgroup_info *out);

/*
 * Choose the line of a /proc/PID/cgroup file (len bytes of
 * "HIERARCHY:CONTROLLERS:PATH" lines) that says the most: the cgroup v2
 * line "0::PATH" if it names a job, pod or container, else the first v1
 * line that does, else the v2 line, else the first line. Sets *path and
 * *path_len to the path part of that line (inside content).
 * Returns 0, or -ENOENT if content holds no well-formed line.
 */
int les_cgroup_pick_line(const char *content, size_t len, const char **path, size_t *path_len);

/*
 * les_cgroup_pick_line() then les_cgroup_parse(). Returns as
 * les_cgroup_parse(); out is cleared when no line is found.
 */
int les_cgroup_parse_proc(const char *content, size_t len, struct les_cgroup_info *out);

/* "slurm", "pbs"; NULL for LES_SCHED_NONE. */
const char *les_sched_name(unsigned int sched);

/* "docker", "containerd", "crio", "podman"; NULL for NONE and UNKNOWN. */
const char *les_container_runtime_name(unsigned int rt);

#endif /* LES_CGROUP_H */
