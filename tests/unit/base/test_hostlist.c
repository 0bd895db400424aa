/*
** test_hostlist.c — server lists: parsing (every accepted form with the
** entries it gives, every rejected form with its exact message) and the
** failover order a client follows over several connect attempts.
*/
#include "gbtest.h"

#include "gb_error.h"
#include "base/hostlist.h"

#define S10 "aaaaaaaaaa"
#define S50 S10 S10 S10 S10 S10
#define S250 S50 S50 S50 S50 S50

/* ---- accepted lists ----------------------------------------------------- */

static const struct {
	const char *name, *text;
	int def;
	size_t n;
	const char *want[HL_MAX]; /* hl_format of each entry */
	int v6[HL_MAX];
} good[] = {
	{ "one host", "mq1", 5672, 1, { "mq1:5672" }, { 0 } },
	{ "one host with port", "mq1:5673", 5672, 1, { "mq1:5673" }, { 0 } },
	{ "address", "127.0.0.1", 3306, 1, { "127.0.0.1:3306" }, { 0 } },
	{ "three, mixed ports", "mq1,mq2:5673,mq3", 5672, 3,
	  { "mq1:5672", "mq2:5673", "mq3:5672" }, { 0, 0, 0 } },
	{ "blanks around entries", " a , b:1 ,\tc ", 7, 3,
	  { "a:7", "b:1", "c:7" }, { 0, 0, 0 } },
	{ "ipv6 without port", "[::1]", 5672, 1, { "[::1]:5672" }, { 1 } },
	{ "ipv6 with port", "[2001:db8::7]:5671", 5672, 1,
	  { "[2001:db8::7]:5671" }, { 1 } },
	{ "ipv6 with zone", "[fe80::1%eth0]:1", 5672, 1,
	  { "[fe80::1%eth0]:1" }, { 1 } },
	{ "ipv4-mapped ipv6", "[::ffff:10.0.0.1]", 3306, 1,
	  { "[::ffff:10.0.0.1]:3306" }, { 1 } },
	{ "ipv4 and ipv6", "10.0.0.1:3307,[::1]:3308", 3306, 2,
	  { "10.0.0.1:3307", "[::1]:3308" }, { 0, 1 } },
	{ "port bounds", "a:1,b:65535", 9, 2, { "a:1", "b:65535" }, { 0, 0 } },
	{ "eight entries", "a,b,c,d,e,f,g,h", 1, 8,
	  { "a:1", "b:1", "c:1", "d:1", "e:1", "f:1", "g:1", "h:1" },
	  { 0 } },
	{ "name characters", "db-1.galera_a.example.org", 3306, 1,
	  { "db-1.galera_a.example.org:3306" }, { 0 } },
	{ "longest host", S250 "aaa", 1, 1, { S250 "aaa:1" }, { 0 } },
};

static void test_parse_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct hl_list l;
		char err[256] = "x";
		int rc = hl_parse(good[i].text, good[i].def, &l, err,
				  sizeof(err));
		if (rc != GB_OK)
			fail_msg("%s: rc %d: %s", good[i].name, rc, err);
		assert_string_equal(err, "");
		if (l.n != good[i].n)
			fail_msg("%s: %zu entries, expected %zu", good[i].name,
				 l.n, good[i].n);
		for (size_t k = 0; k < l.n; k++) {
			char buf[HL_TEXT_MAX];
			hl_format(&l.e[k], buf, sizeof(buf));
			if (strcmp(buf, good[i].want[k]) != 0)
				fail_msg("%s: entry %zu is \"%s\", expected "
					 "\"%s\"",
					 good[i].name, k + 1, buf,
					 good[i].want[k]);
			assert_int_equal(l.e[k].ipv6, good[i].v6[k]);
		}
	}
}

/* The host itself is stored without brackets: that is what getaddrinfo()
** in both client libraries wants. */
static void test_parse_fields(void **state)
{
	(void)state;
	struct hl_list l;
	assert_int_equal(hl_parse("[::1]:5671, mq2", 5672, &l, NULL, 0), GB_OK);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.e[0].host, "::1");
	assert_int_equal(l.e[0].port, 5671);
	assert_string_equal(l.e[1].host, "mq2");
	assert_int_equal(l.e[1].port, 5672);
}

/* ---- rejected lists ----------------------------------------------------- */

