/*
** test_taskbroker.c — every TB and FC rule with the seed's numbers.
**
** Each test builds a handful of nuclei with plain numbers, runs tb_broker and
** checks which nuclei survive, the rule ID, reason code and compared numbers
** of each drop, the stage counts, the weights, and the outcome.
*/
#include "gbtest.h"

#include "gb_error.h"
#include "params.h"
#include "rng.h"
#include "taskbroker.h"

#define MAXN 8

/* One nucleus with one disk storage of 1 PB (1e6 GB) and some replicas. */
struct fx_nucleus {
	struct tb_storage st[3];
	struct tb_replica rep[4];
	struct tb_nucleus n;
};

struct fx {
	struct fx_nucleus nuc[MAXN];
	struct tb_nucleus list[MAXN];
	size_t n;
	struct tb_dataset ds[4];
	struct tb_task task;
	struct prm_kv kv[8];
	struct prm_set set;
	struct tb_params p;
	struct dec_candidate cands[MAXN];
	struct dec_decision d;
	struct gb_rng rng;
};

static struct fx_nucleus *fx_add(struct fx *f, const char *name)
{
	struct fx_nucleus *x = &f->nuc[f->n++];
	memset(x, 0, sizeof(*x));
	x->n.name = name;
	x->n.status = "ACTIVE";
	x->n.bare = TB_BARE_NO;
	x->st[0] = (struct tb_storage){"DATADISK", 500000, 0, 1e6, 0, 0};
	x->n.storages = x->st;
	x->n.nstorages = 1;
	x->n.local = x->rep;
	return x;
}

static void fx_replica(struct fx_nucleus *x, const char *ds, double size,
		       long files)
{
	x->rep[x->n.nlocal++] = (struct tb_replica){ds, size, files};
}

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->task.task_id = 1001;
	f->task.gshare = "MC 16 simul";
	f->task.priority = 500;
	f->task.io_intensity = 100;
	f->task.datasets = f->ds;
	f->set.kv = f->kv;
}

static void fx_dataset(struct fx *f, const char *name, int primary,
		       double size, long files, int on_tape)
{
	f->ds[f->task.ndatasets++] =
		(struct tb_dataset){name, primary, size, files, on_tape};
}

static void fx_param(struct fx *f, const char *name, double v)
{
	f->kv[f->set.n++] = (struct prm_kv){name, v};
}

static void fx_run(struct fx *f, uint64_t seed)
{
	for (size_t i = 0; i < f->n; i++)
		f->list[i] = f->nuc[i].n;
	tb_params_resolve(&f->set, f->task.gshare, &f->p);
	gb_rng_seed(&f->rng, seed);
	assert_int_equal(tb_broker(&f->task, f->list, f->n, &f->p, &f->rng,
				   f->cands, &f->d),
			 GB_OK);
}

static const struct dec_candidate *cand(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->d.ncands; i++)
		if (strcmp(f->cands[i].name, name) == 0)
			return &f->cands[i];
	fail_msg("no candidate %s", name);
	return NULL;
}

static void assert_alive(const struct fx *f, const char *name)
{
	const struct dec_candidate *c = cand(f, name);
	if (dec_dropped(c))
		fail_msg("%s dropped by %s (%s)", name, c->reasons[0].rule,
			 c->reasons[0].code);
	assert_false(isnan(c->weight));
}

/* Assert `name` was dropped and return its reason with `rule`. */
static const struct dec_reason *assert_dropped(const struct fx *f,
					       const char *name,
					       const char *rule,
					       const char *code)
{
	const struct dec_candidate *c = cand(f, name);
	assert_true(dec_dropped(c));
	assert_true(isnan(c->weight));
	for (unsigned i = 0; i < c->nreasons && i < DEC_MAX_REASONS; i++)
		if (strcmp(c->reasons[i].rule, rule) == 0 &&
		    strcmp(c->reasons[i].code, code) == 0)
			return &c->reasons[i];
	fail_msg("%s has no reason %s/%s (first: %s/%s)", name, rule, code,
		 c->reasons[0].rule, c->reasons[0].code);
	return NULL;
}

static const struct dec_stage *stage(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->d.nstages; i++)
		if (strcmp(f->d.stages[i].name, name) == 0)
			return &f->d.stages[i];
	fail_msg("no stage %s", name);
	return NULL;
}

