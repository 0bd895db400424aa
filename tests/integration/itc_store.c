/*
** itc_store.c — the MariaDB store against a real server: migrations,
** parameters, grid state, tasks and decisions, the pending scan with two
** connections (SKIP LOCKED), request dedup, the outbox leases (and which
** rows a request that came again claims), and recovery from a killed
** connection.
**
** Reads the configuration named by $GB_CONFIG (run-itc.sh points it at the
** servers of scripts/services). The database is shared with the other
** integration tests and with developers, so every row this test writes has
** a name starting with "itc_" or a task id in ITC_TASK_BASE.., and is
** deleted before and after the run. Times are small fake values (around
** T0) rather than the clock: rows written by other tests carry real times,
** so a scan at a fake "now" can only ever see this test's rows. (The
** reverse does not hold: a worker running at the same time would relay
** the test's outbox rows, whose leases lie in the past. ctest runs the
** integration tests one at a time, and the rows use a routing key no
** subscriber binds.)
**
** Inspection and cleanup go through a second, raw Connector/C connection
** with prepared statements, so the assertions do not depend on the code
** under test.
*/
#include "../unit/gbtest.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>

#include <mysql.h>

#include "base/arena.h"
#include "base/config.h"
#include "gb_error.h"
#include "store/store.h"
#include "store/store_internal.h"

#include "itc_raw.h"

#define ITC_TASK_BASE 9000000000000LL
#define T0 1000LL /* fake unix time of the test's rows */
#define ARENA_CAP (64u << 20)



static void cleanup(void)
{
	/* Not `name LIKE 'itc\_%'`: MariaDB 10.11 reads that as a range of
	** the primary key and misses the 324-byte wide name (NUC_WIDE),
	** which then stayed behind and broke every later test whose task
	** decisions `explain` re-decides (a nucleus name over its 255
	** bytes). LEFT() keeps the index out; storages and replicas go
	** with their nucleus (ON DELETE CASCADE), the others below. */
	raw_q(NULL, 0, "DELETE FROM nuclei WHERE LEFT(name, 4) = ?", "s",
	      "itc_");
	static const char *by_name[] = {
		"DELETE FROM storages WHERE name LIKE ?",
		"DELETE FROM replicas WHERE nucleus LIKE ?",
		"DELETE FROM decisions WHERE request_id LIKE ?",
		"DELETE FROM processed_messages WHERE message_id LIKE ?",
		"DELETE FROM outbox WHERE message_id LIKE ?",
	};
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++)
		raw_q(NULL, 0, by_name[i], "s", "itc\\_%");
	/* Parameter overrides carry the marker as a suffix. */
	raw_q(NULL, 0, "DELETE FROM params WHERE name LIKE ?", "s", "%itc\\_%");
	raw_q(NULL, 0, "DELETE FROM tasks WHERE task_id BETWEEN ? AND ?", "ll",
	      ITC_TASK_BASE, ITC_TASK_BASE + 999);
}

/* ---- fixtures ------------------------------------------------------------ */

ITC_GROUP_FIXTURE("itc_store", cleanup)

/* ---- migrations and parameters ------------------------------------------- */

static void test_migrate_twice_is_noop(void **state)
{
	(void)state;
	/* The group setup migrated already; running again applies nothing. */
	FILE *out = tmpfile();
	assert_non_null(out);
	assert_int_equal(st_migrate(db, GB_SCHEMA_DIR, out), GB_OK);
	assert_int_equal(st_migrate(db, GB_SCHEMA_DIR, out), GB_OK);
	assert_int_equal(ftell(out), 0);
	fclose(out);
	int v = 0;
	assert_int_equal(st_schema_version(db, &v), GB_OK);
	assert_true(v >= 2);
	char buf[64];
	raw_q(buf, sizeof(buf),
	      "SELECT COUNT(*) FROM schema_migrations WHERE version IN (1, 2)",
	      "");
	assert_string_equal(buf, "2");
	raw_q(buf, sizeof(buf),
	      "SELECT name FROM schema_migrations WHERE version = 1", "");
	assert_string_equal(buf, "0001_core.sql");
	/* A missing schema directory is an error, not an empty success. */
	assert_int_equal(st_migrate(db, "itc_no_such_dir", NULL), GB_EIO);
}

static const struct prm_kv *kv_find(const struct prm_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->kv[i].name, name) == 0)
			return &set->kv[i];
	return NULL;
}