static const struct {
	const char *name, *text, *err;
} bad[] = {
	{ "empty", "", "no host given" },
	{ "blank", "  \t ", "no host given" },
	{ "lone comma", ",", "entry 1 is empty" },
	{ "stray comma", "a,,b", "entry 2 is empty" },
	{ "trailing comma", "a,b,", "entry 3 is empty" },
	{ "blank entry", "a, ,b", "entry 2 is empty" },
	{ "nine entries", "a,b,c,d,e,f,g,h,i", "9 entries, at most 8" },
	{ "too many even if one is bad", "a,b,c,d,e,f,g,h,:x",
	  "9 entries, at most 8" },
	{ "port zero", "mq1:0", "entry 1 (\"mq1:0\"): bad port \"0\" (1..65535)" },
	{ "port too big", "a,mq2:65536",
	  "entry 2 (\"mq2:65536\"): bad port \"65536\" (1..65535)" },
	{ "port not a number", "mq1:amqp",
	  "entry 1 (\"mq1:amqp\"): bad port \"amqp\" (1..65535)" },
	{ "port empty", "mq1:", "entry 1 (\"mq1:\"): bad port \"\" (1..65535)" },
	{ "port signed", "mq1:+5672",
	  "entry 1 (\"mq1:+5672\"): bad port \"+5672\" (1..65535)" },
	{ "port six digits", "mq1:005672",
	  "entry 1 (\"mq1:005672\"): bad port \"005672\" (1..65535)" },
	{ "no host", ":5672", "entry 1 (\":5672\"): no host before ':'" },
	{ "bare ipv6", "::1",
	  "entry 1 (\"::1\"): an IPv6 address needs brackets: "
	  "[address]:port" },
	{ "bare ipv6 with port", "a,2001:db8::7:5672",
	  "entry 2 (\"2001:db8::7:5672\"): an IPv6 address needs brackets: "
	  "[address]:port" },
	{ "unclosed bracket", "[::1:5672", "entry 1 (\"[::1:5672\"): missing ']'" },
	{ "junk after bracket", "[::1]5672",
	  "entry 1 (\"[::1]5672\"): expected ':' and a port after ']'" },
	{ "empty brackets", "[]:5672",
	  "entry 1 (\"[]:5672\"): empty address in brackets" },
	{ "name in brackets", "[mq1]:5672",
	  "entry 1 (\"[mq1]:5672\"): brackets hold IPv6 addresses only" },
	{ "bad ipv6 character", "[::g]",
	  "entry 1 (\"[::g]\"): 'g' is not allowed in an IPv6 address" },
	{ "bad ipv6 port", "[::1]:x",
	  "entry 1 (\"[::1]:x\"): bad port \"x\" (1..65535)" },
	{ "blank inside", "mq 1",
	  "entry 1 (\"mq 1\"): ' ' is not allowed in a host name" },
	{ "slash", "mq1/vhost",
	  "entry 1 (\"mq1/vhost\"): '/' is not allowed in a host name" },
	{ "url", "amqp://mq1",
	  "entry 1 (\"amqp://mq1\"): bad port \"//mq1\" (1..65535)" },
	{ "semicolon separator", "a;b",
	  "entry 1 (\"a;b\"): ';' is not allowed in a host name" },
	{ "host too long", "a," S250 "aaaa:1",
	  "entry 2: host is 254 characters, longer than 253" },
	{ "long entry quoted short", S50 S50 ":x",
	  "entry 1 (\"" S50 "aaaaaaaaaaaaaa...\"): bad port \"x\" (1..65535)" },
};

static void test_parse_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hl_list l;
		char err[512] = "";
		l.n = 99;
		int rc = hl_parse(bad[i].text, 5672, &l, err, sizeof(err));
		if (rc != GB_ECONFIG)
			fail_msg("%s: rc %d, expected GB_ECONFIG", bad[i].name,
				 rc);
		if (strcmp(err, bad[i].err) != 0)
			fail_msg("%s: error \"%s\", expected \"%s\"",
				 bad[i].name, err, bad[i].err);
		/* A failed parse leaves no half-filled list behind. */
		assert_int_equal(l.n, 0);
	}
}

static void test_parse_arguments(void **state)
{
	(void)state;
	struct hl_list l;
	char err[64];
	assert_int_equal(hl_parse("a", 0, &l, err, sizeof(err)), GB_EINVAL);
	assert_int_equal(hl_parse("a", 65536, &l, err, sizeof(err)), GB_EINVAL);
	assert_int_equal(hl_parse(NULL, 1, &l, err, sizeof(err)), GB_EINVAL);
	assert_int_equal(hl_parse("a", 1, NULL, err, sizeof(err)), GB_EINVAL);
	/* No error buffer: still the right code. */
	assert_int_equal(hl_parse("a,,b", 1, &l, NULL, 0), GB_ECONFIG);
	/* A small buffer is cut, never overrun. */
	char small[8];
	memset(small, 'Z', sizeof(small));
	assert_int_equal(hl_parse("a,,b", 1, &l, small, sizeof(small)),
			 GB_ECONFIG);
	assert_string_equal(small, "entry 2");
}

