/*
** itc_store_inputs.c — the stored decision inputs (store_inputs.h) against
** MariaDB: st_in_scan's keyset pages through a window in batches and
** returns every row exactly once, in (decided_at, src, decision_id)
** order, also when thousands of rows share one second (a replay of a busy
** window: the key's later columns then decide where a batch resumes);
** st_in_count counts the same window.
**
** Why this test: the scan once bound the cursor's source column from a
** buffer that was gone by the time the statement ran, so a batch resumed
** at whatever the stack held: the fault suite's replay read 2,139
** decisions of 2,067. Paging is the part of replay that its zero-change
** check cannot see (a row read twice re-decides to the same digest).
**
** The rows are this test's own: decisions with request ids 'itc_in_*' at
** ids after the table's largest (as new decisions would take them) and
** fake times around T0, far before any real decision, so the window sees
** nothing else; deleted before and after.
*/
#include "itc_raw.h"

#include "base/arena.h"
#include "store/store_inputs.h"

#define T0 1000LL    /* fake unix time of the test's rows */
#define NSAME 2500   /* rows at T0: more than two batches in one second */
#define NNEXT 500    /* rows at T0 + 1 */
#define NROWS (NSAME + NNEXT)

static void cleanup(void)
{
	raw_q(NULL, 0,
	      "DELETE i FROM decision_inputs i JOIN decisions d ON "
	      "d.id = i.decision_id AND i.src = 'd' WHERE d.request_id LIKE ?",
	      "s", "itc\\_in\\_%");
	raw_q(NULL, 0, "DELETE FROM decisions WHERE request_id LIKE ?", "s",
	      "itc\\_in\\_%");
}

ITC_GROUP_FIXTURE("itc_store_inputs", cleanup)

static long long g_base; /* the test's decision ids are g_base + 1.. */

/* NROWS decisions with inputs: NSAME at T0, NNEXT at T0 + 1, inserted in
** one statement each (the Sequence engine's seq_1_to_N). */
static void fill(void)
{
	char out[32] = "";
	raw_q(out, sizeof(out), "SELECT COALESCE(MAX(id), 0) FROM decisions",
	      "");
	g_base = atoll(out);
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO decisions (id, kind, subject, request_id, outcome, "
		 "chosen, decided_at, detail) SELECT ? + seq, 'task', "
		 "CONCAT('itc_in_', seq), CONCAT('itc_in_', seq), 'pending', "
		 "NULL, IF(seq <= %d, ?, ? + 1), '{}' FROM seq_1_to_%d",
		 NSAME, NROWS);
	raw_q(NULL, 0, sql, "lll", g_base, T0, T0);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO decision_inputs (src, decision_id, kind, "
		 "decided_at, raw_bytes, body) SELECT 'd', ? + seq, 'task', "
		 "IF(seq <= %d, ?, ? + 1), 2, 'x' FROM seq_1_to_%d",
		 NSAME, NROWS);
	raw_q(NULL, 0, sql, "lll", g_base, T0, T0);
	raw_q(out, sizeof(out),
	      "SELECT COUNT(*) FROM decision_inputs WHERE src = 'd' AND "
	      "decision_id > ? AND decided_at BETWEEN ? AND ?",
	      "lll", g_base, T0, T0 + 1);
	assert_int_equal(atoll(out), NROWS);
}

/* Table: batch sizes, each over the whole window. */
static const size_t batch_sizes[] = {ST_IN_SCAN_MAX, 999, 7, 1};