static void test_params_seeded_and_loaded(void **state)
{
	(void)state;
	char buf[64];
	size_t set_rows = 0; /* catalogue rows with a default */
	for (const struct prm_def *d = prm_table; d->name; d++)
		set_rows += !isnan(d->def);
	/* Every catalogue row was seeded. */
	for (const struct prm_def *d = prm_table; d->name; d++)
		assert_int_equal(raw_q(buf, sizeof(buf),
				       "SELECT value FROM params WHERE "
				       "component = ? AND name = ?",
				       "ss", d->component, d->name),
				 1);
	raw_q(buf, sizeof(buf),
	      "SELECT value FROM params WHERE name = 'DISK_THRESHOLD'", "");
	assert_string_equal(buf, "102400");
	raw_q(buf, sizeof(buf),
	      "SELECT value FROM params WHERE name = 'CAP_RUNNING_USER_JOBS'",
	      "");
	assert_string_equal(buf, "NULL");

	/* An operator's gshare override is returned; a row the catalogue
	** does not know, or one out of range, is left out. */
	raw_q(NULL, 0,
	      "INSERT INTO params (component, name, value) VALUES "
	      "('taskbrokerage', 'DISK_THRESHOLD_itc_share', 5), "
	      "('taskbrokerage', 'itc_UNKNOWN', 1), "
	      "('taskbrokerage', 'INPUT_SIZE_FRACTION_itc_bad', 5)",
	      "");

	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct prm_set set;
	assert_int_equal(st_params_load(db, &a, &set), GB_OK);
	assert_true(set.n >= set_rows); /* unset (NaN) defaults are absent */
	const struct prm_kv *kv = kv_find(&set, "DISK_THRESHOLD");
	assert_non_null(kv);
	assert_near(kv->value, 102400, 1e-12);
	assert_null(kv_find(&set, "CAP_RUNNING_USER_JOBS"));
	kv = kv_find(&set, "DISK_THRESHOLD_itc_share");
	assert_non_null(kv);
	assert_near(kv->value, 5, 1e-12);
	assert_near(prm_get_sfx(&set, "DISK_THRESHOLD", "itc_share"), 5, 1e-12);
	assert_null(kv_find(&set, "itc_UNKNOWN"));
	/* INPUT_SIZE_FRACTION takes no suffix: an unknown name. */
	assert_null(kv_find(&set, "INPUT_SIZE_FRACTION_itc_bad"));
	arena_free(&a);
	raw_q(NULL, 0, "DELETE FROM params WHERE name LIKE ?", "s", "%itc\\_%");
}

/* ---- grid ---------------------------------------------------------------- */

#define MANY 70 /* more than two IN chunks of replicas */
/* 80 four-byte characters: longer in bytes than the fixed result buffer. */
#define WIDE_CHAR "\xF0\x9F\x98\x80"
#define WIDE8                                                                  \
	WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR  \
		WIDE_CHAR
#define WIDE80 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8
#define NUC_WIDE "itc_" WIDE80

static char many_names[MANY][32];

static const struct tb_nucleus *nuc_by_name(const struct tb_nucleus *n,
					    size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(n[i].name, name) == 0)
			return &n[i];
	return NULL;
}

static const struct tb_replica *rep_by_name(const struct tb_nucleus *n,
					    const char *ds)
{
	const struct tb_replica *hit = NULL;
	for (size_t i = 0; i < n->nlocal; i++)
		if (strcmp(n->local[i].dataset, ds) == 0) {
			assert_null(hit); /* listed once */
			hit = &n->local[i];
		}
	return hit;
}

static void load_grid(int second)
{
	static const struct tb_storage st_a[] = {
		{"itc_A_disk", 1000, 200, 5000, 0, 0},
		{"itc_A_tape", 0, 0, 90000, 1, 0},
	};
	static const struct tb_storage st_b[] = {
		{"itc_B_disk", 10.5, 0.25, 100, 0, 1},
	};
	static const struct tb_storage st_w[] = {
		{"itc_W_" WIDE80, 1, 2, 3, 0, 0},
	};
	static struct tb_replica rep_a[MANY + 2];
	static const struct tb_replica rep_b[] = {{"itc_ds_2", 3.5, 7}};
	rep_a[0] = (struct tb_replica){"itc_ds_1", 10, 5};
	rep_a[1] = (struct tb_replica){"itc_ds_3", 99, 99}; /* not the task's */
	for (int i = 0; i < MANY; i++) {
		snprintf(many_names[i], sizeof(many_names[i]), "itc_many_%03d",
			 i);
		rep_a[2 + i] = (struct tb_replica){many_names[i], i + 0.5, i};
	}
	struct tb_nucleus nuc[] = {
		{"itc_NUC_A", "ACTIVE", TB_BARE_NO, 10, 100, st_a, 2, rep_a,
		 MANY + 2},
		{"itc_NUC_B", "OFFLINE", TB_BARE_ONLY, 0, 0, st_b, 1, rep_b, 1},
		{"itc_NUC_C", "ACTIVE", TB_BARE_ALLOW, 3, 7.5, NULL, 0, NULL,
		 0},
		{NUC_WIDE, "ACTIVE", TB_BARE_NO, 0, 0, st_w, 1, NULL, 0},
	};
	if (second) {
		/* Reload A alone: one storage and one replica left. */
		nuc[0].nstorages = 1;
		nuc[0].nlocal = 1;
		assert_int_equal(st_grid_load_nuclei(db, nuc, 1), GB_OK);
	} else {
		assert_int_equal(st_grid_load_nuclei(db, nuc, 4), GB_OK);
	}
}

static void grid_task(struct tb_task *t, struct tb_dataset *ds, size_t *n)
{
	size_t k = 0;
	ds[k++] = (struct tb_dataset){"itc_ds_1", 1, 10, 5, 0};
	ds[k++] = (struct tb_dataset){"itc_ds_2", 0, 4, 8, 1};
	ds[k++] = (struct tb_dataset){"itc_ds_1", 0, 10, 5, 0}; /* again */
	ds[k++] = (struct tb_dataset){"itc_ds_missing", 0, 1, 1, 0};
	for (int i = 0; i < MANY; i++)
		ds[k++] = (struct tb_dataset){many_names[i], 0, 1, 1, 0};
	memset(t, 0, sizeof(*t));
	t->task_id = ITC_TASK_BASE + 100;
	t->gshare = "itc_share";
	t->datasets = ds;
	t->ndatasets = k;
	*n = k;
}

