// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Access records against docs/record.schema.json, the published contract
 * of the output: every op and method, errnos in and past the pre-encoded
 * table, absent mounts and enrichment (null, not missing), a Lustre FID
 * known or not, and strings that need escaping or are not UTF-8.
 *
 * The schema is read from the source tree and checked by a small
 * validator below. It knows the draft-07 keywords the schema uses
 * ($ref to #/definitions, allOf, if/then/else, const, enum, type,
 * properties, required, additionalProperties, dependencies with arrays,
 * pattern, minimum, maximum, maxLength, items, minItems, maxItems,
 * propertyNames) and fails the test on any other, so a schema that grows
 * a keyword cannot pass unchecked. Formats and $id are not resolved.
 */
#include <check.h>
#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "model/mounts.h"
#include "model/observed.h"
#include "enrich/enrich.h"
#include "format/format.h"
#include "model/ops.h"
#include "notices.h"

static json_t *schema;
static struct les_fmt_ctx fc;
static char line[16384];

/* --- a validator for the keywords the schema uses ----------------------- */

struct verdict {
	char why[512];
};

static bool refuse(struct verdict *v, const char *at, const char *what)
{
	snprintf(v->why, sizeof(v->why), "%s: %s", at[0] ? at : "(record)", what);
	return false;
}

static bool valid(json_t *s, json_t *x, const char *at, struct verdict *v);

static json_t *resolve(const char *ref)
{
	static const char prefix[] = "#/definitions/";
	json_t *d;

	ck_assert_msg(strncmp(ref, prefix, sizeof(prefix) - 1) == 0, "$ref %s not local", ref);
	d = json_object_get(json_object_get(schema, "definitions"), ref + sizeof(prefix) - 1);
	ck_assert_msg(d, "$ref %s: no such definition", ref);
	return d;
}

static bool has_type(json_t *x, const char *type)
{
	if (!strcmp(type, "object"))
		return json_is_object(x);
	if (!strcmp(type, "array"))
		return json_is_array(x);
	if (!strcmp(type, "string"))
		return json_is_string(x);
	if (!strcmp(type, "integer"))
		return json_is_integer(x);
	if (!strcmp(type, "number"))
		return json_is_number(x);
	if (!strcmp(type, "boolean"))
		return json_is_boolean(x);
	if (!strcmp(type, "null"))
		return json_is_null(x);
	ck_abort_msg("type %s unknown", type);
	return false;
}

static bool type_ok(json_t *t, json_t *x)
{
	size_t i;
	json_t *one;

	if (json_is_string(t))
		return has_type(x, json_string_value(t));
	json_array_foreach(t, i, one)
		if (has_type(x, json_string_value(one)))
			return true;
	return false;
}

static bool in_enum(json_t *values, json_t *x)
{
	size_t i;
	json_t *one;

	json_array_foreach(values, i, one)
		if (json_equal(one, x))
			return true;
	return false;
}

