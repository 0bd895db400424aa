/*
** test_jsonw.c — the JSON writer (base/jsonw.h) against jansson's
** json_dumps: the same bytes for every value and every flag set, on a
** table of edge cases (escapes, NUL inside strings, integer limits, reals
** at the ends of the double range, key orders jansson sorts by bytes then
** length) and on generated trees; and the values it leaves to jansson
** come out as jansson writes them too. A stored record's digest is a hash
** of these bytes, so any difference would make every replayed decision
** differ.
*/
#include "gbtest.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"

/* The flag sets the decision records and the scenario dumps use, and a
** few around them. */
static const size_t flag_sets[] = {
	JSON_COMPACT,
	JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17),
	JSON_COMPACT | JSON_REAL_PRECISION(12),
	JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12),
	JSON_COMPACT | JSON_SORT_KEYS,
	JSON_COMPACT | JSON_REAL_PRECISION(3) | JSON_ENCODE_ANY,
	JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII,
};
#define NFLAGS (sizeof(flag_sets) / sizeof(flag_sets[0]))

/* What a sink was handed, the pieces joined; NULL (n 0) starts over. */
struct collect {
	char *p;
	size_t n, cap, pieces, resets;
	int fail_at; /* the piece to refuse (1-based); 0: none */
};

static int collect(const char *buf, size_t n, void *arg)
{
	struct collect *c = arg;
	if (buf == NULL) {
		c->n = 0;
		c->resets++;
		return 0;
	}
	if (++c->pieces == (size_t)c->fail_at)
		return -1;
	if (c->n + n + 1 > c->cap) {
		c->cap = (c->n + n + 1) * 2;
		c->p = realloc(c->p, c->cap);
		assert_non_null(c->p);
	}
	memcpy(c->p + c->n, buf, n);
	c->n += n;
	c->p[c->n] = '\0';
	return 0;
}

/* jw_dumps(v, flags) is json_dumps(v, flags), length included, and
** jw_dump_sink hands over the same text. */
static void same_as_jansson(const json_t *v, size_t flags)
{
	struct collect c = {0};
	int src = jw_dump_sink(v, flags, collect, &c);
	char *want0 = json_dumps(v, flags);
	if (want0 == NULL) {
		assert_int_equal(src, -1);
	} else {
		assert_int_equal(src, 0);
		assert_non_null(c.p);
		assert_int_equal(c.n, strlen(want0));
		assert_memory_equal(c.p, want0, c.n);
	}
	free(want0);
	free(c.p);
	char *want = json_dumps(v, flags);
	size_t len = 12345;
	char *got = jw_dumps(v, flags, &len);
	if (want == NULL) {
		assert_null(got);
		assert_int_equal(len, 0);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(want);
	free(got);
}

static void all_flags(const json_t *v)
{
	for (size_t f = 0; f < NFLAGS; f++)
		same_as_jansson(v, flag_sets[f]);
}

/* Documents as text: escapes, nesting, key orders. */
static const char *const docs[] = {
	"{}",
	"[]",
	"[[],{},[[]],{\"a\":{}}]",
	"{\"b\":1,\"a\":2,\"ab\":3,\"aa\":4,\"\":5,\"B\":6,\"a b\":7}",
	"{\"zeta\":[1,2,{\"y\":null,\"x\":true}],\"alpha\":false}",
	"{\"s\":\"quote \\\" back \\\\ slash / tab \\t nl \\n cr \\r bs \\b "
	"ff \\f bell \\u0007 us \\u001f del \\u007f\"}",
	"[\"\",\"a\",\"\\u0000x\",\"x\\u0000\"]",
	"{\"k\\u0001\":1,\"k\\\"\":2,\"k\\\\\":3}",
	"[0,-1,1,9223372036854775807,-9223372036854775808,1000000,-42]",
	"[0.0,-0.0,1.0,-1.5,0.1,0.2,0.30000000000000004,1e300,-1e-300,"
	"5e-324,2.2250738585072014e-308,1.7976931348623157e308,123456789012."
	"5,1e21,1e20,1e17,1e16,123456789012345678,0.000123456789012345678,"
	"-0.000123456789012345678,1e-5,1e-4,3.14159265358979,100.0,1e5]",
	"{\"candidates\":[{\"name\":\"Q1\",\"weight\":0.123456789,\"stage\":null,"
	"\"reasons\":[]},{\"name\":\"Q2\",\"weight\":null,\"stage\":\"memory\","
	"\"reasons\":[{\"rule\":\"PJ-15\",\"code\":\"lowmemory\",\"detail\":"
	"\"memory 900 MB < minrss 2000 MB\"}]}],\"decision\":\"assigned\"}",
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_error_t e;
		json_t *v = json_loads(docs[i], JSON_ALLOW_NUL, &e);
		if (v == NULL)
			fail_msg("doc %zu: %s", i, e.text);
		all_flags(v);
		json_decref(v);
	}
	/* scalars at the top: only with JSON_ENCODE_ANY, as jansson */
	json_t *sc[] = {json_integer(LLONG_MIN), json_real(DBL_MIN),
			json_real(-DBL_MAX), json_real(DBL_TRUE_MIN),
			json_stringn("a\0b\x1f", 4), json_true(), json_false(),
			json_null()};
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		assert_non_null(sc[i]);
		all_flags(sc[i]);
		json_decref(sc[i]);
	}
	/* every precision jansson takes */
	json_t *reals = json_pack("[ffffff]", 1.0 / 3, 2.0 / 3, 1e-7, 12345.678,
				  -9.87654321e-12, 1e22);
	for (int p = 0; p < 32; p++) {
		same_as_jansson(reals, JSON_COMPACT | JSON_REAL_PRECISION(p));
		same_as_jansson(reals, JSON_COMPACT | JSON_SORT_KEYS |
					       JSON_REAL_PRECISION(p));
	}
	json_decref(reals);
	/* a NULL value */
	assert_null(jw_dumps(NULL, JSON_COMPACT, NULL));
}

