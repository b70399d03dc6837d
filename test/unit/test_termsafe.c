// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names on the terminal: the shared escape (control characters, bidi
 * overrides, bad UTF-8), and the two terminal outputs that print job IDs
 * and comm, the top frame and the end-of-run summary.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "les_record.h"
#include "model/ops.h"
#include "sink/summary.h"
#include "sink/top.h"
#include "util/utf8.h"

/* An OSC that retitles the terminal, and a CSI that clears the screen. */
#define EVIL_JOB  "j\x1b]0;owned\x07"
#define EVIL_COMM "c\x1b[2J"

static const char *safe(const char *s)
{
	static char out[256];

	les_term_safe(s, out, sizeof(out));
	return out;
}

/* No byte a terminal acts on: C0, DEL, or the C1 range's UTF-8 lead. */
static void assert_inert(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p != 0x7f), "byte 0x%02x in:\n%s", *p,
			      text);
	ck_assert_ptr_null(strstr(text, "\xc2\x9b"));
}

START_TEST(test_escape)
{
	ck_assert_str_eq(safe("job_42.x-1"), "job_42.x-1");
	ck_assert_str_eq(safe(EVIL_JOB), "j\\x1b]0;owned\\x07");
	ck_assert_str_eq(safe("a\tb\nc\x7f"), "a\\x09b\\x0ac\\x7f");
	/* C1 CSI (U+009B) as UTF-8, a lone continuation byte, a cut sequence. */
	ck_assert_str_eq(safe("\xc2\x9b"
			      "2J"),
			 "\\xc2\\x9b2J");
	ck_assert_str_eq(safe("\x80z\xe6\x97"), "\\x80z\\xe6\\x97");
	/* U+202E (right-to-left override) would reorder the line. */
	ck_assert_str_eq(safe("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey");
	/* Printable UTF-8 stays; a backslash doubles, so an escape is never ambiguous. */
	ck_assert_str_eq(safe("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");
	ck_assert_str_eq(safe("a\\x1b"), "a\\\\x1b");
}
END_TEST

START_TEST(test_escape_room)
{
	char out[8];

	/* An escape is never cut: "ab" and the 4-byte \x1b need 6 bytes and the NUL. */
	ck_assert_uint_eq(les_term_safe("ab\x1b"
					"c",
					out, 6),
			  2);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(les_term_safe("ab\x1b"
					"c",
					out, 7),
			  6);
	ck_assert_str_eq(out, "ab\\x1b");
	ck_assert_uint_eq(les_term_safe("\xc3\xa9", out, 2), 0); /* é does not fit in 1 */
	ck_assert_uint_eq(les_term_safe("x", out, 0), 0);
	/* The stated room holds the worst name whole. */
	{
		char name[17], room[LES_TERM_SAFE_LEN(16)];

		memset(name, 0x9b, 16);
		name[16] = '\0';
		ck_assert_uint_eq(les_term_safe(name, room, sizeof(room)), 64);
	}
}
END_TEST

static struct les_event evil_ev(void)
{
	struct les_event ev = {
		.kind = LES_REC_ACCESS,
		.type = "access",
		.mount = "/mnt/l",
		.op = "read",
		.access_op = (unsigned int)les_op_from_name("read"),
		.latency_ns = 1000,
		.bytes = 1,
		.username = "alice",
		.process = EVIL_COMM,
		.comm = EVIL_COMM,
		.job_id = EVIL_JOB,
		.uid = 1000,
	};

	return ev;
}

START_TEST(test_top_frame)
{
	struct les_top *t = les_top_new();
	struct les_top_header h = {.n_mounts = 1};
	static char frame[16384];
	struct les_event ev = evil_ev();

	ck_assert_ptr_nonnull(t);
	snprintf(h.mounts[0].mount, sizeof(h.mounts[0].mount), "/mnt/\x1b[5mx");
	les_top_set_filter(t, "");
	les_top_event(t, &ev);
	les_top_close_interval(t, 1.0, 0, &h);
	les_top_render(t, LES_TOP_JOB, LES_TOP_SORT_OPS, 0, 0, frame, sizeof(frame));
	assert_inert(frame);
	ck_assert_msg(strstr(frame, "\nj\\x1b]0;owne"), "%s", frame); /* the column is 14 wide */
	ck_assert_msg(strstr(frame, "/mnt/\\x1b[5mx 0"), "%s", frame);
	les_top_render(t, LES_TOP_PROCESS, LES_TOP_SORT_OPS, 0, 0, frame, sizeof(frame));
	assert_inert(frame);
	ck_assert_msg(strstr(frame, "\nc\\x1b[2J "), "%s", frame);
	les_top_free(t);
}
END_TEST

START_TEST(test_summary)
{
	struct les_summary *s = les_summary_new();
	struct les_summary_totals tot = {.elapsed_ns = 1000000000, .emitted = 1};
	struct les_event ev = evil_ev();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(f);
	les_summary_event(s, &ev);
	les_summary_print(s, &tot, f);
	fclose(f);
	assert_inert(text);
	ck_assert_msg(strstr(text, "  j\\x1b]0;owned\\x07\n"), "%s", text);
	ck_assert_msg(strstr(text, "  c\\x1b[2J\n"), "%s", text);
	free(text);
	les_summary_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("termsafe");
	TCase *tc = tcase_create("names");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_escape_room);
	tcase_add_test(tc, test_top_frame);
	tcase_add_test(tc, test_summary);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