static void test_grid_load_and_state(void **state)
{
	(void)state;
	load_grid(0);
	struct tb_dataset ds[MANY + 4];
	struct tb_task t;
	size_t nds;
	grid_task(&t, ds, &nds);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct tb_nucleus *nuc = NULL;
	size_t n = 0;
	assert_int_equal(st_tb_state(db, &t, &a, &nuc, &n), GB_OK);
	assert_true(n >= 4);
	for (size_t i = 1; i < n; i++) /* ORDER BY name, exactly as strcmp */
		assert_true(strcmp(nuc[i - 1].name, nuc[i].name) < 0);

	const struct tb_nucleus *x = nuc_by_name(nuc, n, "itc_NUC_A");
	assert_non_null(x);
	assert_string_equal(x->status, "ACTIVE");
	assert_int_equal(x->bare, TB_BARE_NO);
	assert_int_equal(x->transfer_backlog, 10);
	assert_near(x->rw, 100, 1e-12);
	assert_int_equal(x->nstorages, 2);
	assert_string_equal(x->storages[0].name, "itc_A_disk");
	assert_near(x->storages[0].space_free, 1000, 1e-12);
	assert_near(x->storages[0].space_expired, 200, 1e-12);
	assert_near(x->storages[0].space_total, 5000, 1e-12);
	assert_int_equal(x->storages[0].tape, 0);
	assert_string_equal(x->storages[1].name, "itc_A_tape");
	assert_int_equal(x->storages[1].tape, 1);
	/* Only the task's datasets, each once: ds_1 and the 70 others. */
	assert_int_equal(x->nlocal, 1 + MANY);
	const struct tb_replica *r = rep_by_name(x, "itc_ds_1");
	assert_non_null(r);
	assert_near(r->size, 10, 1e-12);
	assert_int_equal(r->files, 5);
	assert_null(rep_by_name(x, "itc_ds_3"));
	r = rep_by_name(x, "itc_many_069");
	assert_non_null(r);
	assert_near(r->size, 69.5, 1e-12);
	assert_int_equal(r->files, 69);

	x = nuc_by_name(nuc, n, "itc_NUC_B");
	assert_non_null(x);
	assert_string_equal(x->status, "OFFLINE");
	assert_int_equal(x->bare, TB_BARE_ONLY);
	assert_int_equal(x->nstorages, 1);
	assert_int_equal(x->storages[0].blacklisted, 1);
	assert_near(x->storages[0].space_free, 10.5, 1e-12);
	assert_near(x->storages[0].space_expired, 0.25, 1e-12);
	assert_int_equal(x->nlocal, 1);
	assert_string_equal(x->local[0].dataset, "itc_ds_2");
	assert_near(x->local[0].size, 3.5, 1e-12);
	assert_int_equal(x->local[0].files, 7);

	x = nuc_by_name(nuc, n, "itc_NUC_C");
	assert_non_null(x);
	assert_int_equal(x->bare, TB_BARE_ALLOW);
	assert_int_equal(x->nstorages, 0);
	assert_int_equal(x->nlocal, 0);
	assert_near(x->rw, 7.5, 1e-12);

	/* 324-byte names take the long-column path and come back whole. */
	x = nuc_by_name(nuc, n, NUC_WIDE);
	assert_non_null(x);
	assert_int_equal(x->nstorages, 1);
	assert_string_equal(x->storages[0].name, "itc_W_" WIDE80);

	/* A task without datasets sees no replicas at all. */
	t.ndatasets = 0;
	assert_int_equal(st_tb_state(db, &t, &a, &nuc, &n), GB_OK);
	x = nuc_by_name(nuc, n, "itc_NUC_A");
	assert_non_null(x);
	assert_int_equal(x->nlocal, 0);
	assert_int_equal(x->nstorages, 2);
	arena_free(&a);
}

static void test_grid_reload_replaces(void **state)
{
	(void)state;
	load_grid(0);
	load_grid(1);
	struct tb_dataset ds[MANY + 4];
	struct tb_task t;
	size_t nds;
	grid_task(&t, ds, &nds);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct tb_nucleus *nuc = NULL;
	size_t n = 0;
	assert_int_equal(st_tb_state(db, &t, &a, &nuc, &n), GB_OK);
	const struct tb_nucleus *x = nuc_by_name(nuc, n, "itc_NUC_A");
	assert_non_null(x);
	assert_int_equal(x->nstorages, 1);
	assert_int_equal(x->nlocal, 1);
	/* B was not in the second file and keeps what it had. */
	x = nuc_by_name(nuc, n, "itc_NUC_B");
	assert_non_null(x);
	assert_int_equal(x->nlocal, 1);
	arena_free(&a);

	/* Duplicates inside one file are refused before anything changes. */
	static const struct tb_storage dup_st[] = {
		{"itc_dup", 1, 1, 1, 0, 0},
		{"itc_dup", 1, 1, 1, 0, 0},
	};
	struct tb_nucleus bad[] = {
		{"itc_NUC_D", "ACTIVE", TB_BARE_NO, 0, 0, dup_st, 2, NULL, 0},
	};
	assert_int_equal(st_grid_load_nuclei(db, bad, 1), GB_EINVAL);
	struct tb_nucleus twice[] = {
		{"itc_NUC_D", "ACTIVE", TB_BARE_NO, 0, 0, NULL, 0, NULL, 0},
		{"itc_NUC_D", "ACTIVE", TB_BARE_NO, 0, 0, NULL, 0, NULL, 0},
	};
	assert_int_equal(st_grid_load_nuclei(db, twice, 2), GB_EINVAL);
	struct tb_nucleus neg[] = {
		{"itc_NUC_D", "ACTIVE", TB_BARE_NO, -1, 0, NULL, 0, NULL, 0},
	};
	assert_int_equal(st_grid_load_nuclei(db, neg, 1), GB_EINVAL);
	assert_int_equal(raw_q(NULL, 0, "SELECT 1 FROM nuclei WHERE name = ?",
			       "s", "itc_NUC_D"),
			 0);
}