/* Values this writer hands to jansson come out as jansson writes them:
** UTF-8 (checked, or escaped under JSON_ENSURE_ASCII), flags it does not
** write, nesting beyond JW_MAX_DEPTH. */
static void test_left_to_jansson(void **state)
{
	(void)state;
	json_t *u = json_pack("{s:s,s:[s]}", "caf\xc3\xa9", "na\xc3\xafve",
			      "k", "\xe2\x82\xac 5 \xf0\x9f\x98\x80");
	assert_non_null(u);
	all_flags(u);
	same_as_jansson(u, JSON_INDENT(2));
	same_as_jansson(u, JSON_COMPACT | JSON_ESCAPE_SLASH);
	same_as_jansson(u, JSON_COMPACT | JSON_EMBED);
	json_decref(u);
	/* a string made without the UTF-8 check: jansson refuses it */
	json_t *bad = json_pack("[o]", json_string_nocheck("\xff\xfe"));
	assert_non_null(bad);
	same_as_jansson(bad, JSON_COMPACT);
	json_decref(bad);
	json_t *deep = json_array(), *at = deep;
	for (int i = 0; i < JW_MAX_DEPTH + 20; i++) {
		json_t *n = json_object();
		json_object_set_new(n, i % 2 ? "b" : "a", json_integer(i));
		json_t *arr = json_array();
		json_object_set_new(n, "next", arr);
		json_array_append_new(at, n);
		at = arr;
	}
	all_flags(deep);
	json_decref(deep);
}

/* xorshift64*: the same trees on every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* A short ASCII text drawn from an alphabet with escapes and near-equal
** prefixes, so that sorting and escaping are both exercised. */
static json_t *rnd_text(uint64_t *s, int as_key, char *buf, size_t cap)
{
	static const char alpha[] = "aab\"\\/\t\n\x01\x1f ~zZ0";
	size_t n = rnd(s) % 7;
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = alpha[rnd(s) % (sizeof(alpha) - 1)];
	buf[n] = '\0';
	return as_key ? NULL : json_stringn(buf, n);
}