static bool matches(const char *pattern, const char *s)
{
	regex_t re;
	bool ok;

	ck_assert_msg(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0, "pattern %s", pattern);
	ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

/* Code points, as maxLength counts them. */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static bool number_ok(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *min = json_object_get(s, "minimum"), *max = json_object_get(s, "maximum");

	if (!json_is_number(x))
		return true;
	if (min && json_number_value(x) < json_number_value(min))
		return refuse(v, at, "below minimum");
	if (max && json_number_value(x) > json_number_value(max))
		return refuse(v, at, "above maximum");
	return true;
}

static bool string_ok(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *pattern = json_object_get(s, "pattern"), *max = json_object_get(s, "maxLength");

	if (!json_is_string(x))
		return true;
	if (pattern && !matches(json_string_value(pattern), json_string_value(x)))
		return refuse(v, at, "does not match its pattern");
	if (max && utf8_chars(json_string_value(x)) > (size_t)json_integer_value(max))
		return refuse(v, at, "longer than maxLength");
	return true;
}

static bool array_ok(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *items = json_object_get(s, "items"), *min = json_object_get(s, "minItems"),
	       *max = json_object_get(s, "maxItems"), *one;
	char sub[256];
	size_t i;

	if (!json_is_array(x))
		return true;
	if (min && json_array_size(x) < (size_t)json_integer_value(min))
		return refuse(v, at, "fewer items than minItems");
	if (max && json_array_size(x) > (size_t)json_integer_value(max))
		return refuse(v, at, "more items than maxItems");
	json_array_foreach(x, i, one) {
		snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
		if (items && !valid(items, one, sub, v))
			return false;
	}
	return true;
}

static bool dependencies_ok(json_t *deps, json_t *x, const char *at, struct verdict *v)
{
	const char *key;
	json_t *needs, *need;
	size_t i;

	json_object_foreach(deps, key, needs) {
		if (!json_object_get(x, key))
			continue;
		ck_assert_msg(json_is_array(needs), "dependencies of %s: only arrays are known", key);
		json_array_foreach(needs, i, need)
			if (!json_object_get(x, json_string_value(need)))
				return refuse(v, key, "present without a member it depends on");
	}
	(void)at;
	return true;
}

static bool object_ok(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *props = json_object_get(s, "properties"), *req = json_object_get(s, "required"),
	       *extra = json_object_get(s, "additionalProperties"),
	       *names = json_object_get(s, "propertyNames"),
	       *deps = json_object_get(s, "dependencies"), *val, *one;
	const char *key;
	char sub[256];
	size_t i;

	if (!json_is_object(x))
		return true;
	json_array_foreach(req, i, one)
		if (!json_object_get(x, json_string_value(one))) {
			snprintf(sub, sizeof(sub), "%s.%s", at, json_string_value(one));
			return refuse(v, sub, "required, missing");
		}
	json_object_foreach(x, key, val) {
		json_t *ps = props ? json_object_get(props, key) : NULL;
		json_t *name = json_string(key);
		bool name_ok = !names || valid(names, name, key, v);

		json_decref(name);
		if (!name_ok)
			return false;
		snprintf(sub, sizeof(sub), "%s.%s", at, key);
		if (ps && !valid(ps, val, sub, v))
			return false;
		if (!ps && json_is_false(extra))
			return refuse(v, sub, "not allowed here");
		if (!ps && json_is_object(extra) && !valid(extra, val, sub, v))
			return false;
	}
	return !deps || dependencies_ok(deps, x, at, v);
}

static bool conditional_ok(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *cond = json_object_get(s, "if");
	struct verdict quiet;
	json_t *branch;

	if (!cond)
		return true;
	branch = json_object_get(s, valid(cond, x, at, &quiet) ? "then" : "else");
	return !branch || valid(branch, x, at, v);
}

static bool keyword_known(const char *k)
{
	static const char *const known[] = {
		"$ref",	      "allOf",	   "if",       "then",	     "else",	 "const",
		"enum",	      "type",	   "properties", "required", "additionalProperties",
		"dependencies", "pattern", "minimum",  "maximum",    "maxLength", "items",
		"minItems",   "maxItems",  "propertyNames",
		/* annotations: nothing to check */
		"$schema",    "$id",	   "version",  "title",	     "description", "definitions",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(k, known[i]))
			return true;
	return false;
}

static bool valid(json_t *s, json_t *x, const char *at, struct verdict *v)
{
	json_t *val, *one;
	const char *key;
	size_t i;

	json_object_foreach(s, key, val)
		ck_assert_msg(keyword_known(key), "schema keyword %s: the validator does not know it",
			      key);
	if ((val = json_object_get(s, "$ref")) && !valid(resolve(json_string_value(val)), x, at, v))
		return false;
	json_array_foreach(json_object_get(s, "allOf"), i, one)
		if (!valid(one, x, at, v))
			return false;
	if ((val = json_object_get(s, "type")) && !type_ok(val, x))
		return refuse(v, at, "wrong type");
	if ((val = json_object_get(s, "const")) && !json_equal(val, x))
		return refuse(v, at, "not the constant");
	if ((val = json_object_get(s, "enum")) && !in_enum(val, x))
		return refuse(v, at, "not one of the enum");
	return number_ok(s, x, at, v) && string_ok(s, x, at, v) && array_ok(s, x, at, v) &&
	       object_ok(s, x, at, v) && conditional_ok(s, x, at, v);
}

/* --- the records ---------------------------------------------------------- */

static const char *source_path(const char *rel)
{
	static char path[1024];
	const char *unit = strstr(__FILE__, "/test/unit/test_format_schema.c");

	snprintf(path, sizeof(path), "%.*s/%s", unit ? (int)(unit - __FILE__) : 1,
		 unit ? __FILE__ : ".", rel);
	return path;
}

static void setup(void)
{
	json_error_t err;

	schema = json_load_file(source_path("docs/record.schema.json"), 0, &err);
	ck_assert_msg(schema, "schema: %s", err.text);
	les_fmt_ctx_init(&fc, "node1", false);
}

static void teardown(void)
{
	json_decref(schema);
}

static struct les_rec_access access_rec(unsigned int op, unsigned int method, int err)
{
	struct les_rec_access r = {
		.kind = LES_REC_ACCESS,
		.op = op,
		.method = method,
		.op_id = 7,
		.ts_ns = 123456789,
		.latency_ns = 5000,
		.bytes = 4096,
		.err = err,
		.rpc_count = 2,
		.rpc_wait_ns = 3000,
		.dev = (70u << 20) | 3,
		.ino = 99,
		.task = {.pid = 42, .tid = 43, .uid = 1000, .gid = 100, .comm = "dd"},
	};

	return r;
}

/* An lnet line, every member valued and every one null, against the schema. */
START_TEST(test_lnet_line)
{
	struct les_rec_lnet r = {
		.kind = LES_REC_LNET,
		.msg_type = 1,
		.flags = 0x7f,
		.ts_ns = 9000,
		.commit_ns = 1000,
		.send_ns = 3000,
		.peer_wait_ns = 1500,
		.match_bits = 42,
		.len = 256,
		.peer_credits = -2,
		.ni = {.type = 2, .addr_be = {0x0201a8c0}},
		.peer = {.type = 2, .addr_be = {0x0101a8c0}},
		.target = {.type = 2, .addr_be = {0x0101a8c0}},
		.ifname = "eth0",
	};
	struct verdict v = {""};
	struct jw w;
	json_t *j;

	for (int pass = 0; pass < 2; pass++) {
		jw_init(&w, line, sizeof(line));
		les_format_lnet(&w, &fc, &r);
		ck_assert(!w.overflow);
		j = json_loadb(line, w.len, 0, NULL);
		ck_assert(j);
		ck_assert_msg(valid(schema, j, "", &v), "%s in %.*s", v.why, (int)w.len, line);
		json_decref(j);
		r.flags = 0;
		r.msg_type = 9;
	}
}
END_TEST

/* Format r, parse the line (jansson refuses bad JSON and bad UTF-8) and validate it. */
static json_t *format_valid(const struct les_observed_mount *m, const struct les_rec_access *r,
			    const struct les_enriched *en)
{
	struct verdict v = {""};
	json_error_t err;
	struct jw w;
	json_t *j;

	jw_init(&w, line, sizeof(line));
	les_format_access(&w, &fc, m, r, en);
	ck_assert(!w.overflow);
	ck_assert_msg(w.len && line[w.len - 1] == '\n', "a line ends with a newline");
	j = json_loadb(line, w.len, 0, &err);
	ck_assert_msg(j, "not JSON: %s: %.*s", err.text, (int)w.len, line);
	ck_assert_msg(valid(schema, j, "", &v), "%s in %.*s", v.why, (int)w.len, line);
	return j;
}

static const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

static bool is_null(json_t *j, const char *key)
{
	return json_is_null(json_object_get(j, key));
}

/* Every op with every method: each one's name and intent are in the schema's enums. */
START_TEST(test_every_op_and_method)
{
	for (unsigned int op = 0; op < LES_OP_MAX; op++) {
		for (unsigned int method = 0; method < LES_ATTACH_MAX; method++) {
			struct les_rec_access r = access_rec(op, method, 0);
			json_t *j = format_valid(NULL, &r, NULL);

			ck_assert_str_eq(str(j, "type"), "access");
			ck_assert_str_eq(str(j, "op"), les_op_name(op));
			ck_assert_str_eq(str(j, "method"), les_attach_method_name(method));
			json_decref(j);
		}
	}
}
END_TEST

/*
 * An op or method past the tables (a newer BPF object): still a valid
 * record, named "unknown".
 */
START_TEST(test_op_out_of_range)
{
	struct les_rec_access r = access_rec(LES_OP_MAX + 5, LES_ATTACH_MAX + 1, 0);
	json_t *j = format_valid(NULL, &r, NULL);

	ck_assert_str_eq(str(j, "op"), "unknown");
	ck_assert_str_eq(str(j, "method"), "unknown");
	json_decref(j);
}
END_TEST

/* Success has a null errno_class; errnos inside and past the pre-encoded ones. */
START_TEST(test_errnos)
{
	static const int errs[] = {0, 2, 5, 13, 110, LES_FMT_ERRNO_MAX, LES_FMT_ERRNO_MAX + 1,
				   4095};

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct les_rec_access r = access_rec(1, 0, errs[i]);
		json_t *j = format_valid(NULL, &r, NULL);

		ck_assert_int_eq(json_integer_value(json_object_get(j, "errno")), errs[i]);
		if (errs[i])
			ck_assert_str_eq(str(j, "errno_class"),
					 les_errno_class_name(les_errno_class(errs[i])));
		else
			ck_assert(is_null(j, "errno_class"));
		json_decref(j);
	}
}
END_TEST

