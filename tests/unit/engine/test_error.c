/*
** test_error.c — every error code has a name and a message.
*/
#include "gbtest.h"

#include "gb_error.h"

static void test_every_code_has_text(void **state)
{
	(void)state;
	static const int codes[] = {
#define GB_ERR_CODE(name, value, text) value,
		GB_ERRORS(GB_ERR_CODE)
#undef GB_ERR_CODE
	};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		assert_string_not_equal(gb_strerror(codes[i]), "unknown error");
		assert_non_null(gb_errname(codes[i]));
		if (codes[i] != GB_OK)
			assert_true(codes[i] < 0);
		for (size_t k = 0; k < i; k++)
			assert_int_not_equal(codes[i], codes[k]); /* unique */
	}
	assert_string_equal(gb_strerror(12345), "unknown error");
	assert_null(gb_errname(12345));
	assert_string_equal(gb_errname(GB_EINVAL), "GB_EINVAL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_code_has_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