static double rnd_real(uint64_t *s)
{
	for (;;) {
		uint64_t bits = rnd(s);
		switch (rnd(s) % 4) {
		case 0: { /* any finite double */
			double d;
			memcpy(&d, &bits, sizeof(d));
			if (d == d && d - d == 0)
				return d;
			break;
		}
		case 1: /* a weight-like fraction */
			return (double)(bits % 1000000007ULL) / 1000000007.0;
		case 2: /* an integer-valued real */
			return (double)((int64_t)(bits % 2000000000001ULL) -
					1000000000000LL);
		default: /* a power of ten around the %g switch points */
			return (bits & 1 ? -1.0 : 1.0) *
			       (double)(1 + bits % 9) *
			       (bits & 2 ? 1e-5 : 1e16) * (bits & 4 ? 10 : 1);
		}
	}
}

static json_t *rnd_value(uint64_t *s, int depth)
{
	char k[16];
	switch (rnd(s) % (depth > 4 ? 6 : 8)) {
	case 0:
		return json_integer((json_int_t)rnd(s));
	case 1:
		return json_integer((json_int_t)(rnd(s) % 2001) - 1000);
	case 2:
		return json_real(rnd_real(s));
	case 3:
		return rnd_text(s, 0, k, sizeof(k));
	case 4:
		return rnd(s) & 1 ? json_true() : json_null();
	case 5:
		return json_false();
	case 6: {
		json_t *a = json_array();
		for (size_t i = rnd(s) % 6; i > 0; i--)
			json_array_append_new(a, rnd_value(s, depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (size_t i = rnd(s) % 9; i > 0; i--) {
			rnd_text(s, 1, k, sizeof(k));
			json_object_set_new(o, k, rnd_value(s, depth + 1));
		}
		return o;
	}
	}
}

static void test_generated(void **state)
{
	(void)state;
	uint64_t s = 0x9E3779B97F4A7C15ULL;
	for (int i = 0; i < 3000; i++) {
		json_t *v = json_array();
		json_array_append_new(v, rnd_value(&s, 0));
		json_array_append_new(v, rnd_value(&s, 0));
		all_flags(v);
		json_decref(v);
	}
	/* an object of many keys: sorted with qsort, not in place */
	json_t *big = json_object();
	for (int i = 0; i < 500; i++) {
		char k[16];
		snprintf(k, sizeof(k), "q%u", (unsigned)(rnd(&s) % 100000));
		json_object_set_new(big, k, json_real(rnd_real(&s)));
	}
	all_flags(big);
	json_decref(big);
}

/* A text of many pieces: each at most JW_SINK_BUF but for a longer
** string; a sink that refuses a piece fails the dump. */
static void test_sink_pieces(void **state)
{
	(void)state;
	json_t *a = json_array();
	for (int i = 0; i < 5000; i++)
		json_array_append_new(a, json_real(i / 7.0));
	char *longs = malloc(40001);
	assert_non_null(longs);
	memset(longs, 'q', 40000);
	longs[40000] = '\0';
	json_array_append_new(a, json_string(longs));
	json_array_append_new(a, json_string("tail\n"));
	free(longs);
	same_as_jansson(a, JSON_COMPACT | JSON_SORT_KEYS |
				   JSON_REAL_PRECISION(17));
	struct collect c = {0};
	assert_int_equal(jw_dump_sink(a, JSON_COMPACT, collect, &c), 0);
	assert_true(c.pieces >= 4);
	assert_int_equal(c.resets, 0);
	free(c.p);
	struct collect f = {.fail_at = 2};
	assert_int_equal(jw_dump_sink(a, JSON_COMPACT, collect, &f), -1);
	free(f.p);
	/* left to jansson: what was handed is forgotten, then all again */
	json_array_append_new(a, json_string("caf\xc3\xa9"));
	struct collect r = {0};
	assert_int_equal(jw_dump_sink(a, JSON_COMPACT, collect, &r), 0);
	assert_int_equal(r.resets, 1);
	char *want = json_dumps(a, JSON_COMPACT);
	assert_string_equal(r.p, want);
	free(want);
	free(r.p);
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_left_to_jansson),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_sink_pieces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