/* ---- TB-01 ----------------------------------------------------------- */

static void test_tb01_only_active_nuclei(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_add(&f, "A");
	fx_add(&f, "B")->n.status = "OFFLINE";
	fx_add(&f, "C")->n.status = "BROKEROFF";
	fx_run(&f, 1);
	assert_alive(&f, "A");
	const struct dec_reason *r = assert_dropped(&f, "B", "TB-01", "status");
	char buf[128];
	dec_reason_format(r, buf, sizeof(buf));
	assert_string_equal(buf, "status OFFLINE is not ACTIVE");
	assert_dropped(&f, "C", "TB-01", "status");
	assert_int_equal(stage(&f, "status")->in, 3);
	assert_int_equal(stage(&f, "status")->out, 1);
	assert_int_equal(f.d.outcome, DEC_ASSIGNED);
	assert_string_equal(f.cands[f.d.chosen].name, "A");
}

/* ---- TB-02 ----------------------------------------------------------- */

static void test_tb02_transfer_backlog(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_add(&f, "AT_CAP")->n.transfer_backlog = 2000;  /* not > 2000 */
	fx_add(&f, "OVER")->n.transfer_backlog = 2001;
	fx_run(&f, 1);
	assert_alive(&f, "AT_CAP");
	const struct dec_reason *r =
		assert_dropped(&f, "OVER", "TB-02", "transfer_backlog");
	assert_near(r->v[0], 2001, 1e-12);
	assert_near(r->v[1], 2000, 1e-12); /* NQUEUED_NUC_CAP default */

	/* A negative t1Weight ignores the backlog. */
	f.task.t1_weight = -1;
	fx_run(&f, 1);
	assert_alive(&f, "OVER");

	/* The cap is a parameter. */
	f.task.t1_weight = 0;
	fx_param(&f, "NQUEUED_NUC_CAP", 3000);
	fx_run(&f, 1);
	assert_alive(&f, "OVER");
}

/* ---- TB-03 ----------------------------------------------------------- */

static void test_tb03_associated_storage(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_add(&f, "OK");
	fx_add(&f, "NONE")->n.nstorages = 0;
	struct fx_nucleus *x = fx_add(&f, "UNUSABLE");
	x->st[0].tape = 1;
	x->st[1] = (struct tb_storage){"SCRATCH", 9e5, 0, 1e6, 0, 1};
	x->n.nstorages = 2;
	fx_run(&f, 1);
	assert_alive(&f, "OK");
	assert_dropped(&f, "NONE", "TB-03", "no_storage");
	const struct dec_reason *r =
		assert_dropped(&f, "UNUSABLE", "TB-03", "no_usable_storage");
	assert_near(r->v[0], 2, 0);
	assert_near(r->v[1], 1, 0); /* tape */
	assert_near(r->v[2], 1, 0); /* blacklisted */
	assert_int_equal(stage(&f, "storage")->out, 1);
}

/* ---- TB-04 ----------------------------------------------------------- */

static void test_tb04_space_threshold(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.norm_exp_out_size = 0.25;
	/* 100000 + 2500 - 0.25 x 1000 = 102250 <= 102400 (100 TB) */
	struct fx_nucleus *a = fx_add(&f, "TIGHT");
	a->st[0] = (struct tb_storage){"T_DATADISK", 100000, 2500, 1e6, 0, 0};
	a->n.rw = 1000;
	/* 100200 + 2500 - 250 = 102450 > 102400 */
	struct fx_nucleus *b = fx_add(&f, "ROOMY");
	b->st[0] = (struct tb_storage){"R_DATADISK", 100200, 2500, 1e6, 0, 0};
	b->n.rw = 1000;
	fx_run(&f, 1);
	assert_alive(&f, "ROOMY");
	const struct dec_reason *r = assert_dropped(&f, "TIGHT", "TB-04", "space");
	assert_near(r->v[0], 102250, 1e-12);
	assert_near(r->v[1], 102400, 1e-12);
	assert_string_equal(r->str, "T_DATADISK");

	/* DISK_THRESHOLD_<gshare> overrides DISK_THRESHOLD. */
	fx_param(&f, "DISK_THRESHOLD_MC 16 simul", 50000);
	fx_run(&f, 1);
	assert_alive(&f, "TIGHT");
	/* ...but only for its own gshare. */
	f.task.gshare = "Validation";
	fx_run(&f, 1);
	assert_dropped(&f, "TIGHT", "TB-04", "space");
}

