// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* End-of-capture summary and the live status line. */
#include <stdlib.h>
#include <string.h>
#include "util/clock.h"
#include "model/kinds.h"
#include "sink/summary.h"
#include "util/utf8.h"

/*
 * The planes whose jobs and processes are ranked: access ops, and the
 * requests (rpc records); the other kinds are only counted by op.
 */
enum sum_plane { PLANE_ACCESS = 0, PLANE_REQUEST, PLANE_MAX };

struct type_op {
	const char *op_ptr; /* the name's address: op names are static tables */
	char op[24];
	uint64_t count;
};

struct name_stat {
	char name[LES_SUMMARY_NAME_LEN];
	uint64_t ops;
	uint64_t latency_ns;
	bool used;
};

/* Open addressing over a fixed array; "(other)" holds what does not fit. */
struct name_table {
	struct name_stat slot[LES_SUMMARY_NAMES];
	struct name_stat other;
	size_t used;
};

/* Jobs and processes, per plane: access ops if any, else requests. */
enum { TAB_JOB = 0, TAB_PROC, TAB_MAX };

struct les_summary {
	/* By record kind: per-op kinds only (model/kinds.h) */
	uint64_t by_type[LES_REC_KIND_MAX];
	struct type_op type_op[LES_REC_KIND_MAX][LES_SUMMARY_TYPE_OPS];
	size_t n_type_op[LES_REC_KIND_MAX];
	uint64_t type_op_other[LES_REC_KIND_MAX];
	struct name_table tab[PLANE_MAX][TAB_MAX];
};

struct les_summary *les_summary_new(void)
{
	struct les_summary *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	for (int p = 0; p < PLANE_MAX; p++)
		for (int t = 0; t < TAB_MAX; t++)
			strcpy(s->tab[p][t].other.name, "(other)");
	return s;
}

void les_summary_free(struct les_summary *s)
{
	free(s);
}

/* The plane a kind's jobs and processes are ranked in, by its shape; -1: none. */
static int plane_of(unsigned int kind)
{
	switch (les_rec_kind_shape(kind)) {
	case LES_SHAPE_ACCESS:
		return PLANE_ACCESS;
	case LES_SHAPE_REQUEST:
		return PLANE_REQUEST;
	default:
		return -1;
	}
}

/* Records of kinds of one shape. */
static uint64_t by_shape(const struct les_summary *s, enum les_rec_shape shape)
{
	uint64_t n = 0;

	for (unsigned int kind = 0; kind < LES_REC_KIND_MAX; kind++)
		if (les_rec_kind_shape(kind) == shape)
			n += s->by_type[kind];
	return n;
}