/* ---- tasks and decisions ------------------------------------------------- */

static void assert_task_equal(const struct tb_task *a, const struct tb_task *b)
{
	assert_int_equal(a->task_id, b->task_id);
	assert_string_equal(a->gshare, b->gshare);
	assert_int_equal(a->priority, b->priority);
	assert_near(a->io_intensity, b->io_intensity, 1e-12);
	assert_near(a->t1_weight, b->t1_weight, 1e-12);
	assert_int_equal(a->input_prestaging, b->input_prestaging);
	assert_int_equal(a->broker_on_master, b->broker_on_master);
	assert_int_equal(a->full_chain, b->full_chain);
	if (b->parent_nucleus && b->parent_nucleus[0])
		assert_string_equal(a->parent_nucleus, b->parent_nucleus);
	else
		assert_null(a->parent_nucleus);
	assert_near(a->norm_exp_out_size, b->norm_exp_out_size, 1e-12);
	assert_int_equal(a->ndatasets, b->ndatasets);
	for (size_t i = 0; i < b->ndatasets; i++) {
		assert_string_equal(a->datasets[i].name, b->datasets[i].name);
		assert_int_equal(a->datasets[i].primary,
				 b->datasets[i].primary);
		assert_near(a->datasets[i].size, b->datasets[i].size, 1e-12);
		assert_int_equal(a->datasets[i].files, b->datasets[i].files);
		assert_int_equal(a->datasets[i].on_tape,
				 b->datasets[i].on_tape);
	}
}

static void test_task_save_load_round_trip(void **state)
{
	(void)state;
	static const struct tb_dataset ds[] = {
		{"itc_in_primary", 1, 1234.5, 300, 0},
		{"itc_in_tape", 0, 0.125, 1, 1},
		{"itc_in_third", 0, 0, 0, 0},
	};
	struct tb_task t = {
		.task_id = ITC_TASK_BASE + 1,
		.gshare = "itc share with spaces",
		.priority = 900,
		.io_intensity = 250.5,
		.t1_weight = -1,
		.input_prestaging = 1,
		.broker_on_master = 0,
		.full_chain = TB_FC_CAPABLE,
		.parent_nucleus = "itc_NUC_A",
		.norm_exp_out_size = 0.25,
		.datasets = ds,
		.ndatasets = 3,
	};
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct tb_task back;
	assert_int_equal(st_task_save(db, &t, "itc_req_save1", T0), GB_OK);
	assert_int_equal(st_task_load(db, t.task_id, &a, &back), GB_OK);
	assert_task_equal(&back, &t);
	char buf[256];
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT(status, ' ', request_id, ' ', created_at) FROM "
	      "tasks WHERE task_id = ?",
	      "l", t.task_id);
	assert_string_equal(buf, "brokering itc_req_save1 1000");

	/* Saved again (a new request for the same task): inputs replaced,
	** fewer datasets, no parent, a normal task. */
	t.gshare = "itc_other";
	t.full_chain = TB_FC_NONE;
	t.parent_nucleus = "";
	t.broker_on_master = 1;
	t.ndatasets = 1;
	assert_int_equal(st_task_save(db, &t, "itc_req_save2", T0 + 5), GB_OK);
	assert_int_equal(st_task_load(db, t.task_id, &a, &back), GB_OK);
	assert_task_equal(&back, &t);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT(request_id, ' ', created_at, ' ', updated_at, "
	      "' ', full_chain, '|', parent_nucleus IS NULL) FROM tasks "
	      "WHERE task_id = ?",
	      "l", t.task_id);
	assert_string_equal(buf, "itc_req_save2 1000 1005 |1");

	/* Many inputs, more than one multi-row INSERT takes (ST_ROWS_MAX):
	** order and values kept across the statements, which were of 1000,
	** 1000 and 500 rows (a fresh connection's cache holds no other). */
	enum { NBIG = 2 * ST_ROWS_MAX + ST_ROWS_MAX / 2 };
	static struct tb_dataset many[NBIG];
	static char names[NBIG][32];
	for (int i = 0; i < NBIG; i++) {
		snprintf(names[i], sizeof(names[i]), "itc_in_%04d", NBIG - i);
		many[i] = (struct tb_dataset){names[i], i == 7, i * 0.5, i,
					      i % 3 == 0};
	}
	t.datasets = many;
	t.ndatasets = NBIG;
	assert_int_equal(st_reconnect(db), GB_OK);
	assert_int_equal(st_task_save(db, &t, "itc_req_save3", T0 + 6), GB_OK);
	assert_true(itc_sized(ST_SID_TASK_DS_INSERT, ST_ROWS_MAX));
	assert_true(itc_sized(ST_SID_TASK_DS_INSERT, ST_ROWS_MAX / 2));
	assert_false(itc_sized(ST_SID_TASK_DS_INSERT, NBIG));
	assert_int_equal(st_task_load(db, t.task_id, &a, &back), GB_OK);
	assert_task_equal(&back, &t);

	assert_int_equal(st_task_load(db, ITC_TASK_BASE + 999, &a, &back),
			 GB_ENOTFOUND);
	arena_free(&a);
}

