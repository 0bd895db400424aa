/*
** test_arena.c — the bounded bump allocator (base/arena.h): zeroed and
** aligned memory, the cap (a size that would overflow included), and the
** string copies.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_and_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