static void test_tb04_tightest_storage_counts(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	struct fx_nucleus *a = fx_add(&f, "TWO");
	a->st[0] = (struct tb_storage){"BIG", 900000, 0, 1e6, 0, 0};
	a->st[1] = (struct tb_storage){"SMALL", 90000, 0, 1e5, 0, 0};
	a->n.nstorages = 2;
	fx_run(&f, 1);
	const struct dec_reason *r = assert_dropped(&f, "TWO", "TB-04", "space");
	assert_string_equal(r->str, "SMALL");
	assert_near(r->v[0], 90000, 1e-12);
	assert_int_equal(f.d.outcome, DEC_PENDING);
}

/* ---- TB-05..TB-08 ---------------------------------------------------- */

static void test_tb07_input_size_fraction(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500; /* above MIN_IO: TB-09 cannot relax */
	fx_dataset(&f, "data.A", 1, 100, 10, 0); /* 100 GB > 1 GB threshold */
	fx_replica(fx_add(&f, "TEN"), "data.A", 10, 1);    /* 10% : not > 10% */
	fx_replica(fx_add(&f, "MORE"), "data.A", 10.5, 1); /* 10.5% */
	fx_run(&f, 1);
	assert_alive(&f, "MORE");
	const struct dec_reason *r =
		assert_dropped(&f, "TEN", "TB-07", "input_size");
	assert_near(r->v[0], 10, 1e-12);  /* percent local */
	assert_near(r->v[1], 100, 1e-12); /* total GB */
	assert_near(r->v[2], 10, 1e-12);  /* INPUT_SIZE_FRACTION */

	/* Below INPUT_SIZE_THRESHOLD the size check does not apply. */
	f.ds[0].size = 0.9;
	fx_replica(&f.nuc[0], "other", 1, 1);
	fx_run(&f, 1);
	assert_alive(&f, "TEN");
}

static void test_tb08_input_files_fraction(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500;
	fx_dataset(&f, "data.A", 1, 0.5, 200, 0); /* 200 files > 100 */
	fx_replica(fx_add(&f, "TWENTY"), "data.A", 0.05, 20); /* 10% */
	fx_replica(fx_add(&f, "MORE"), "data.A", 0.05, 21);   /* 10.5% */
	fx_run(&f, 1);
	assert_alive(&f, "MORE");
	const struct dec_reason *r =
		assert_dropped(&f, "TWENTY", "TB-08", "input_files");
	assert_near(r->v[0], 10, 1e-12);
	assert_near(r->v[1], 200, 1e-12);
	assert_near(r->v[2], 10, 1e-12);

	/* At 100 files (not > INPUT_NUM_THRESHOLD) there is no file check. */
	f.ds[0].files = 100;
	fx_run(&f, 1);
	assert_alive(&f, "TWENTY");
}

static void test_tb05_broker_on_master_scope(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500;
	fx_dataset(&f, "primary", 1, 100, 100, 0);
	fx_dataset(&f, "secondary", 0, 900, 900, 0);
	/* Holds all of the primary, none of the secondary: 10% of all. */
	fx_replica(fx_add(&f, "PRIMARY_ONLY"), "primary", 100, 100);
	fx_run(&f, 1);
	const struct dec_reason *r =
		assert_dropped(&f, "PRIMARY_ONLY", "TB-07", "input_size");
	assert_near(r->v[0], 10, 1e-12);
	assert_near(r->v[1], 1000, 1e-12);

	/* taskBrokerOnMaster: only the primary dataset counts. */
	f.task.broker_on_master = 1;
	fx_run(&f, 1);
	assert_alive(&f, "PRIMARY_ONLY");
	/* TB-10 data factor is then local/total of the primary: 1.0. */
	assert_near(f.cands[0].wexpl.v[0], 1.0, 1e-12);
}