static void test_task_decide_assigned_then_pending(void **state)
{
	(void)state;
	struct tb_task t = {
		.task_id = ITC_TASK_BASE + 2,
		.gshare = "itc_share",
		.priority = 500,
	};
	assert_int_equal(st_task_save(db, &t, "itc_req_dec0", T0), GB_OK);
	struct dec_decision d;
	dec_init(&d, NULL, 0);
	d.outcome = DEC_ASSIGNED;
	d.chosen = 0;
	long long id1 = 0, id2 = 0;
	assert_int_equal(st_task_decide(db, &t, &d, "itc_NUC_A", T0 + 1, 0,
					"itc_req_dec1", "{\"k\":1}", &id1),
			 GB_OK);
	assert_true(id1 > 0);
	char buf[512];
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS(' ', status, nucleus, "
	      "COALESCE(pending_until, 'none'), attempts, updated_at) FROM "
	      "tasks WHERE task_id = ?",
	      "l", t.task_id);
	assert_string_equal(buf, "assigned itc_NUC_A none 1 1001");
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS(' ', kind, subject, request_id, outcome, "
	      "chosen, decided_at, detail) FROM decisions WHERE id = ?",
	      "l", id1);
	char want[128];
	snprintf(want, sizeof(want),
		 "task %lld itc_req_dec1 assigned itc_NUC_A 1001 {\"k\":1}",
		 t.task_id);
	assert_string_equal(buf, want);

	dec_init(&d, NULL, 0);
	d.outcome = DEC_PENDING;
	d.chosen = -1;
	d.retry_after_s = TB_PENDING_RETRY_S;
	assert_int_equal(st_task_decide(db, &t, &d, NULL, T0 + 2,
					T0 + 2 + TB_PENDING_RETRY_S,
					"itc_req_dec2", "{}", &id2),
			 GB_OK);
	assert_true(id2 > id1);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS(' ', status, COALESCE(nucleus, 'none'), "
	      "pending_until - updated_at, attempts) FROM tasks "
	      "WHERE task_id = ?",
	      "l", t.task_id);
	assert_string_equal(buf, "pending none 1800 2");
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS(' ', outcome, COALESCE(chosen, 'none')) FROM "
	      "decisions WHERE id = ?",
	      "l", id2);
	assert_string_equal(buf, "pending none");

	/* Assigned needs a nucleus; an unsaved task cannot be decided. */
	d.outcome = DEC_ASSIGNED;
	assert_int_equal(st_task_decide(db, &t, &d, NULL, T0, 0, "itc_req_x",
					"{}", &id1),
			 GB_EINVAL);
	struct tb_task ghost = {.task_id = ITC_TASK_BASE + 998,
				.gshare = "itc_share"};
	assert_int_equal(st_task_decide(db, &ghost, &d, "itc_NUC_A", T0, 0,
					"itc_req_x", "{}", &id1),
			 GB_ENOTFOUND);
}

static void make_pending(long long task_id, long long until)
{
	struct tb_task t = {.task_id = task_id, .gshare = "itc_share"};
	struct dec_decision d;
	dec_init(&d, NULL, 0);
	d.outcome = DEC_PENDING;
	d.chosen = -1;
	long long id = 0;
	assert_int_equal(st_task_save(db, &t, "itc_req_pend", T0), GB_OK);
	assert_int_equal(st_task_decide(db, &t, &d, NULL, T0, until,
					"itc_req_pend", "{}", &id),
			 GB_OK);
}

static int has_id(const long long *ids, size_t n, long long id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

static void test_pending_due_skip_locked(void **state)
{
	(void)state;
	/* Due at 500 and 501: far below any real clock, so no other test's
	** pending task is due at the fake "now" of 600. */
	long long t3 = ITC_TASK_BASE + 3, t4 = ITC_TASK_BASE + 4;
	make_pending(t3, 500);
	make_pending(t4, 501);
	long long ids[16];
	size_t n = 0;
	/* FOR UPDATE outside a transaction would lock nothing. */
	assert_int_equal(st_pending_due(db, 600, 16, ids, &n), GB_ESTATE);

	struct st_db *db2 = NULL;
	char err[512];
	assert_int_equal(st_open(&cfg, &db2, err, sizeof(err)), GB_OK);

	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_pending_due(db, 499, 16, ids, &n), GB_OK);
	assert_false(has_id(ids, n, t3) || has_id(ids, n, t4));
	assert_int_equal(st_pending_due(db, 600, 1, ids, &n), GB_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], t3); /* the earliest first */

	/* The second worker skips the row the first holds, without waiting. */
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_pending_due(db2, 600, 16, ids, &n), GB_OK);
	assert_false(has_id(ids, n, t3));
	assert_true(has_id(ids, n, t4));
	assert_int_equal(st_rollback(db2), GB_OK);

	/* Once the first commits its retry, the second sees what is left. */
	struct tb_task t = {.task_id = t3, .gshare = "itc_share"};
	struct dec_decision d;
	dec_init(&d, NULL, 0);
	d.outcome = DEC_ASSIGNED;
	long long id = 0;
	assert_int_equal(st_task_decide(db, &t, &d, "itc_NUC_A", 600, 0,
					"itc_req_retry", "{}", &id),
			 GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_pending_due(db2, 600, 16, ids, &n), GB_OK);
	assert_false(has_id(ids, n, t3));
	assert_true(has_id(ids, n, t4));
	assert_int_equal(st_rollback(db2), GB_OK);
	st_close(db2);
}