/* No mount known and no enrichment: where is null, who is the kernel's alone. */
START_TEST(test_absent_mount_is_null)
{
	struct les_rec_access r = access_rec(1, 0, 0);
	json_t *j = format_valid(NULL, &r, NULL);

	ck_assert(is_null(j, "fs_type"));
	ck_assert(is_null(j, "fs"));
	ck_assert(is_null(j, "mount"));
	ck_assert_str_eq(str(j, "host"), "node1");
	ck_assert_ptr_null(json_object_get(j, "process"));
	ck_assert_ptr_null(json_object_get(j, "dev"));
	json_decref(j);
}
END_TEST

/*
 * Bytes a comm may hold: quotes, backslashes, control bytes, UTF-8, and
 * bytes that are not UTF-8. Every line parses and validates; a comm that
 * is UTF-8 comes back as it was.
 */
START_TEST(test_comm_escaping)
{
	static const char *const comms[] = {
		"a\"b\\c\n\t\x01z", "d\xc3\xa9j\xc3\xa0 vu", "\xff\xfe\x80", "\xe2\x82", "\x7f",
	};

	for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
		struct les_rec_access r = access_rec(1, 0, 0);
		json_t *j;

		memset(r.task.comm, 0, sizeof(r.task.comm));
		memcpy(r.task.comm, comms[i], strlen(comms[i]));
		j = format_valid(NULL, &r, NULL);
		if (i < 2)
			ck_assert_str_eq(str(j, "comm"), comms[i]);
		json_decref(j);
	}
}
END_TEST

