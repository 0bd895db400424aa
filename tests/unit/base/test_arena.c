/*
** test_arena.c — the bounded bump allocator (base/arena.h): zeroed and
** aligned memory, the cap, and arena_reset handing the same chunks out
** again (zeroed, under the cap counted from nothing) so that a loop of
** decisions does not allocate a scenario's worth of chunks each time.
*/
#include "gbtest.h"

#include <stdint.h>
#include <string.h>

#include "base/arena.h"

static void test_alloc_and_cap(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 10000);
	static const size_t sizes[] = {1, 15, 16, 17, 100, 3000, 4096};
	size_t used = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = arena_alloc(&a, sizes[i]);
		used += (sizes[i] + 15) & ~(size_t)15;
		if (used > 10000) {
			assert_null(p);
			used -= (sizes[i] + 15) & ~(size_t)15;
			continue;
		}
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		for (size_t j = 0; j < sizes[i]; j++)
			assert_int_equal(p[j], 0);
		memset(p, 0xAB, sizes[i]);
	}
	assert_int_equal(a.used, used);
	assert_null(arena_alloc(&a, 10000)); /* beyond the cap */
	assert_null(arena_alloc(&a, SIZE_MAX - 4)); /* size overflow */
	assert_string_equal(arena_strndup(&a, "abcdef", 3), "abc");
	assert_null(arena_strdup(&a, NULL));
	arena_free(&a);
	assert_int_equal(a.used, 0);
	assert_null(a.head);
}

static void test_reset_reuses(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 1u << 24);
	/* a scenario's worth: chunks of every size the arena grows through */
	unsigned char *first = arena_alloc(&a, 64);
	assert_non_null(first);
	for (int i = 0; i < 2000; i++) {
		unsigned char *p = arena_alloc(&a, 1000);
		assert_non_null(p);
		memset(p, 0x5A, 1000);
	}
	memset(first, 0x5A, 64);
	size_t before = a.used;
	assert_true(before > 2000 * 1000);
	arena_reset(&a);
	assert_int_equal(a.used, 0);
	assert_null(a.head);
	assert_non_null(a.spare);
	/* the first chunk comes back first, zeroed */
	unsigned char *again = arena_alloc(&a, 64);
	assert_ptr_equal(again, first);
	for (int j = 0; j < 64; j++)
		assert_int_equal(again[j], 0);
	for (int i = 0; i < 2000; i++) {
		unsigned char *p = arena_alloc(&a, 1000);
		assert_non_null(p);
		for (int j = 0; j < 1000; j += 97)
			assert_int_equal(p[j], 0);
	}
	assert_int_equal(a.used, before);
	/* larger than every kept chunk: a new one */
	assert_non_null(arena_alloc(&a, 3u << 20));
	/* the cap counts from the reset */
	arena_reset(&a);
	struct arena b = a;
	b.cap = 4096;
	assert_non_null(arena_alloc(&b, 4096));
	assert_null(arena_alloc(&b, 16));
	arena_free(&b);
	assert_null(b.spare);
	assert_null(b.head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_and_cap),
		cmocka_unit_test(test_reset_reuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