/* TB-06: inputPreStaging admits nuclei with incomplete local data. */
static void test_tb06_input_prestaging(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500;
	fx_dataset(&f, "data.A", 1, 100, 1000, 0);
	fx_add(&f, "EMPTY");
	fx_run(&f, 1);
	assert_dropped(&f, "EMPTY", "TB-07", "input_size");
	assert_dropped(&f, "EMPTY", "TB-08", "input_files");

	f.task.input_prestaging = 1;
	fx_run(&f, 1);
	assert_alive(&f, "EMPTY");
	assert_int_equal(stage(&f, "locality")->in, 1);
	assert_int_equal(stage(&f, "locality")->out, 1);
	assert_int_equal(f.d.outcome, DEC_ASSIGNED);
}

/* ---- TB-09 ----------------------------------------------------------- */

static void test_tb09_locality_relaxed(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_dataset(&f, "data.A", 1, 5000, 5000, 0); /* 5000 GB <= 10000 */
	fx_add(&f, "N1");
	fx_add(&f, "N2");

	/* ioIntensity 200 <= 200 and input 5000 <= 10000: relaxed. */
	f.task.io_intensity = 200;
	fx_run(&f, 1);
	assert_alive(&f, "N1");
	assert_alive(&f, "N2");
	assert_int_equal(stage(&f, "locality")->out, 0);
	assert_int_equal(stage(&f, "locality dropped")->out, 2);
	assert_non_null(strstr(f.d.note, "TB-09"));
	assert_int_equal(f.d.outcome, DEC_ASSIGNED);

	/* ioIntensity 201 > 200: not relaxed, pending. */
	f.task.io_intensity = 201;
	fx_run(&f, 1);
	assert_dropped(&f, "N1", "TB-07", "input_size");
	assert_int_equal(f.d.outcome, DEC_PENDING);
	/* Nobody survived: no TB-10 fallback note claims survivors. */
	assert_null(strstr(f.d.note, "TB-10"));

	/* Input 10001 GB > 10000 with low IO: not relaxed. */
	f.task.io_intensity = 100;
	f.ds[0].size = 10001;
	fx_run(&f, 1);
	assert_int_equal(f.d.outcome, DEC_PENDING);

	/* Priority 800 >= MAX_TASK_PRIO_WITH_LOCAL_DATA relaxes anyway... */
	f.task.priority = 800;
	f.task.io_intensity = 5000;
	fx_run(&f, 1);
	assert_int_equal(f.d.outcome, DEC_ASSIGNED);
	/* ...and 799 does not. */
	f.task.priority = 799;
	fx_run(&f, 1);
	assert_int_equal(f.d.outcome, DEC_PENDING);
}

static void test_tb09_not_applied_when_someone_has_data(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 100;
	fx_dataset(&f, "data.A", 1, 100, 100, 0);
	fx_replica(fx_add(&f, "HAS"), "data.A", 100, 100);
	fx_add(&f, "LACKS");
	fx_run(&f, 1);
	assert_alive(&f, "HAS");
	assert_dropped(&f, "LACKS", "TB-07", "input_size");
	assert_int_equal(f.d.note[0], '\0');
}

/* ---- TB-10 / TB-11 --------------------------------------------------- */

static void test_tb10_weight_with_local_data(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500; /* > 200: TB-10 */
	fx_dataset(&f, "data.A", 1, 100, 100, 0);
	/* 50 of 100 GB local, (300000 + 0) / 1e6, RW 20 -> max(50, 20) = 50 */
	struct fx_nucleus *a = fx_add(&f, "HALF");
	a->st[0] = (struct tb_storage){"DATADISK", 300000, 0, 1e6, 0, 0};
	a->n.rw = 20;
	fx_replica(a, "data.A", 50, 50);
	/* all local, (200000 + 100000) / 1e6, RW 100 */
	struct fx_nucleus *b = fx_add(&f, "FULL");
	b->st[0] = (struct tb_storage){"DATADISK", 200000, 100000, 1e6, 0, 0};
	b->n.rw = 100;
	fx_replica(b, "data.A", 100, 100);
	fx_run(&f, 1);
	assert_near(cand(&f, "HALF")->weight, 0.5 * 1.0 * 0.3 / 50, 1e-12);
	assert_near(cand(&f, "FULL")->weight, 1.0 * 1.0 * 0.3 / 100, 1e-12);
	assert_string_equal(cand(&f, "HALF")->wexpl.rule, "TB-10");
}