/* ---- dedup --------------------------------------------------------------- */

static void test_claim_message_dedup(void **state)
{
	(void)state;
	int already = -1;
	assert_int_equal(
		st_claim_message(db, "itc_msg_1", "task.broker", T0, &already),
		GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(
		st_claim_message(db, "itc_msg_1", "task.broker", T0, &already),
		GB_OK);
	assert_int_equal(already, 0);
	assert_int_equal(st_commit(db), GB_OK);

	/* The redelivery finds it; the transaction stays usable. */
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_claim_message(db, "itc_msg_1", "task.broker",
					  T0 + 1, &already),
			 GB_OK);
	assert_int_equal(already, 1);
	assert_int_equal(st_claim_message(db, "itc_msg_2", "task.broker",
					  T0 + 1, &already),
			 GB_OK);
	assert_int_equal(already, 0);
	/* Rolled back with its decision: the request was never processed. */
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_claim_message(db, "itc_msg_2", "task.broker",
					  T0 + 2, &already),
			 GB_OK);
	assert_int_equal(already, 0);
	assert_int_equal(st_rollback(db), GB_OK);
	char buf[64];
	raw_q(buf, sizeof(buf),
	      "SELECT processed_at FROM processed_messages WHERE message_id = "
	      "?",
	      "s", "itc_msg_1");
	assert_string_equal(buf, "1000");
}

/* ---- outbox -------------------------------------------------------------- */

#define EX "gridbroker.events"
#define RK "itc.store" /* bound by no subscriber */

static const struct st_outbox_row *row_by_id(const struct st_outbox_row *r,
					     size_t n, long long id)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].id == id)
			return &r[i];
	return NULL;
}