static void count_type_op(struct les_summary *s, unsigned int type, const char *op)
{
	struct type_op *v = s->type_op[type];
	size_t n = s->n_type_op[type];

	if (!op)
		op = "unknown";
	for (size_t i = 0; i < n; i++) {
		if (v[i].op_ptr == op || strcmp(v[i].op, op) == 0) {
			v[i].count++;
			return;
		}
	}
	if (n == LES_SUMMARY_TYPE_OPS) {
		s->type_op_other[type]++;
		return;
	}
	v[n].op_ptr = op;
	snprintf(v[n].op, sizeof(v[n].op), "%s", op);
	v[n].count = 1;
	s->n_type_op[type]++;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct name_stat *name_find(struct name_table *t, const char *name)
{
	size_t mask = LES_SUMMARY_NAMES - 1;
	size_t i = name_hash(name) & mask;

	/* Probe a bounded run: a full table costs no more than a full run. */
	for (size_t probes = 0; probes < 32; probes++, i = (i + 1) & mask) {
		struct name_stat *st = &t->slot[i];

		if (!st->used) {
			/* Keep a quarter free, so that probe runs stay short. */
			if (t->used >= LES_SUMMARY_NAMES - LES_SUMMARY_NAMES / 4)
				return &t->other;
			st->used = true;
			snprintf(st->name, sizeof(st->name), "%s", name);
			t->used++;
			return st;
		}
		if (strncmp(st->name, name, sizeof(st->name) - 1) == 0)
			return st;
	}
	return &t->other;
}

static void count_name(struct name_table *t, const char *name, uint64_t latency_ns)
{
	struct name_stat *st = name_find(t, name);

	st->ops++;
	st->latency_ns += latency_ns;
}

int les_summary_event(void *ctx, const struct les_event *ev)
{
	struct les_summary *s = ctx;
	int plane = plane_of(ev->kind);

	/* Only per-op records are summed: the consumer hands on no other kind. */
	if (!les_rec_kind_is_op(ev->kind))
		return 0;
	s->by_type[ev->kind]++;
	count_type_op(s, ev->kind, ev->op);
	if (plane < 0)
		return 0;
	count_name(&s->tab[plane][TAB_JOB], ev->job_id ? ev->job_id : "(none)", ev->latency_ns);
	count_name(&s->tab[plane][TAB_PROC],
		   ev->process ? ev->process
		   : ev->comm  ? ev->comm
			       : "(unknown)",
		   ev->latency_ns);
	return 0;
}

/* --- printing ------------------------------------------------------------ */

static int by_count_desc(const void *a, const void *b)
{
	const struct type_op *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->op, y->op);
}

static void print_type_ops(const struct les_summary *s, FILE *out)
{
	struct type_op sorted[LES_SUMMARY_TYPE_OPS];

	fputs("  records by type and op:\n", out);
	for (unsigned int type = 0; type < LES_REC_KIND_MAX; type++) {
		size_t n = s->n_type_op[type];

		if (!s->by_type[type])
			continue;
		fprintf(out, "    %-10s %-16s %10llu\n", les_rec_kind_name(type), "(all)",
			(unsigned long long)s->by_type[type]);
		memcpy(sorted, s->type_op[type], n * sizeof(sorted[0]));
		qsort(sorted, n, sizeof(sorted[0]), by_count_desc);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "    %-10s %-16s %10llu\n", "", sorted[i].op,
				(unsigned long long)sorted[i].count);
		if (s->type_op_other[type])
			fprintf(out, "    %-10s %-16s %10llu\n", "", "(other)",
				(unsigned long long)s->type_op_other[type]);
	}
}

/* Insert st into top (n kept, at most LES_SUMMARY_TOP) by ops or latency. */
static void top_insert(const struct name_stat **top, size_t *n, const struct name_stat *st,
		       bool by_latency)
{
	uint64_t key = by_latency ? st->latency_ns : st->ops;
	size_t i = *n < LES_SUMMARY_TOP ? (*n)++ : LES_SUMMARY_TOP;

	while (i > 0) {
		const struct name_stat *prev = top[i - 1];

		if ((by_latency ? prev->latency_ns : prev->ops) >= key)
			break;
		if (i < LES_SUMMARY_TOP)
			top[i] = prev;
		i--;
	}
	if (i < LES_SUMMARY_TOP)
		top[i] = st;
}

static void print_top(const struct name_table *t, const char *what, const char *plane,
		      bool by_latency, FILE *out)
{
	const struct name_stat *top[LES_SUMMARY_TOP];
	size_t n = 0;

	for (size_t i = 0; i < LES_SUMMARY_NAMES; i++)
		if (t->slot[i].used)
			top_insert(top, &n, &t->slot[i], by_latency);
	if (t->other.ops)
		top_insert(top, &n, &t->other, by_latency);
	fprintf(out, "  top %s by %s %s:\n", what, plane, by_latency ? "latency" : "ops");
	fprintf(out, "    %10s %14s  %s\n", "ops", "latency_s", what[0] == 'j' ? "job" : "process");
	for (size_t i = 0; i < n; i++) {
		char name[LES_TERM_SAFE_LEN(LES_SUMMARY_NAME_LEN)];

		/* Job IDs and comm come from users: escaped for the terminal. */
		les_term_safe(top[i]->name, name, sizeof(name));
		fprintf(out, "    %10llu %14.6f  %s\n", (unsigned long long)top[i]->ops,
			(double)top[i]->latency_ns / 1e9, name);
	}
}