static void test_tb10_tape_weight(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500;
	fx_dataset(&f, "data.T", 1, 100, 100, 1); /* on tape */
	struct fx_nucleus *a = fx_add(&f, "TAPE_SITE");
	a->st[1] = (struct tb_storage){"MCTAPE", 0, 0, 1e7, 1, 0};
	a->n.nstorages = 2;
	fx_replica(a, "data.T", 100, 100);
	fx_replica(fx_add(&f, "DISK_SITE"), "data.T", 100, 100);
	fx_run(&f, 1);
	/* (1 x 0.001 x 0.5) / 50 vs (1 x 1 x 0.5) / 50 */
	assert_near(cand(&f, "TAPE_SITE")->weight, 0.001 * 0.5 / 50, 1e-12);
	assert_near(cand(&f, "DISK_SITE")->weight, 0.5 / 50, 1e-12);
}

static void test_tb11_weight_without_data(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 200; /* not > 200: TB-11 */
	fx_dataset(&f, "data.A", 1, 100, 100, 0);
	struct fx_nucleus *a = fx_add(&f, "N");
	a->st[0] = (struct tb_storage){"DATADISK", 250000, 50000, 1e6, 0, 0};
	a->n.rw = 400;
	fx_replica(a, "data.A", 100, 100);
	fx_run(&f, 1);
	/* 1 x (250000 + 50000) / 1e6 / max(50, 400) */
	assert_near(cand(&f, "N")->weight, 0.3 / 400, 1e-12);
	assert_string_equal(cand(&f, "N")->wexpl.rule, "TB-11");
	char buf[200];
	dec_reason_format(&cand(&f, "N")->wexpl, buf, sizeof(buf));
	assert_non_null(strstr(buf, "max(50,RW) 400"));
}

static void test_tb10_zero_data_falls_back_to_tb11(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.task.io_intensity = 500;
	f.task.input_prestaging = 1; /* nobody holds data, all pass */
	fx_dataset(&f, "data.A", 1, 100, 100, 0);
	fx_add(&f, "N1");
	fx_run(&f, 1);
	assert_near(cand(&f, "N1")->weight, 0.5 / 50, 1e-12);
	assert_string_equal(cand(&f, "N1")->wexpl.rule, "TB-11");
	assert_int_equal(f.d.outcome, DEC_ASSIGNED);
}

/* ---- TB-12 ----------------------------------------------------------- */

static void test_tb12_weighted_draw_is_seeded_and_proportional(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	/* TB-11 weights 0.15/50 and 0.45/50: expected shares 25% and 75%. */
	fx_add(&f, "LOW")->st[0].space_free = 150000;
	fx_add(&f, "HIGH")->st[0].space_free = 450000;
	fx_run(&f, 42);
	long first = f.d.chosen;
	fx_run(&f, 42);
	assert_int_equal(f.d.chosen, first); /* same seed, same choice */

	int high = 0, n = 20000;
	for (int i = 0; i < n; i++) {
		fx_run(&f, 1000 + (uint64_t)i);
		assert_int_equal(f.d.outcome, DEC_ASSIGNED);
		high += strcmp(f.cands[f.d.chosen].name, "HIGH") == 0;
	}
	/* Binomial sd = sqrt(n p q) = 61 draws: 5 sd = 0.0153 of n. */
	assert_near((double)high / n, 0.75, 0.02);
	assert_int_equal(stage(&f, "weighted choice")->in, 2);
	assert_int_equal(stage(&f, "weighted choice")->out, 1);
}

/* ---- TB-13 ----------------------------------------------------------- */

static void test_tb13_pending_when_all_skipped(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_add(&f, "OFF")->n.status = "OFFLINE";
	fx_add(&f, "FULL")->st[0].space_free = 1000;
	fx_run(&f, 1);
	assert_int_equal(f.d.outcome, DEC_PENDING);
	assert_int_equal(f.d.chosen, -1);
	assert_int_equal(f.d.retry_after_s, 1800);
	assert_dropped(&f, "OFF", "TB-01", "status");
	assert_dropped(&f, "FULL", "TB-04", "space");
	assert_int_equal(stage(&f, "weighted choice")->out, 0);
	assert_string_equal(dec_outcome_name(f.d.outcome), "pending");

	/* No nuclei at all: pending too. */
	f.n = 0;
	fx_run(&f, 1);
	assert_int_equal(f.d.outcome, DEC_PENDING);
}

