/*
** itc_store_backlog.c — st_backlog (store_summary.h), the count behind the
** gridbroker_backlog gauges of /metrics, against a real server.
**
** The count is global (every row of tasks, job_requests and jobs), and
** other tests leave rows behind, so each case counts before and after
** writing a hand-made set and asserts the difference exactly: 2 pending
** tasks beside an assigned one, 1 pending job request beside a done one,
** 3 pending jobs, 4 throttled jobs of 2 tasks (one of them already holding
** a throttled job before the case: it adds no throttled task), and jobs of
** other statuses that count nowhere; the oldest unsent outbox event (an
** unsent row older than any other, a sent one older still). Then EXPLAIN
** of the statement: no
** part of it may read a whole table (the gauges are counted by every
** worker every backlog_interval seconds, so the cost must follow the
** backlog, not the table sizes; migration 0007 adds the jobs index).
**
** Rows of this test have ids from ITC_BASE (tasks, jobs) or request ids
** starting with "itcb-" (outbox rows: message ids); they are deleted
** before and after the run.
*/
#include "../unit/gbtest.h"

#include <stdlib.h>

#include <mysql.h>

#include "gb_error.h"
#include "store/store.h"
#include "store/store_summary.h"

#include "itc_raw.h"

#define ITC_BASE 9300000000000LL /* task and job ids of this test */
#define NOW 6000000LL            /* fake unix time */

static void cleanup(void)
{
	raw_q(NULL, 0, "DELETE FROM jobs WHERE job_id BETWEEN ? AND ?", "ll",
	      ITC_BASE, ITC_BASE + 99999);
	raw_q(NULL, 0, "DELETE FROM job_requests WHERE LEFT(request_id, 5) = ?",
	      "s", "itcb-");
	raw_q(NULL, 0, "DELETE FROM tasks WHERE task_id BETWEEN ? AND ?", "ll",
	      ITC_BASE, ITC_BASE + 99999);
	raw_q(NULL, 0, "DELETE FROM outbox WHERE LEFT(message_id, 5) = ?", "s",
	      "itcb-");
}

ITC_GROUP_FIXTURE("itc_store_backlog", cleanup)

static void task(long long id, const char *status)
{
	int pending = strcmp(status, "pending") == 0;
	raw_q(NULL, 0,
	      "INSERT INTO tasks (task_id, gshare, task_priority, "
	      "io_intensity, t1_weight, input_prestaging, broker_on_master, "
	      "norm_exp_out_size, status, nucleus, pending_until, request_id, "
	      "created_at, updated_at) VALUES (?, 'MC Simul', 500, 0, 0, 0, "
	      "0, 0, ?, IF(? = 1, NULL, 'CERN-PROD'), IF(? = 1, ?, NULL), "
	      "'itcb-task', ?, ?)",
	      "lslllll", id, status, (long long)pending, (long long)pending,
	      NOW + 3600, NOW, NOW);
}

static void request(const char *rid, const char *status)
{
	int pending = strcmp(status, "pending") == 0;
	raw_q(NULL, 0,
	      "INSERT INTO job_requests (request_id, task_id, body, status, "
	      "pending_until, created_at, updated_at) VALUES (?, ?, 'x', ?, "
	      "IF(? = 1, ?, NULL), ?, ?)",
	      "slsllll", rid, ITC_BASE + 1, status, (long long)pending,
	      NOW + 3600, NOW, NOW);
}

static void job(long long id, long long task_id, const char *status)
{
	int queued = strcmp(status, "pending") != 0 &&
		     strcmp(status, "throttled") != 0;
	raw_q(NULL, 0,
	      "INSERT INTO jobs (job_id, task_id, request_id, queue, status, "
	      "nevents, input_mb, decision_id, updated_at) VALUES (?, ?, "
	      "'itcb-jobs', IF(? = 1, 'ITCB_QUEUE', NULL), ?, 1, 1, 0, ?)",
	      "lllsl", id, task_id, (long long)queued, status, NOW);
}

static struct st_backlog count(void)
{
	struct st_backlog b;
	memset(&b, 0xff, sizeof(b));
	int rc = st_backlog(db, &b);
	if (rc != GB_OK)
		fail_msg("st_backlog: %s (%s)", gb_strerror(rc), st_error(db));
	return b;
}