static void test_scan_pages_every_row_once(void **state)
{
	(void)state;
	fill();
	long long n = -1;
	assert_int_equal(st_in_count(db, T0, T0 + 2, NULL, &n), GB_OK);
	assert_int_equal(n, NROWS);
	assert_int_equal(st_in_count(db, T0, T0 + 2, "jobs", &n), GB_OK);
	assert_int_equal(n, 0);
	unsigned char *seen = calloc(NROWS + 1, 1);
	assert_non_null(seen);
	static struct st_in_row rows[ST_IN_SCAN_MAX];
	for (size_t b = 0; b < sizeof(batch_sizes) / sizeof(batch_sizes[0]);
	     b++) {
		size_t max = batch_sizes[b];
		memset(seen, 0, NROWS + 1);
		struct st_in_cursor cur = {T0, 0, 0};
		long long total = 0, last_t = 0, last_id = 0, calls = 0;
		for (;;) {
			struct arena a;
			arena_init(&a, 64u << 20);
			size_t got = 0;
			assert_int_equal(st_in_scan(db, &cur, T0 + 2, "task",
						    max, 1, &a, rows, &got),
					 GB_OK);
			calls++;
			for (size_t i = 0; i < got; i++) {
				const struct st_in_row *r = &rows[i];
				long long k = r->decision_id - g_base;
				if (k < 1 || k > NROWS)
					fail_msg("batch size %zu: a row not "
						 "of this test: decision %lld",
						 max, r->decision_id);
				if (seen[k])
					fail_msg("batch size %zu: decision "
						 "%lld read twice",
						 max, r->decision_id);
				seen[k] = 1;
				/* (decided_at, id) ascending, all 'd' */
				assert_int_equal(r->src, ST_IN_DECISIONS);
				assert_true(r->decided_at > last_t ||
					    (r->decided_at == last_t &&
					     r->decision_id > last_id));
				assert_int_equal(r->decided_at,
						 k <= NSAME ? T0 : T0 + 1);
				assert_string_equal(r->kind, "task");
				last_t = r->decided_at;
				last_id = r->decision_id;
			}
			total += (long long)got;
			arena_free(&a);
			if (got < max)
				break;
			assert_true(calls <= NROWS + 1);
		}
		if (total != NROWS)
			fail_msg("batch size %zu: %lld rows of %d", max, total,
				 NROWS);
		for (long long k = 1; k <= NROWS; k++)
			if (!seen[k])
				fail_msg("batch size %zu: decision %lld never "
					 "read",
					 max, g_base + k);
	}
	free(seen);
}

/* A window that starts at T0 + 1 and one that ends before it. */
static void test_scan_window_bounds(void **state)
{
	(void)state;
	static struct st_in_row rows[ST_IN_SCAN_MAX];
	struct arena a;
	arena_init(&a, 64u << 20);
	struct st_in_cursor cur = {T0 + 1, 0, 0};
	size_t got = 0;
	assert_int_equal(st_in_scan(db, &cur, T0 + 2, NULL, ST_IN_SCAN_MAX,
				    1, &a, rows, &got),
			 GB_OK);
	assert_int_equal(got, NNEXT);
	assert_int_equal(rows[0].decision_id, g_base + NSAME + 1);
	struct st_in_cursor c2 = {T0, 0, 0};
	assert_int_equal(st_in_scan(db, &c2, T0 + 1, NULL, ST_IN_SCAN_MAX,
				    1, &a, rows, &got),
			 GB_OK);
	assert_int_equal(got, ST_IN_SCAN_MAX);
	assert_int_equal(rows[got - 1].decided_at, T0);
	arena_free(&a);
}

/* A scan without records: the same rows, each with its stored digest
** (NULL when none was stored) and no record; st_in_get reads the record
** of one. */
static void test_scan_digests(void **state)
{
	(void)state;
	static struct st_in_row rows[ST_IN_SCAN_MAX];
	static const char dg[] = "0123456789abcdef0123456789abcdef"
				 "0123456789abcdef0123456789abcdef";
	raw_q(NULL, 0,
	      "UPDATE decision_inputs SET digest = ? WHERE src = 'd' AND "
	      "decision_id = ?",
	      "sl", dg, g_base + NSAME + 2);
	struct arena a;
	arena_init(&a, 64u << 20);
	for (int with = 0; with < 2; with++) {
		struct st_in_cursor cur = {T0 + 1, 0, 0};
		size_t got = 0;
		assert_int_equal(st_in_scan(db, &cur, T0 + 2, "task", 10, with,
					    &a, rows, &got),
				 GB_OK);
		assert_int_equal(got, 10);
		for (size_t i = 0; i < got; i++) {
			assert_int_equal(rows[i].decision_id,
					 g_base + NSAME + 1 + (long long)i);
			if (with)
				assert_string_equal(rows[i].detail, "{}");
			else
				assert_null(rows[i].detail);
			if (i == 1)
				assert_string_equal(rows[i].digest, dg);
			else
				assert_null(rows[i].digest);
			assert_int_equal(rows[i].len, 1);
		}
	}
	struct st_in_row one;
	int found = 0;
	assert_int_equal(st_in_get(db, ST_IN_DECISIONS, g_base + NSAME + 2, &a,
				   &one, &found),
			 GB_OK);
	assert_int_equal(found, 1);
	assert_string_equal(one.detail, "{}");
	assert_string_equal(one.digest, dg);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scan_pages_every_row_once,
					  test_teardown),
		cmocka_unit_test_teardown(test_scan_window_bounds,
					  test_teardown),
		cmocka_unit_test_teardown(test_scan_digests, test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