/* ---- FC -------------------------------------------------------------- */

static void fx_fullchain_grid(struct fx *f)
{
	fx_add(f, "NORMAL");
	fx_add(f, "BARE_ONLY")->n.bare = TB_BARE_ONLY;
	fx_add(f, "BARE_ALLOW")->n.bare = TB_BARE_ALLOW;
}

/* FC-01: bareNucleus words "only" and "allow" make a nucleus bare. */
static void test_fc01_bare_nucleus_words(void **state)
{
	(void)state;
	assert_int_equal(tb_bare_parse("only"), TB_BARE_ONLY);
	assert_int_equal(tb_bare_parse("allow"), TB_BARE_ALLOW);
	assert_int_equal(tb_bare_parse(""), TB_BARE_NO);
	assert_int_equal(tb_bare_parse(NULL), TB_BARE_NO);
	assert_int_equal(tb_bare_parse("sometimes"), -1);
	assert_string_equal(tb_bare_name(TB_BARE_ONLY), "only");
	assert_int_equal(tb_fullchain_parse("capable"), TB_FC_CAPABLE);
	assert_int_equal(tb_fullchain_parse(NULL), TB_FC_NONE);
	assert_int_equal(tb_fullchain_parse("maybe"), -1);
	assert_null(tb_fullchain_name(TB_FC_NONE));
}

static void test_fc02_only_goes_to_bare_only(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_fullchain_grid(&f);
	f.task.full_chain = TB_FC_ONLY;
	fx_run(&f, 1);
	assert_alive(&f, "BARE_ONLY");
	assert_dropped(&f, "NORMAL", "FC-02", "not_bare_only");
	assert_dropped(&f, "BARE_ALLOW", "FC-02", "not_bare_only");
	assert_int_equal(stage(&f, "full chain")->in, 3);
	assert_int_equal(stage(&f, "full chain")->out, 1);
	assert_string_equal(f.cands[f.d.chosen].name, "BARE_ONLY");
}

static void test_fc03_require_goes_to_any_bare(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_fullchain_grid(&f);
	f.task.full_chain = TB_FC_REQUIRE;
	fx_run(&f, 1);
	assert_alive(&f, "BARE_ONLY");
	assert_alive(&f, "BARE_ALLOW");
	assert_dropped(&f, "NORMAL", "FC-03", "not_bare");
	assert_int_equal(stage(&f, "full chain")->out, 2);
}

static void test_fc04_capable_follows_bare_parent(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_fullchain_grid(&f);
	f.task.full_chain = TB_FC_CAPABLE;
	f.task.parent_nucleus = "BARE_ALLOW";
	fx_run(&f, 1);
	assert_alive(&f, "BARE_ALLOW");
	assert_dropped(&f, "NORMAL", "FC-04", "not_parent_nucleus");
	assert_dropped(&f, "BARE_ONLY", "FC-04", "not_parent_nucleus");
	assert_string_equal(f.cands[f.d.chosen].name, "BARE_ALLOW");
	assert_non_null(strstr(f.d.note, "FC-04"));

	/* Parent on a normal nucleus: capable is ignored (a normal task). */
	f.task.parent_nucleus = "NORMAL";
	fx_run(&f, 1);
	assert_alive(&f, "NORMAL");
	assert_alive(&f, "BARE_ALLOW");
	assert_dropped(&f, "BARE_ONLY", "FC-05", "bare_only");
}

static void test_fc05_normal_task_never_on_bare_only(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_fullchain_grid(&f);
	fx_run(&f, 1);
	assert_alive(&f, "NORMAL");
	assert_alive(&f, "BARE_ALLOW"); /* allow accepts normal tasks */
	assert_dropped(&f, "BARE_ONLY", "FC-05", "bare_only");
}