static void test_outbox_leases(void **state)
{
	(void)state;
	static const unsigned char small[] = {0x81, 0x00, 0xa1, 0x00, 0xff};
	size_t biglen = 100000;
	unsigned char *big = malloc(biglen);
	assert_non_null(big);
	for (size_t i = 0; i < biglen; i++)
		big[i] = (unsigned char)(i * 7 + 3);
	long long id1 = 0, id2 = 0, id3 = 0, dup = 0;

	assert_int_equal(st_outbox_add(db, "itc_out_1", "itc_req_A", EX, RK,
				       "itc.type", small, sizeof(small),
				       "itc_owner_a", T0 + 100, &id1),
			 GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_outbox_add(db, "itc_out_1", "itc_req_A", EX, RK,
				       "itc.type", small, sizeof(small),
				       "itc_owner_a", T0 + 100, &id1),
			 GB_OK);
	assert_int_equal(st_outbox_add(db, "itc_out_2", "itc_req_A", EX, RK,
				       "itc.type", big, biglen, "itc_owner_a",
				       T0 + 100, &id2),
			 GB_OK);
	assert_int_equal(st_outbox_add(db, "itc_out_3", "itc_req_B", EX, RK,
				       "itc.type", NULL, 0, "itc_owner_a",
				       T0 + 100, &id3),
			 GB_OK);
	assert_int_equal(st_outbox_add(db, "itc_out_3", "itc_req_B", EX, RK,
				       "itc.type", NULL, 0, "itc_owner_a",
				       T0 + 100, &dup),
			 GB_EDUP);
	assert_int_equal(st_commit(db), GB_OK);
	assert_true(id1 > 0 && id2 > id1 && id3 > id2);

	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct st_outbox_row *rows = NULL;
	size_t n = 0;
	/* Inside another transaction a claim would commit it: refused. */
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_outbox_claim(db, "itc_owner_b", T0 + 200, 30, 100,
					 &a, &rows, &n),
			 GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);

	/* Before the deciding worker's lease ends, nobody else claims. */
	assert_int_equal(st_outbox_claim(db, "itc_owner_b", T0 + 50, 30, 1000,
					 &a, &rows, &n),
			 GB_OK);
	assert_null(row_by_id(rows, n, id1));
	assert_null(row_by_id(rows, n, id2));
	assert_null(row_by_id(rows, n, id3));

	/* After it, a relay takes all three, bodies intact. */
	assert_int_equal(st_outbox_claim(db, "itc_owner_b", T0 + 200, 30, 1000,
					 &a, &rows, &n),
			 GB_OK);
	const struct st_outbox_row *r = row_by_id(rows, n, id1);
	assert_non_null(r);
	assert_string_equal(r->message_id, "itc_out_1");
	assert_string_equal(r->exchange, EX);
	assert_string_equal(r->routing_key, RK);
	assert_string_equal(r->type, "itc.type");
	assert_int_equal(r->len, sizeof(small));
	assert_memory_equal(r->body, small, sizeof(small));
	r = row_by_id(rows, n, id2);
	assert_non_null(r);
	assert_int_equal(r->len, biglen);
	assert_memory_equal(r->body, big, biglen);
	r = row_by_id(rows, n, id3);
	assert_non_null(r);
	assert_int_equal(r->len, 0);
	assert_non_null(r->body);
	char buf[128];
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT(owner, ' ', lease_until) FROM outbox WHERE id = ?",
	      "l", id1);
	assert_string_equal(buf, "itc_owner_b 1230");

	/* Leased to b now: a third relay finds nothing of ours... */
	assert_int_equal(st_outbox_claim(db, "itc_owner_c", T0 + 210, 30, 1000,
					 &a, &rows, &n),
			 GB_OK);
	assert_null(row_by_id(rows, n, id1));
	assert_null(row_by_id(rows, n, id3));
	/* ...but a redelivered request takes its own rows at once. */
	assert_int_equal(st_outbox_claim_request(db, "itc_req_A", 1,
						 "itc_owner_c", T0 + 210, 30,
						 &a, &rows, &n),
			 GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].id, id1);
	assert_int_equal(rows[1].id, id2);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT(owner, ' ', lease_until) FROM outbox WHERE id = ?",
	      "l", id2);
	assert_string_equal(buf, "itc_owner_c 1240");

	/* Sent once, twice (a duplicate confirm): fine; unknown: not found. */
	assert_int_equal(st_outbox_sent(db, id1), GB_OK);
	raw_q(buf, sizeof(buf), "SELECT sent_at FROM outbox WHERE id = ?", "l",
	      id1);
	assert_int_equal(st_outbox_sent(db, id1), GB_OK);
	char again[128];
	raw_q(again, sizeof(again), "SELECT sent_at FROM outbox WHERE id = ?",
	      "l", id1);
	assert_string_equal(buf, again); /* the first confirm's time stays */
	assert_int_equal(st_outbox_sent(db, -1), GB_ENOTFOUND);

	assert_int_equal(st_outbox_claim_request(db, "itc_req_A", 1,
						 "itc_owner_c", T0 + 220, 30,
						 &a, &rows, &n),
			 GB_OK);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, id2);
	assert_int_equal(st_outbox_claim(db, "itc_owner_d", T0 + 4000, 30, 1000,
					 &a, &rows, &n),
			 GB_OK);
	assert_null(row_by_id(rows, n, id1));
	assert_non_null(row_by_id(rows, n, id2));
	assert_non_null(row_by_id(rows, n, id3));
	/* `max` bounds a claim. */
	assert_int_equal(st_outbox_claim(db, "itc_owner_e", T0 + 5000, 30, 1,
					 &a, &rows, &n),
			 GB_OK);
	assert_int_equal(n, 1);
	arena_free(&a);
	free(big);
}