/* A comm of all 16 bytes (no NUL): cut at the record's field, not past it. */
START_TEST(test_comm_full_length)
{
	struct les_rec_access r = access_rec(1, 0, 0);
	json_t *j;

	memset(r.task.comm, 'x', sizeof(r.task.comm));
	j = format_valid(NULL, &r, NULL);
	ck_assert_uint_eq(strlen(str(j, "comm")), sizeof(r.task.comm));
	json_decref(j);
}
END_TEST

/* Mounts from a mountinfo of a Lustre mount and a FUSE one with a space and UTF-8. */
static void observe(struct les_observed *obs)
{
	static const char mountinfo[] =
		"60 22 0:70 / /lustre/scratch rw - lustre 10.0.0.1@o2ib:/scratch rw,flock\n"
		"61 22 0:71 / /mnt/donn\xc3\xa9" "es\\040x rw - fuse.sshfs u@h:/\"q\" rw\n";
	char path[] = "/tmp/les-test-schema.XXXXXX", err[256];
	struct les_mount_table t = {0};
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, mountinfo, sizeof(mountinfo) - 1), (ssize_t)sizeof(mountinfo) - 1);
	close(fd);
	ck_assert_int_eq(les_mount_table_load(&t, path), 0);
	unlink(path);
	memset(obs, 0, sizeof(*obs));
	ck_assert_int_eq(les_observed_select(obs, &t, NULL, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(obs->n, 2);
	les_mount_table_free(&t);
}

/*
 * With --file-id: dev and ino always; on Lustre the FID, null when it was
 * not read; elsewhere no FID at all.
 */
START_TEST(test_file_id_and_mounts)
{
	struct les_observed obs;
	const struct les_observed_mount *lustre, *fuse;
	struct les_rec_access r = access_rec(20, 0, 0);
	json_t *j;

	observe(&obs);
	lustre = les_observed_find(&obs, (0u << 20) | 70);
	fuse = les_observed_find(&obs, (0u << 20) | 71);
	ck_assert_ptr_nonnull(lustre);
	ck_assert_ptr_nonnull(fuse);
	les_fmt_ctx_init(&fc, "node1", true);

	j = format_valid(lustre, &r, NULL);
	ck_assert_str_eq(str(j, "fs_type"), "lustre");
	ck_assert_str_eq(str(j, "fs"), "scratch");
	ck_assert_str_eq(str(j, "dev"), "70:3");
	ck_assert(is_null(j, "fid"));
	json_decref(j);

	r.flags = LES_ACCESS_F_FID;
	r.fid.seq = 0x200000401ULL;
	r.fid.oid = 1;
	j = format_valid(lustre, &r, NULL);
	ck_assert_str_eq(str(j, "fid"), "[0x200000401:0x1:0x0]");
	json_decref(j);

	r.flags = 0;
	j = format_valid(fuse, &r, NULL);
	ck_assert_str_eq(str(j, "mount"), "/mnt/donn\xc3\xa9" "es x");
	ck_assert_ptr_null(json_object_get(j, "fid"));
	json_decref(j);
	les_observed_free(&obs);
}
END_TEST

static struct les_enricher *enricher(void)
{
	struct les_enrich_config cfg = {
		.job_env = {"SLURM_JOB_ID"},
		.n_job_env = 1,
		.env_tags = {"PROJECT"},
		.n_env_tags = 1,
		.no_user_lookup = true,
		.proc_root = "/nonexistent",
	};
	struct les_enricher *e;
	char err[256];

	ck_assert_int_eq(les_enrich_new(&e, &cfg, "node1", err, sizeof(err)), 0);
	return e;
}

static void exec_env(struct les_enricher *e, uint32_t pid, const char *env, size_t len)
{
	static struct les_rec_proc p;

	les_test_exec(&p, pid, 1, env, len, NULL);
	les_enrich_exec(e, &p);
}

/*
 * Enriched: a process with a job and a tag that needs escaping, and one
 * with nothing known (job and user name null, tags empty).
 */
START_TEST(test_enriched)
{
	static const char env[] = "SLURM_JOB_ID=12\0PROJECT=\xc3\xa9t\xc3\xa9 \"q\"\\";
	struct les_enricher *e = enricher();
	struct les_rec_access r = access_rec(20, 1, 0);
	const struct les_enriched *en;
	json_t *j;

	exec_env(e, 42, env, sizeof(env));
	en = les_enrich_task(e, &r.task, 0, 1);
	j = format_valid(NULL, &r, en);
	ck_assert_str_eq(str(j, "job_id"), "12");
	ck_assert_str_eq(str(j, "job_source"), "env");
	ck_assert_str_eq(str(json_object_get(j, "tags"), "PROJECT"), "\xc3\xa9t\xc3\xa9 \"q\"\\");
	ck_assert_str_eq(str(j, "process"), "dd");
	ck_assert(is_null(j, "username"));
	json_decref(j);

	r.task.pid = r.task.tid = 4242;
	en = les_enrich_task(e, &r.task, 0, 2);
	j = format_valid(NULL, &r, en);
	ck_assert(is_null(j, "job_id"));
	ck_assert(is_null(j, "job_source"));
	ck_assert_uint_eq(json_object_size(json_object_get(j, "tags")), 0);
	json_decref(j);
	les_enrich_free(e);
}
END_TEST

/*
 * The validator is not vacuous: a record missing a required member, with
 * a member the schema does not allow, or a member of the wrong type fails.
 */
START_TEST(test_validator_refuses)
{
	struct les_rec_access r = access_rec(1, 0, 0);
	json_t *j = format_valid(NULL, &r, NULL), *bad;
	struct verdict v;

	bad = json_deep_copy(j);
	json_object_del(bad, "op_id");
	ck_assert(!valid(schema, bad, "", &v));
	json_decref(bad);

	bad = json_deep_copy(j);
	json_object_set_new(bad, "surprise", json_true());
	ck_assert(!valid(schema, bad, "", &v));
	json_decref(bad);

	bad = json_deep_copy(j);
	json_object_set_new(bad, "errno", json_string("5"));
	ck_assert(!valid(schema, bad, "", &v));
	json_decref(bad);

	bad = json_deep_copy(j);
	json_object_set_new(bad, "ts", json_string("yesterday"));
	ck_assert(!valid(schema, bad, "", &v));
	json_decref(bad);

	bad = json_deep_copy(j);
	json_object_set_new(bad, "op", json_string("teleport"));
	ck_assert(!valid(schema, bad, "", &v));
	json_decref(bad);
	json_decref(j);
}
END_TEST

static Suite *format_schema_suite(void)
{
	Suite *s = suite_create("format_schema");
	TCase *tc = tcase_create("access");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_op_and_method);
	tcase_add_test(tc, test_op_out_of_range);
	tcase_add_test(tc, test_errnos);
	tcase_add_test(tc, test_absent_mount_is_null);
	tcase_add_test(tc, test_comm_escaping);
	tcase_add_test(tc, test_comm_full_length);
	tcase_add_test(tc, test_file_id_and_mounts);
	tcase_add_test(tc, test_enriched);
	tcase_add_test(tc, test_validator_refuses);
	tcase_add_test(tc, test_lnet_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(format_schema_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