static void test_fc06_fc07_job_scope(void **state)
{
	(void)state;
	static const struct {
		enum tb_fullchain fc;
		enum tb_bare bare;
		enum tb_job_scope want;
	} cases[] = {
		/* FC-06: full-chain on a bare nucleus: nucleus queues only */
		{TB_FC_ONLY, TB_BARE_ONLY, TB_SCOPE_NUCLEUS_ONLY},
		{TB_FC_REQUIRE, TB_BARE_ALLOW, TB_SCOPE_NUCLEUS_ONLY},
		{TB_FC_CAPABLE, TB_BARE_ALLOW, TB_SCOPE_NUCLEUS_ONLY},
		/* FC-07: normal on allow, capable on normal: satellites too */
		{TB_FC_NONE, TB_BARE_ALLOW, TB_SCOPE_SATELLITES},
		{TB_FC_CAPABLE, TB_BARE_NO, TB_SCOPE_SATELLITES},
		{TB_FC_NONE, TB_BARE_NO, TB_SCOPE_SATELLITES},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(tb_job_scope(cases[i].fc, cases[i].bare),
				 cases[i].want);
	assert_string_equal(tb_job_scope_name(TB_SCOPE_NUCLEUS_ONLY),
			    "nucleus-only");
}

/* ---- contracts -------------------------------------------------------- */

static void test_tb_invalid_arguments(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	fx_add(&f, "A");
	f.list[0] = f.nuc[0].n;
	tb_params_resolve(NULL, NULL, &f.p);
	gb_rng_seed(&f.rng, 1);
	assert_int_equal(tb_broker(NULL, f.list, 1, &f.p, &f.rng, f.cands, &f.d),
			 GB_EINVAL);
	assert_int_equal(tb_broker(&f.task, f.list, 1, &f.p, &f.rng, NULL, &f.d),
			 GB_EINVAL);
	fx_dataset(&f, "neg", 1, -1, 1, 0);
	assert_int_equal(tb_broker(&f.task, f.list, 1, &f.p, &f.rng, f.cands,
				   &f.d),
			 GB_EINVAL);
	f.ds[0].size = NAN;
	assert_int_equal(tb_broker(&f.task, f.list, 1, &f.p, &f.rng, f.cands,
				   &f.d),
			 GB_EINVAL);
}

static void test_tb_filter_table_names_rules(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct tb_filter *t = tb_filters; t->name; t++, n++) {
		assert_non_null(t->rule);
		assert_non_null(t->fn);
	}
	assert_int_equal(n, 6);
}