/* The exact differences a known set of rows makes. */
static void test_counts(void **state)
{
	(void)state;
	/* a task that already holds a throttled job before the case */
	job(ITC_BASE + 100, ITC_BASE + 10, "throttled");
	struct st_backlog before = count();

	task(ITC_BASE + 1, "pending");
	task(ITC_BASE + 2, "pending");
	task(ITC_BASE + 3, "assigned");
	request("itcb-req-1", "pending");
	request("itcb-req-2", "done");
	job(ITC_BASE + 201, ITC_BASE + 1, "pending");
	job(ITC_BASE + 202, ITC_BASE + 1, "pending");
	job(ITC_BASE + 203, ITC_BASE + 2, "pending");
	/* throttled: two more of task 10 (counted already), two of task 11 */
	job(ITC_BASE + 301, ITC_BASE + 10, "throttled");
	job(ITC_BASE + 302, ITC_BASE + 10, "throttled");
	job(ITC_BASE + 303, ITC_BASE + 11, "throttled");
	job(ITC_BASE + 304, ITC_BASE + 11, "throttled");
	/* placed or done: in no backlog */
	job(ITC_BASE + 401, ITC_BASE + 3, "activated");
	job(ITC_BASE + 402, ITC_BASE + 3, "running");
	job(ITC_BASE + 403, ITC_BASE + 3, "finished");

	struct st_backlog after = count();
	const struct {
		const char *what;
		long long got, want;
	} rows[] = {
		{"tasks_pending", after.tasks_pending - before.tasks_pending, 2},
		{"job_requests_pending",
		 after.job_requests_pending - before.job_requests_pending, 1},
		{"jobs_pending", after.jobs_pending - before.jobs_pending, 3},
		{"tasks_throttled",
		 after.tasks_throttled - before.tasks_throttled, 1},
		{"jobs_throttled", after.jobs_throttled - before.jobs_throttled,
		 4},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].got != rows[i].want)
			fail_msg("%s moved by %lld, want %lld", rows[i].what,
				 rows[i].got, rows[i].want);

	/* a pending job placed, a throttled task released: both go down */
	raw_q(NULL, 0,
	      "UPDATE jobs SET status = 'activated', queue = 'ITCB_QUEUE' "
	      "WHERE job_id = ? OR task_id = ?",
	      "ll", ITC_BASE + 201, ITC_BASE + 11);
	struct st_backlog later = count();
	assert_int_equal(later.jobs_pending, after.jobs_pending - 1);
	assert_int_equal(later.jobs_throttled, after.jobs_throttled - 2);
	assert_int_equal(later.tasks_throttled, after.tasks_throttled - 1);
	assert_int_equal(later.tasks_pending, after.tasks_pending);
}

static void outbox_row(const char *msgid, long long created, int sent)
{
	raw_q(NULL, 0,
	      "INSERT INTO outbox (message_id, request_id, exchange, "
	      "routing_key, type, body, created_at, sent_at) VALUES (?, "
	      "'itcb-req', 'gridbroker.events', 'task.assigned', "
	      "'task.assigned', 'x', ?, IF(? = 1, ?, NULL))",
	      "slll", msgid, created, (long long)sent, created + 1);
}

/* The oldest unsent outbox event: a sent row older still does not count,
** and once the oldest is sent the next one is the oldest. */
static void test_outbox_oldest(void **state)
{
	(void)state;
	/* other tests' leftovers are all newer than these (real or test
	** clocks far above 10) */
	outbox_row("itcb-sent", 3, 1);
	outbox_row("itcb-old", 5, 0);
	outbox_row("itcb-new", 9, 0);
	assert_int_equal(count().outbox_oldest, 5);
	raw_q(NULL, 0, "UPDATE outbox SET sent_at = 6 WHERE message_id = ?",
	      "s", "itcb-old");
	assert_int_equal(count().outbox_oldest, 9);
}

/* No part of the count reads a whole table: every table access of the
** plan uses an index ("type" is never ALL). */
static void test_plan_uses_indexes(void **state)
{
	(void)state;
	char explain[1024];
	int len = snprintf(explain, sizeof(explain), "EXPLAIN %s",
			   st_backlog_sql());
	assert_true(len > 0 && (size_t)len < sizeof(explain));
	if (mysql_query(raw, explain) != 0)
		fail_msg("EXPLAIN: %s", mysql_error(raw));
	MYSQL_RES *res = mysql_store_result(raw);
	assert_non_null(res);
	unsigned nf = mysql_num_fields(res), ti = nf, ki = nf, tb = nf;
	MYSQL_FIELD *f = mysql_fetch_fields(res);
	for (unsigned i = 0; i < nf; i++) {
		if (strcmp(f[i].name, "type") == 0)
			ti = i;
		else if (strcmp(f[i].name, "key") == 0)
			ki = i;
		else if (strcmp(f[i].name, "table") == 0)
			tb = i;
	}
	assert_true(ti < nf && ki < nf && tb < nf);
	int tables = 0, jobs_status = 0;
	MYSQL_ROW row;
	while ((row = mysql_fetch_row(res)) != NULL) {
		if (row[tb] == NULL)
			continue; /* the outer SELECT reads no table */
		tables++;
		if (row[ti] && strcmp(row[ti], "ALL") == 0)
			fail_msg("the backlog count scans table %s", row[tb]);
		if (strcmp(row[tb], "jobs") == 0 && row[ki] &&
		    strcmp(row[ki], "idx_jobs_status") == 0)
			jobs_status++;
	}
	mysql_free_result(res);
	assert_int_equal(tables, 6);
	assert_int_equal(jobs_status, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_counts, test_teardown),
		cmocka_unit_test_teardown(test_outbox_oldest, test_teardown),
		cmocka_unit_test_teardown(test_plan_uses_indexes,
					  test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
