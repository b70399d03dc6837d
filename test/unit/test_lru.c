// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The bounded LRU map behind the process and user caches. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include "util/lru.h"

START_TEST(test_put_get)
{
	struct les_lru l;
	bool created;
	uint32_t *v;

	ck_assert_int_eq(les_lru_init(&l, 4, sizeof(uint32_t)), 0);
	ck_assert_ptr_null(les_lru_get(&l, 7));
	v = les_lru_put(&l, 7, &created);
	ck_assert(created);
	ck_assert_uint_eq(*v, 0);
	*v = 70;
	v = les_lru_put(&l, 7, &created);
	ck_assert(!created);
	ck_assert_uint_eq(*v, 70);
	ck_assert_uint_eq(*(uint32_t *)les_lru_get(&l, 7), 70);
	les_lru_free(&l);
}
END_TEST

START_TEST(test_evicts_least_recent)
{
	struct les_lru l;

	ck_assert_int_eq(les_lru_init(&l, 3, sizeof(uint32_t)), 0);
	for (uint32_t k = 1; k <= 3; k++)
		*(uint32_t *)les_lru_put(&l, k, NULL) = k * 10;
	les_lru_get(&l, 1); /* 2 is now the least recent */
	*(uint32_t *)les_lru_put(&l, 4, NULL) = 40;
	ck_assert_ptr_null(les_lru_get(&l, 2));
	ck_assert_uint_eq(*(uint32_t *)les_lru_get(&l, 1), 10);
	ck_assert_uint_eq(*(uint32_t *)les_lru_get(&l, 3), 30);
	ck_assert_uint_eq(*(uint32_t *)les_lru_get(&l, 4), 40);
	ck_assert_uint_eq(l.evictions, 1);
	ck_assert_uint_eq(l.n, 3);
	les_lru_free(&l);
}
END_TEST

/* Against a plain array model: random puts and gets keep the same contents. */
START_TEST(test_random_against_model)
{
	enum { CAP = 64, KEYS = 200, OPS = 200000 };
	static uint32_t stamp[KEYS], value[KEYS];
	struct les_lru l;
	uint32_t clock = 0;

	srand(12345);
	ck_assert_int_eq(les_lru_init(&l, CAP, sizeof(uint32_t)), 0);
	for (int i = 0; i < OPS; i++) {
		uint32_t k = (uint32_t)rand() % KEYS;
		uint32_t *v;

		if (rand() % 2) {
			v = les_lru_put(&l, k, NULL);
			*v = (uint32_t)i;
			value[k] = (uint32_t)i;
			stamp[k] = ++clock;
		} else {
			uint32_t live = 0;

			/* Present in the model iff among the CAP most recent keys. */
			for (uint32_t j = 0; j < KEYS; j++)
				if (stamp[j] > stamp[k])
					live++;
			v = les_lru_get(&l, k);
			if (stamp[k] && live < CAP) {
				ck_assert_ptr_nonnull(v);
				ck_assert_uint_eq(*v, value[k]);
				stamp[k] = ++clock;
			} else {
				ck_assert_ptr_null(v);
			}
		}
	}
	les_lru_free(&l);
}
END_TEST

static uint64_t released_sum, released_n;

static void count_release(void *ctx, void *value)
{
	(void)ctx;
	released_sum += *(uint32_t *)value;
	released_n++;
}

/*
 * Every value leaves through on_evict exactly once, whether a put makes
 * room or evict_oldest ages it out; the rest stay findable with their
 * values although evict_oldest moves slots around.
 */
START_TEST(test_evict_oldest_releases_each_value)
{
	enum { CAP = 16, OPS = 50000 };
	struct les_lru l;
	uint64_t in_sum = 0, in_n = 0, live_sum = 0;

	ck_assert_int_eq(les_lru_init(&l, CAP, sizeof(uint32_t)), 0);
	l.on_evict = count_release;
	srand(777);
	for (uint32_t i = 1; i <= OPS; i++) {
		bool created;
		uint32_t *v;

		if (rand() % 3 == 0) {
			bool had = l.n > 0;

			ck_assert(les_lru_evict_oldest(&l) == had);
			continue;
		}
		v = les_lru_put(&l, (uint32_t)rand() % 40, &created);
		if (!created)
			continue;
		*v = i;
		in_sum += i;
		in_n++;
	}
	for (uint32_t k = 0; k < 40; k++) {
		uint32_t *v = les_lru_get(&l, k);

		if (v)
			live_sum += *v;
	}
	ck_assert_uint_le(l.n, CAP);
	ck_assert_uint_eq(released_n + l.n, in_n);
	ck_assert_uint_eq(released_sum + live_sum, in_sum);
	while (les_lru_evict_oldest(&l))
		;
	ck_assert_uint_eq(l.n, 0);
	ck_assert_uint_eq(released_sum, in_sum);
	les_lru_free(&l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lru");
	TCase *tc = tcase_create("lru");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_put_get);
	tcase_add_test(tc, test_evicts_least_recent);
	tcase_add_test(tc, test_random_against_model);
	tcase_add_test(tc, test_evict_oldest_releases_each_value);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
