/*
** test_zbuf.c — whole-buffer deflate and inflate (base/zbuf.h): round
** trips of every size class at every level, and the refusals that keep a
** damaged decision_inputs row from making a reader allocate without
** bound or accept bytes that are not what was stored.
*/
#include "gbtest.h"

#include <stdlib.h>
#include <string.h>

#include "base/zbuf.h"
#include "gb_error.h"

/* A scenario-like text: repeated keys, varying numbers. */
static char *sample(size_t n)
{
	char *s = malloc(n + 1);
	assert_non_null(s);
	static const char piece[] = "{\"name\":\"QUEUE_%05zu\",\"status\":"
				    "\"online\",\"nQueued\":%zu},";
	size_t k = 0;
	for (size_t i = 0; k < n; i++) {
		char b[96];
		int w = snprintf(b, sizeof(b), piece, i, (i * 7919) % 1000);
		for (int j = 0; j < w && k < n; j++)
			s[k++] = b[j];
	}
	s[n] = '\0';
	return s;
}

static void test_round_trips(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 100, 65536, 1u << 20};
	static const int levels[] = {1, 6, 9};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *s = sample(sizes[i]);
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
			unsigned char *z = NULL;
			size_t zlen = 0;
			assert_int_equal(zb_deflate(s, sizes[i], levels[l], &z,
						    &zlen),
					 GB_OK);
			/* repeated keys compress: at least 4x from 64 KiB */
			if (sizes[i] >= 65536)
				assert_true(zlen * 4 < sizes[i]);
			char *back = NULL;
			assert_int_equal(zb_inflate(z, zlen, sizes[i], &back),
					 GB_OK);
			assert_memory_equal(back, s, sizes[i]);
			assert_int_equal(back[sizes[i]], '\0');
			free(back);
			free(z);
		}
		free(s);
	}
}

/* What a damaged or mislabelled row gets. */
static void test_refusals(void **state)
{
	(void)state;
	char *s = sample(5000);
	unsigned char *z = NULL;
	size_t zlen = 0;
	assert_int_equal(zb_deflate(s, 5000, 6, &z, &zlen), GB_OK);
	char *out = (char *)1;
	static const struct {
		const char *name;
		size_t len;   /* of z given */
		size_t raw;   /* size claimed */
		int flip;     /* byte index to corrupt, -1 none, -2 the last
				 (the stream's checksum) */
		int want;
	} rows[] = {
		{"claimed size too small", 0, 4999, -1, GB_EDECODE},
		{"claimed size too large", 0, 5001, -1, GB_EDECODE},
		{"truncated stream", 10, 5000, -1, GB_EDECODE},
		{"corrupted stream", 0, 5000, 20, GB_EDECODE},
		{"corrupted checksum", 0, 5000, -2, GB_EDECODE},
		{"over the bound", 0, ZB_MAX_RAW + 1, -1, GB_ETOOBIG},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned char *c = malloc(zlen);
		assert_non_null(c);
		memcpy(c, z, zlen);
		if (rows[i].flip >= 0)
			c[rows[i].flip] ^= 0x5a;
		if (rows[i].flip == -2)
			c[zlen - 1] ^= 0x5a;
		int rc = zb_inflate(c, rows[i].len ? rows[i].len : zlen,
				    rows[i].raw, &out);
		if (rc != rows[i].want)
			fail_msg("%s: got %d, want %d", rows[i].name, rc,
				 rows[i].want);
		assert_null(out);
		free(c);
	}
	free(z);
	z = NULL;
	assert_int_equal(zb_inflate(NULL, 1, 1, &out), GB_EINVAL);
	assert_int_equal(zb_deflate(s, 5000, 0, &z, &zlen), GB_EINVAL);
	assert_int_equal(zb_deflate(s, 5000, 10, &z, &zlen), GB_EINVAL);
	assert_null(z);
	assert_int_equal(zb_deflate(s, ZB_MAX_RAW + 1, 1, &z, &zlen),
			 GB_ETOOBIG);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