/*
** Properties over 2000 random grids: every dropped nucleus names a rule of
** the filter table, stage counts never grow (except where TB-09 restores),
** the chosen nucleus is alive with a positive weight, a decision is pending
** exactly when no survivor has weight, and the same seed gives the same
** decision.
*/
static void test_tb_random_grids_keep_invariants(void **state)
{
	(void)state;
	static const char *names[MAXN] = {"N0", "N1", "N2", "N3",
					  "N4", "N5", "N6", "N7"};
	static const char *statuses[] = {"ACTIVE", "ACTIVE", "ACTIVE",
					 "OFFLINE"};
	struct gb_rng g;
	gb_rng_seed(&g, 99);
	for (int iter = 0; iter < 2000; iter++) {
		struct fx f;
		fx_init(&f);
		f.task.io_intensity = (double)gb_rng_below(&g, 600);
		f.task.priority = (long)gb_rng_below(&g, 1000);
		f.task.t1_weight = gb_rng_below(&g, 4) == 0 ? -1 : 0;
		f.task.input_prestaging = gb_rng_below(&g, 5) == 0;
		f.task.broker_on_master = gb_rng_below(&g, 3) == 0;
		f.task.full_chain = (enum tb_fullchain)gb_rng_below(&g, 4);
		f.task.parent_nucleus = names[gb_rng_below(&g, MAXN)];
		f.task.norm_exp_out_size = gb_rng_uniform(&g);
		fx_dataset(&f, "d0", 1, (double)gb_rng_below(&g, 20000),
			   (long)gb_rng_below(&g, 400), gb_rng_below(&g, 4) == 0);
		fx_dataset(&f, "d1", 0, (double)gb_rng_below(&g, 200),
			   (long)gb_rng_below(&g, 400), 0);
		size_t n = 1 + (size_t)gb_rng_below(&g, MAXN);
		for (size_t i = 0; i < n; i++) {
			struct fx_nucleus *x = fx_add(&f, names[i]);
			x->n.status = statuses[gb_rng_below(&g, 4)];
			x->n.bare = (enum tb_bare)gb_rng_below(&g, 3);
			x->n.transfer_backlog = (long)gb_rng_below(&g, 3000);
			x->n.rw = (double)gb_rng_below(&g, 2000);
			x->st[0].space_free = (double)gb_rng_below(&g, 1000000);
			x->st[0].tape = gb_rng_below(&g, 8) == 0;
			x->n.nstorages = gb_rng_below(&g, 10) == 0 ? 0 : 1;
			if (gb_rng_below(&g, 2))
				fx_replica(x, "d0", gb_rng_uniform(&g) * 20000,
					   (long)gb_rng_below(&g, 400));
			if (gb_rng_below(&g, 2))
				fx_replica(x, "d1", gb_rng_uniform(&g) * 200,
					   (long)gb_rng_below(&g, 400));
		}
		uint64_t seed = gb_rng_next(&g);
		fx_run(&f, seed);
		long chosen = f.d.chosen;
		double wpos = 0;
		for (size_t i = 0; i < f.n; i++) {
			const struct dec_candidate *c = &f.cands[i];
			if (!dec_dropped(c)) {
				assert_false(isnan(c->weight));
				assert_true(c->weight >= 0);
				wpos += c->weight;
				continue;
			}
			assert_true(c->nreasons >= 1);
			const char *r = c->reasons[0].rule;
			assert_true(r[0] == 'T' || r[0] == 'F');
			assert_non_null(c->reasons[0].code);
		}
		for (size_t s = 1; s < f.d.nstages; s++)
			if (strcmp(f.d.stages[s].name, "locality dropped") != 0 &&
			    strcmp(f.d.stages[s - 1].name, "locality dropped") != 0)
				assert_true(f.d.stages[s].in ==
					    f.d.stages[s - 1].out);
		for (size_t s = 0; s < f.d.nstages; s++)
			if (strcmp(f.d.stages[s].name, "locality dropped") != 0)
				assert_true(f.d.stages[s].out <=
					    f.d.stages[s].in);
		if (wpos > 0) {
			assert_int_equal(f.d.outcome, DEC_ASSIGNED);
			assert_false(dec_dropped(&f.cands[chosen]));
			assert_true(f.cands[chosen].weight > 0);
		} else {
			assert_int_equal(f.d.outcome, DEC_PENDING);
			assert_int_equal(chosen, -1);
		}
		fx_run(&f, seed);
		assert_int_equal(f.d.chosen, chosen);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tb01_only_active_nuclei),
		cmocka_unit_test(test_tb02_transfer_backlog),
		cmocka_unit_test(test_tb03_associated_storage),
		cmocka_unit_test(test_tb04_space_threshold),
		cmocka_unit_test(test_tb04_tightest_storage_counts),
		cmocka_unit_test(test_tb05_broker_on_master_scope),
		cmocka_unit_test(test_tb06_input_prestaging),
		cmocka_unit_test(test_tb07_input_size_fraction),
		cmocka_unit_test(test_tb08_input_files_fraction),
		cmocka_unit_test(test_tb09_locality_relaxed),
		cmocka_unit_test(test_tb09_not_applied_when_someone_has_data),
		cmocka_unit_test(test_tb10_weight_with_local_data),
		cmocka_unit_test(test_tb10_tape_weight),
		cmocka_unit_test(test_tb11_weight_without_data),
		cmocka_unit_test(test_tb10_zero_data_falls_back_to_tb11),
		cmocka_unit_test(test_tb12_weighted_draw_is_seeded_and_proportional),
		cmocka_unit_test(test_tb13_pending_when_all_skipped),
		cmocka_unit_test(test_fc01_bare_nucleus_words),
		cmocka_unit_test(test_fc02_only_goes_to_bare_only),
		cmocka_unit_test(test_fc03_require_goes_to_any_bare),
		cmocka_unit_test(test_fc04_capable_follows_bare_parent),
		cmocka_unit_test(test_fc05_normal_task_never_on_bare_only),
		cmocka_unit_test(test_fc06_fc07_job_scope),
		cmocka_unit_test(test_tb_invalid_arguments),
		cmocka_unit_test(test_tb_filter_table_names_rules),
		cmocka_unit_test(test_tb_random_grids_keep_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