void les_summary_print(const struct les_summary *s, const struct les_summary_totals *t, FILE *out)
{
	double secs = (double)t->elapsed_ns / 1e9;
	int plane = by_shape(s, LES_SHAPE_ACCESS) || !by_shape(s, LES_SHAPE_REQUEST)
			    ? PLANE_ACCESS
			    : PLANE_REQUEST;
	const char *plane_name = plane == PLANE_ACCESS ? "access" : "request";

	fprintf(out,
		"lustre-ebpf-stream: summary: %.1f s, %llu records (%.1f/s), %llu dropped, "
		"%llu filtered\n",
		secs, (unsigned long long)t->emitted, secs > 0 ? (double)t->emitted / secs : 0.0,
		(unsigned long long)t->dropped, (unsigned long long)t->filtered);
	if (!t->emitted)
		return;
	print_type_ops(s, out);
	print_top(&s->tab[plane][TAB_JOB], "jobs", plane_name, false, out);
	print_top(&s->tab[plane][TAB_JOB], "jobs", plane_name, true, out);
	print_top(&s->tab[plane][TAB_PROC], "processes", plane_name, false, out);
	print_top(&s->tab[plane][TAB_PROC], "processes", plane_name, true, out);
	fflush(out);
}

/* --- status line --------------------------------------------------------- */

/* "1h02m03s", "2m05s", "12.3s" */
static int fmt_dur(char *buf, size_t len, uint64_t ns)
{
	uint64_t s = ns / LES_NS_PER_SEC;

	if (s >= 3600)
		return snprintf(buf, len, "%lluh%02llum%02llus", (unsigned long long)(s / 3600),
				(unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	if (s >= 60)
		return snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60),
				(unsigned long long)(s % 60));
	return snprintf(buf, len, "%.1fs", (double)ns / 1e9);
}

size_t les_status_format(char *buf, size_t len, uint64_t elapsed_ns, uint64_t duration_ns,
			 uint64_t emitted, double rate, uint64_t dropped)
{
	char el[32], rem[32] = "";
	int n;

	fmt_dur(el, sizeof(el), elapsed_ns);
	if (duration_ns) {
		char d[24];

		fmt_dur(d, sizeof(d), duration_ns > elapsed_ns ? duration_ns - elapsed_ns : 0);
		snprintf(rem, sizeof(rem), ", %s left", d);
	}
	n = snprintf(buf, len, "%s elapsed%s | %llu records | %.0f/s | %llu dropped", el, rem,
		     (unsigned long long)emitted, rate, (unsigned long long)dropped);
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

void les_status_update(struct les_status *st, uint64_t now_ns, uint64_t elapsed_ns,
		       uint64_t duration_ns, uint64_t emitted, uint64_t dropped)
{
	uint64_t dt = now_ns - st->last_ns;
	double rate = 0;
	char line[160];

	if (st->shown && dt)
		rate = (double)(emitted - st->last_emitted) * 1e9 / (double)dt;
	else if (elapsed_ns)
		rate = (double)emitted * 1e9 / (double)elapsed_ns;
	les_status_format(line, sizeof(line), elapsed_ns, duration_ns, emitted, rate, dropped);
	/* Carriage return, the line, erase to the end of the line (ECMA-48 EL). */
	fprintf(st->out, "\r%s\033[K", line);
	fflush(st->out);
	st->shown = true;
	st->last_ns = now_ns;
	st->last_emitted = emitted;
}

void les_status_clear(struct les_status *st)
{
	if (!st->shown)
		return;
	fputs("\r\033[K", st->out);
	fflush(st->out);
	st->shown = false;
}