/*
** Which rows a request that came again claims: a redelivery (the AMQP
** flag) takes its unsent rows whatever the lease, since the worker that
** held the delivery lost its link; a producer's retry (same message id,
** not redelivered) takes only rows whose lease has run out, and leaves a
** live lease (another worker's, or its own: both copies may reach one
** worker) to the holder, who publishes them after its commit.
*/
static void test_outbox_claim_request_rule(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		const char *owner; /* the row's lease holder; NULL: none */
		long long lease_until;
		int sent;          /* marked sent before the claim */
		int redelivered;   /* the claiming delivery's flag */
		const char *claimer;
		long long now;
		int claimed;       /* 1: both rows come back, 0: none */
	} cases[] = {
		{"retry, live lease of another worker", "itc_owner_a",
		 T0 + 100, 0, 0, "itc_owner_b", T0 + 50, 0},
		{"retry, live lease of the same worker", "itc_owner_a",
		 T0 + 100, 0, 0, "itc_owner_a", T0 + 50, 0},
		{"retry, lease one second from its end", "itc_owner_a",
		 T0 + 100, 0, 0, "itc_owner_b", T0 + 99, 0},
		{"retry, lease ran out", "itc_owner_a", T0 + 100, 0, 0,
		 "itc_owner_b", T0 + 100, 1},
		{"retry, lease long over", "itc_owner_a", T0 + 100, 0, 0,
		 "itc_owner_b", T0 + 4000, 1},
		{"retry, row without a lease", NULL, 0, 0, 0, "itc_owner_b",
		 T0 + 50, 1},
		{"retry, rows sent", "itc_owner_a", T0 + 100, 1, 0,
		 "itc_owner_b", T0 + 4000, 0},
		{"redelivery, live lease of another worker", "itc_owner_a",
		 T0 + 100, 0, 1, "itc_owner_b", T0 + 50, 1},
		{"redelivery, lease ran out", "itc_owner_a", T0 + 100, 0, 1,
		 "itc_owner_b", T0 + 200, 1},
		{"redelivery, rows sent", "itc_owner_a", T0 + 100, 1, 1,
		 "itc_owner_b", T0 + 50, 0},
	};
	struct arena a;
	arena_init(&a, ARENA_CAP);
	static const unsigned char body[] = {0x80};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char req[64], msg[2][64];
		long long id[2] = {0, 0};
		snprintf(req, sizeof(req), "itc_req_rule_%zu", i);
		assert_int_equal(st_begin(db), GB_OK);
		for (int k = 0; k < 2; k++) {
			snprintf(msg[k], sizeof(msg[k]), "itc_rule_%zu_%d", i,
				 k);
			assert_int_equal(
				st_outbox_add(db, msg[k], req, EX, RK,
					      "itc.type", body, sizeof(body),
					      cases[i].owner,
					      cases[i].lease_until, &id[k]),
				GB_OK);
		}
		assert_int_equal(st_commit(db), GB_OK);
		if (cases[i].sent)
			assert_int_equal(st_outbox_sent_many(db, id, 2), GB_OK);
		struct st_outbox_row *rows = NULL;
		size_t n = 99;
		int rc = st_outbox_claim_request(db, req, cases[i].redelivered,
						 cases[i].claimer, cases[i].now,
						 30, &a, &rows, &n);
		if (rc != GB_OK || n != (cases[i].claimed ? 2u : 0u))
			fail_msg("%s: rc %d, %zu row(s) claimed, want %d",
				 cases[i].name, rc, n,
				 cases[i].claimed ? 2 : 0);
		/* Claimed rows are leased to the claimer; the others keep
		** their holder and lease. */
		char want[128], got[128];
		if (cases[i].claimed) {
			assert_int_equal(rows[0].id, id[0]);
			assert_int_equal(rows[1].id, id[1]);
			snprintf(want, sizeof(want), "%s %lld",
				 cases[i].claimer, cases[i].now + 30);
		} else {
			snprintf(want, sizeof(want), "%s %lld",
				 cases[i].owner ? cases[i].owner : "-",
				 cases[i].owner ? cases[i].lease_until : -1);
		}
		for (int k = 0; k < 2; k++) {
			raw_q(got, sizeof(got),
			      "SELECT CONCAT(COALESCE(owner, '-'), ' ', "
			      "COALESCE(lease_until, -1)) FROM outbox "
			      "WHERE id = ?",
			      "l", id[k]);
			if (strcmp(got, want) != 0)
				fail_msg("%s: row %d is '%s', want '%s'",
					 cases[i].name, k, got, want);
		}
	}
	arena_free(&a);
}

/* ---- lost connection ----------------------------------------------------- */

static void kill_connection(unsigned long id)
{
	raw_q(NULL, 0, "KILL CONNECTION ?", "l", (long long)id);
}

static void test_killed_connection_reconnects(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct prm_set set;
	/* Prepare a statement first, so a stale one would be reused. */
	assert_int_equal(st_params_load(db, &a, &set), GB_OK);
	unsigned long tid = st_thread_id(db);
	assert_true(tid > 0);

	assert_int_equal(st_begin(db), GB_OK);
	int already = 0;
	assert_int_equal(st_claim_message(db, "itc_msg_kill", "task.broker", T0,
					  &already),
			 GB_OK);
	kill_connection(tid);
	assert_int_equal(st_commit(db), GB_EDBGONE);
	assert_true(strlen(st_error(db)) > 0);
	/* Still gone until the caller reconnects. */
	assert_int_equal(st_params_load(db, &a, &set), GB_EDBGONE);
	assert_int_equal(st_ping(db), GB_EDBGONE);

	assert_int_equal(st_reconnect(db), GB_OK);
	assert_int_equal(st_ping(db), GB_OK);
	assert_true(st_thread_id(db) != tid);
	assert_int_equal(st_params_load(db, &a, &set), GB_OK);
	assert_non_null(kv_find(&set, "DISK_THRESHOLD"));
	/* The killed transaction did not commit. */
	assert_int_equal(raw_q(NULL, 0,
			       "SELECT 1 FROM processed_messages WHERE "
			       "message_id = ?",
			       "s", "itc_msg_kill"),
			 0);

	/* Killed between requests: the next statement reports it. */
	kill_connection(st_thread_id(db));
	assert_int_equal(st_params_load(db, &a, &set), GB_EDBGONE);
	assert_int_equal(st_reconnect(db), GB_OK);
	assert_int_equal(st_params_load(db, &a, &set), GB_OK);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_migrate_twice_is_noop,
					  test_teardown),
		cmocka_unit_test_teardown(test_params_seeded_and_loaded,
					  test_teardown),
		cmocka_unit_test_teardown(test_grid_load_and_state,
					  test_teardown),
		cmocka_unit_test_teardown(test_grid_reload_replaces,
					  test_teardown),
		cmocka_unit_test_teardown(test_task_save_load_round_trip,
					  test_teardown),
		cmocka_unit_test_teardown(
			test_task_decide_assigned_then_pending, test_teardown),
		cmocka_unit_test_teardown(test_pending_due_skip_locked,
					  test_teardown),
		cmocka_unit_test_teardown(test_claim_message_dedup,
					  test_teardown),
		cmocka_unit_test_teardown(test_outbox_leases, test_teardown),
		cmocka_unit_test_teardown(test_outbox_claim_request_rule,
					  test_teardown),
		cmocka_unit_test_teardown(test_killed_connection_reconnects,
					  test_teardown),
	};
	return cmocka_run_group_tests_name("itc_store", tests, group_setup,
					   group_teardown);
}
