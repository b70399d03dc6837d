// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes the seed corpus of fuzz_record (corpus/record/): well-formed
 * records of each kind, and the malformed ones the decoder must survive.
 * Run again after a change of include/les_record.h: gen_seeds DIR
 */
#include <stdio.h>
#include <string.h>
#include "les_record.h"

static const char *dir;

/* One seed file: records framed as 2-byte little-endian length + bytes. */
static FILE *seed(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "wb");
}

static void put(FILE *f, const void *rec, size_t len)
{
	unsigned char hdr[2] = {(unsigned char)len, (unsigned char)(len >> 8)};

	fwrite(hdr, 1, 2, f);
	fwrite(rec, 1, len, f);
}

static void task(struct les_task *t, const char *comm)
{
	t->pid = 100;
	t->tid = 101;
	t->uid = 1000;
	t->gid = 1000;
	strncpy(t->comm, comm, sizeof(t->comm));
}

int main(int argc, char **argv)
{
	static const char env[] = "SLURM_JOB_ID=77\0PROJECT=climate\0SECRET=x\0";
	struct les_rec_access a = {.kind = LES_REC_ACCESS, .op = LES_OP_READ, .dev = 42};
	struct les_rec_rpc r = {.kind = LES_REC_RPC, .proto = LES_PROTO_FUSE, .opcode = 15};
	struct les_rec_rpc_event ev = {.kind = LES_REC_RPC_EVENT, .event = LES_EV_RESEND};
	static struct les_rec_proc p = {.kind = LES_REC_PROC_EXEC, .pid = 100};
	struct les_rec_fork fk = {.kind = LES_REC_PROC_FORK, .pid = 101, .ppid = 100};
	unsigned char big[sizeof(a) + 64] = {0};
	FILE *f;

	if (argc != 2)
		return 2;
	dir = argv[1];
	a.latency_ns = 12345;
	a.bytes = 4096;
	a.op_id = 1 << 12;
	task(&a.task, "dd");
	r.dev = 42;
	r.parent_op_id = a.op_id;
	r.flags = LES_RPC_F_ASYNC;
	task(&r.task, "dd");
	strcpy(r.worker_comm, "kworker/0:1");
	ev.dev = 42;
	task(&ev.task, "cat");
	memcpy(p.env, env, sizeof(env));
	p.env_len = sizeof(env);
	strcpy(p.comm, "cat");

	f = seed("pipeline");
	put(f, &p, sizeof(p));
	put(f, &fk, sizeof(fk));
	put(f, &a, sizeof(a));
	put(f, &r, sizeof(r));
	put(f, &ev, sizeof(ev));
	fclose(f);
	f = seed("malformed");
	put(f, &a, 3);		   /* shorter than the kind tag */
	put(f, &a, sizeof(a) - 1); /* shorter than its kind */
	memcpy(big, &a, sizeof(a));
	put(f, big, sizeof(big)); /* oversized */
	a.kind = LES_REC_KIND_MAX + 7;
	put(f, &a, sizeof(a)); /* unknown kind */
	a.kind = LES_REC_ACCESS;
	a.op = 0xffff; /* op out of range */
	a.err = -5;
	a.dev = 7; /* not observed */
	put(f, &a, sizeof(a));
	fclose(f);
	f = seed("exec-env-truncated");
	p.env_len = 0xffffffff;
	memset(p.env, 'A', sizeof(p.env));
	put(f, &p, sizeof(p));
	fclose(f);
	return 0;
}