/* ---- the failover order ------------------------------------------------- */

static void test_try_order(void **state)
{
	(void)state;
	static const struct {
		size_t n, cur;
		size_t want[HL_MAX];
	} rows[] = {
		{ 1, 0, { 0 } },
		{ 3, 0, { 0, 1, 2 } },
		{ 3, 1, { 1, 2, 0 } },
		{ 3, 2, { 2, 0, 1 } },
		{ 8, 5, { 5, 6, 7, 0, 1, 2, 3, 4 } },
		/* A remembered index from a longer list wraps, never
		** indexes past the end. */
		{ 2, 5, { 1, 0 } },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		for (size_t k = 0; k < rows[i].n; k++)
			if (hl_try(rows[i].n, rows[i].cur, k) != rows[i].want[k])
				fail_msg("n=%zu cur=%zu k=%zu: %zu, expected "
					 "%zu",
					 rows[i].n, rows[i].cur, k,
					 hl_try(rows[i].n, rows[i].cur, k),
					 rows[i].want[k]);
}

/*
** A client over several connect attempts, as amq_connect and st_connect
** run it: start from the entry that last worked, try each entry once in
** order, remember the one that answered; when none answers, keep the
** remembered one. `up` gives, per attempt, a string of the entries that
** answer ("01" = entries 0 and 1); `tried` the entries the client tried
** in that attempt, in order; `cur` the entry remembered after it.
*/
struct attempt {
	const char *up;
	const char *tried;
	size_t cur;
};

static const struct {
	const char *name;
	size_t n;
	struct attempt a[6];
	size_t na;
} scripts[] = {
	{ "all up: always the first", 3,
	  { { "012", "0", 0 }, { "012", "0", 0 }, { "012", "0", 0 } }, 3 },
	{ "first down: move to the second and stay there", 3,
	  { { "12", "01", 1 }, { "012", "1", 1 }, { "012", "1", 1 } }, 3 },
	{ "current fails: next in order, wrapping", 3,
	  { { "2", "012", 2 }, { "01", "20", 0 }, { "1", "01", 1 },
	    { "012", "1", 1 } },
	  4 },
	{ "nothing up: every entry once, remember the old one", 3,
	  { { "", "012", 0 }, { "1", "01", 1 }, { "", "120", 1 },
	    { "2", "12", 2 } },
	  4 },
	{ "galera: one writer node until it fails", 3,
	  { { "012", "0", 0 }, { "12", "01", 1 }, { "012", "1", 1 },
	    { "02", "12", 2 }, { "012", "2", 2 } },
	  5 },
	{ "single entry", 1, { { "", "0", 0 }, { "0", "0", 0 } }, 2 },
};

static void test_rotation_sequences(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(scripts) / sizeof(scripts[0]); s++) {
		size_t cur = 0; /* nothing has worked yet: the first entry */
		for (size_t i = 0; i < scripts[s].na; i++) {
			const struct attempt *a = &scripts[s].a[i];
			char tried[HL_MAX + 1] = "";
			size_t nt = 0;
			for (size_t k = 0; k < scripts[s].n; k++) {
				size_t idx = hl_try(scripts[s].n, cur, k);
				tried[nt++] = (char)('0' + idx);
				tried[nt] = '\0';
				if (strchr(a->up, '0' + (int)idx) != NULL) {
					cur = idx;
					break;
				}
			}
			if (strcmp(tried, a->tried) != 0 || cur != a->cur)
				fail_msg("%s, attempt %zu: tried %s, now at "
					 "%zu; expected %s, %zu",
					 scripts[s].name, i + 1, tried, cur,
					 a->tried, a->cur);
		}
	}
}

static void test_format(void **state)
{
	(void)state;
	struct hl_entry e = { "mq1", 5672, 0 };
	char buf[HL_TEXT_MAX];
	assert_string_equal(hl_format(&e, buf, sizeof(buf)), "mq1:5672");
	struct hl_entry v6 = { "2001:db8::7", 1, 1 };
	assert_string_equal(hl_format(&v6, buf, sizeof(buf)),
			    "[2001:db8::7]:1");
	char small[6];
	assert_string_equal(hl_format(&e, small, sizeof(small)), "mq1:5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_arguments),
		cmocka_unit_test(test_try_order),
		cmocka_unit_test(test_rotation_sequences),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
