// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The capture reader (see capture.h). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "decode/capture.h"
#include "model/kinds.h"
#include "model/ops.h"

static const char *str_of(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint64_t u64_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

uint64_t les_capture_parse_ts(const char *ts)
{
	struct tm tm = {0};
	char frac[16] = "";
	uint64_t ns = 0;
	time_t secs;

	if (!ts || sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%15[0-9]", &tm.tm_year, &tm.tm_mon,
			  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, frac) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	secs = timegm(&tm);
	/* ns since the epoch fit in 64 bits until 2554; a later time is malformed. */
	if (secs < 0 || (uint64_t)secs > UINT64_MAX / 1000000000ULL - 1)
		return 0;
	/* Nanoseconds: the fraction's first 9 digits, padded with zeros. */
	for (size_t i = 0, n = strlen(frac); i < 9; i++)
		ns = ns * 10 + (i < n ? (uint64_t)(frac[i] - '0') : 0);
	return (uint64_t)secs * 1000000000ULL + ns;
}

/* What the line says happened, and how long it took. */
static void read_what(json_t *doc, struct les_event *ev)
{
	ev->ts_epoch_ns = les_capture_parse_ts(str_of(doc, "ts"));
	ev->op = str_of(doc, "op");
	ev->event = str_of(doc, "event");
	ev->proto = str_of(doc, "proto");
	/* The enums the stages count by, from the names the lines carry. */
	ev->access_op = ev->op ? (unsigned int)les_op_from_name(ev->op) : LES_OP_MAX;
	ev->event_id = (unsigned int)les_rpc_event_index(ev->event);
	ev->proto_id = (unsigned int)les_rpc_proto_index(ev->proto);
	ev->mount = str_of(doc, "mount");
	ev->fs_type = str_of(doc, "fs_type");
	ev->latency_ns = u64_of(doc, "latency_ns");
	ev->bytes = u64_of(doc, "bytes");
	ev->err = (int)u64_of(doc, "errno");
	ev->errno_class = str_of(doc, "errno_class");
	ev->rpc_count = u64_of(doc, "rpc_count");
	ev->rpc_wait_ns = u64_of(doc, "rpc_wait_ns");
	ev->backlog_ns = u64_of(doc, "backlog_ns");
	ev->rtt_ns = u64_of(doc, "rtt_ns");
}

static void read_who(json_t *doc, struct les_event *ev)
{
	ev->pid = (uint32_t)u64_of(doc, "pid");
	ev->uid = (uint32_t)u64_of(doc, "uid");
	ev->comm = str_of(doc, "comm");
	ev->username = str_of(doc, "username");
	ev->process = str_of(doc, "process");
	ev->actor_type = str_of(doc, "actor_type");
	ev->job_id = str_of(doc, "job_id");
}

/*
 * The ids that link a request's records, as the consumer sets them: each
 * only where the line has it (null or absent: 0, NULL).
 */
static void read_ids(json_t *doc, struct les_event *ev)
{
	json_t *opcode = json_object_get(doc, "opcode");
	json_t *xid = json_object_get(doc, "xid");

	ev->parent_op_id = u64_of(doc, "parent_op_id");
	ev->op_id = u64_of(doc, "op_id");
	ev->req_id = u64_of(doc, "req_id");
	ev->wait_id = u64_of(doc, "wait_id");
	ev->parent_wait_id = u64_of(doc, "parent_wait_id");
	ev->has_xid = json_is_integer(xid);
	ev->xid = u64_of(doc, "xid");
	ev->has_opcode = json_is_integer(opcode);
	ev->opcode = (unsigned int)u64_of(doc, "opcode");
	ev->target = str_of(doc, "target");
	ev->target_len = ev->target ? strlen(ev->target) : 0;
	ev->nid = str_of(doc, "nid");
}

int les_capture_parse(struct les_capture *cap, const char *line, struct les_event *ev)
{
	json_t *doc;
	const char *type;

	les_capture_release(cap);
	cap->doc = doc = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(doc))
		return -1;
	type = str_of(doc, "type");
	/* Stats, window and notice lines are not records: skipped. */
	ev->kind = les_rec_op_kind_by_name(type);
	if (ev->kind == LES_REC_NONE)
		return 0;
	ev->type = type;
	read_what(doc, ev);
	read_who(doc, ev);
	read_ids(doc, ev);
	if (les_rec_kind_shape(ev->kind) == LES_SHAPE_REQUEST) {
		ev->rpc_op = les_rpc_op_of(ev->op, str_of(doc, "function"));
		/* A wait inside another: its time is the parent's (aggregation skips it). */
		ev->nested_wait = ev->parent_wait_id != 0;
	}
	return 1;
}

void les_capture_release(struct les_capture *cap)
{
	json_decref(cap->doc);
	cap->doc = NULL;
}
