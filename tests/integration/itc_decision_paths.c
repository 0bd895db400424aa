/*
** itc_decision_paths.c — every scenario of etc/scenarios/ decided through
** both paths gives the same record digest (issue 16: "0 differences").
**
**   explain: the file parsed and decided (ex_run), as `gridbroker explain`
**            does;
**   worker:  the file's state written to MariaDB with the store functions
**            the state arrives through (`gridbroker grid load`, job.submit,
**            task and job requests encoded by the CLI's encoders and
**            decoded by the worker's decoders), read back with the store
**            functions the worker's routes load it with, and decided with
**            the same decision path (model/decide.h) and recorded with the
**            same record builders (report/record.h).
**
** Why: `explain` is only worth trusting if it shows what the fleet does.
** A field the store drops, rounds or defaults differently, or a load that
** reads a different set of rows than the scenario states, changes the
** record and so its digest. Each file is its own test, named after it.
**
** What goes where, per kind (ex_run tells the kind):
**   task      nuclei: st_grid_load_nuclei; the task: st_task_save of the
**             decoded message; route_task.c's st_params_load, st_tb_state,
**             md_decide_task.
**   jobs      queues, sw, links, replicas: st_jobs_grid_save; the request
**             decoded (cdj_decode_request) and completed as route_jobs.c
**             does (st_jobs_task_info, st_jobs_done); st_jobs_grid_load,
**             md_decide_jobs.
**   analysis  the same grid; the owner's figures where the analysis
**             section of a grid file goes (st_analysis_save); the per-queue
**             figures as job rows of the jobs table, counted so that
**             st_analysis_state gives exactly the scenario's numbers at its
**             `now`; the gshare's grid-wide counts (AJ-11) beyond the
**             queues' as a queue_counts row of a queue outside the grid;
**             md_decide_analysis.
**   pilot     groups and corrections (st_tq_config_save), the task queues
**             and their jobs through job.submit's st_tq_submit (a TQ
**             without jobs had its jobs claimed: st_tq_claim), the history
**             rows st_tq_history_load reads; the leader's md_priorities and
**             st_tq_prio_save; the index loaded by wk_tqs_load as a worker
**             does; md_match_pilot with the pilot decoded from pilot.match.
**   timeout   the queues with their timeout attributes (st_jobs_grid_save)
**             and the jobs as rows of the jobs table, due now; st_panda_due
**             and md_timeout per job; one record per fired job. The
**             "rebro" rows are not compared: explain records none.
** The scenario's `now` is the worker's clock, its seed the decision's seed.
** Rows that arrive by events rather than by a store function taking a
** state (the jobs' life cycle, the sampled history, the operators'
** parameters) are written with prepared INSERTs where the worker reads
** them.
**
** A scenario the store cannot hold (a state the tables refuse or cannot
** express) fails its test with what cannot be held: that is a finding, not
** something to paper over.
**
** The test owns the database while it runs (integration tests run one at a
** time): every table it writes is emptied before each scenario and after
** the run, and the parameters are re-seeded with the catalogue's defaults.
** The task queue numbering is reset with the admin account
** ($GB_ADMIN_CONFIG, set by run-itc.sh): the store numbers task queues
** 1, 2, 3... in creation order on a fresh database, and the scenarios'
** TQ ids are those numbers.
*/
#include "itc_raw.h"

#include <dirent.h>

#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "explain/explain.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"
#include "model/decide.h"
#include "params.h"
#include "pipeline/tqsync.h"
#include "report/record.h"
#include "store/store_analysis.h"
#include "store/store_jobs.h"
#include "store/store_panda.h"
#include "store/store_tq.h"

#define SCN_DIR GB_SCHEMA_DIR "/../etc/scenarios"
#define MAX_FILES 256
#define ARENA_CAP (512u << 20)
#define REQ_ID "itc-decision-paths"
/* Ids of the rows this test makes up (analysis load, empty TQs): far from
** any scenario's. */
#define AUX_TASK 9300000000000LL
#define AUX_JOB (AUX_TASK + 1)
#define EMPTY_TQ_JOB 9310000000000LL /* + tq id */
#define H 3600LL

static MYSQL *adm;           /* admin account: task queue numbering */
static struct gb_config acfg;
static int kinds_seen[EX_TIMEOUT + 1];

/* Tables a scenario's state goes to, children before their parents. */
static const char *const wipe_sql[] = {
	"DELETE FROM tq_jobs",
	"DELETE FROM task_queues",
	"DELETE FROM wms_jobs",
	"DELETE FROM wms_history",
	"DELETE FROM pilot_matches",
	"DELETE FROM tq_groups",
	"DELETE FROM tq_corrector_instances",
	"DELETE FROM tq_cpu_segments",
	"DELETE FROM tq_settings",
	"DELETE FROM nuclei",
	"DELETE FROM tasks",
	"DELETE FROM queues",
	"DELETE FROM queue_counts",
	"DELETE FROM links",
	"DELETE FROM sw_all",
	"DELETE FROM file_replicas",
	"DELETE FROM jobs",
	"DELETE FROM job_requests",
	"DELETE FROM analysis_owners",
	"DELETE FROM share_usage",
	"DELETE FROM task_classes",
	"DELETE FROM params",
};

/* ---- SQL with any parameters ------------------------------------------- */

/* Bound parameters of one statement (raw_q takes strings and integers;
** job rows need doubles, NULLs and more columns). */
#define ROW_MAX 24
struct row {
	MYSQL_BIND b[ROW_MAX];
	long long ll[ROW_MAX];
	double d[ROW_MAX];
	unsigned long len[ROW_MAX];
	unsigned n;
};

static unsigned row_slot(struct row *r)
{
	assert_true(r->n < ROW_MAX);
	memset(&r->b[r->n], 0, sizeof(r->b[r->n]));
	return r->n++;
}

static void row_ll(struct row *r, long long v)
{
	unsigned i = row_slot(r);
	r->ll[i] = v;
	r->b[i].buffer_type = MYSQL_TYPE_LONGLONG;
	r->b[i].buffer = &r->ll[i];
}

static void row_dbl(struct row *r, double v)
{
	unsigned i = row_slot(r);
	r->d[i] = v;
	r->b[i].buffer_type = MYSQL_TYPE_DOUBLE;
	r->b[i].buffer = &r->d[i];
}

/* NULL binds SQL NULL. */
static void row_str(struct row *r, const char *s)
{
	unsigned i = row_slot(r);
	r->b[i].buffer_type = s ? MYSQL_TYPE_STRING : MYSQL_TYPE_NULL;
	if (s == NULL)
		return;
	r->len[i] = (unsigned long)strlen(s);
	r->b[i].buffer = (void *)s;
	r->b[i].buffer_length = r->len[i];
	r->b[i].length = &r->len[i];
}

/* Run `sql` on `c` with r's parameters (r may be NULL: none). */
static void row_exec(MYSQL *c, const char *sql, struct row *r)
{
	MYSQL_STMT *s = mysql_stmt_init(c);
	assert_non_null(s);
	if (mysql_stmt_prepare(s, sql, (unsigned long)strlen(sql)) != 0 ||
	    (r && r->n && mysql_stmt_bind_param(s, r->b) != 0) ||
	    mysql_stmt_execute(s) != 0)
		fail_msg("%s: %s", sql, mysql_stmt_error(s));
	mysql_stmt_close(s);
}

/* ---- fixture ------------------------------------------------------------- */

static void wipe(void)
{
	for (size_t i = 0; i < sizeof(wipe_sql) / sizeof(wipe_sql[0]); i++)
		raw_q(NULL, 0, wipe_sql[i], "");
	/* The catalogue's defaults again (st_migrate seeds what is absent). */
	if (st_migrate(db, GB_SCHEMA_DIR, NULL) != GB_OK)
		fail_msg("migrate: %s", st_error(db));
	/* A fresh store's numbering (the file comment says why); no
	** transaction of ours holds the table now. */
	if (adm)
		row_exec(adm, "ALTER TABLE task_queues AUTO_INCREMENT = 1",
			 NULL);
}

static int group_setup(void **state)
{
	(void)state;
	if (itc_open("itc_decision_paths") != 0)
		return -1;
	const char *path = getenv("GB_ADMIN_CONFIG");
	char err[4096] = "";
	if (path == NULL || cfg_load(path, &acfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "itc_decision_paths: GB_ADMIN_CONFIG: %s\n",
			path ? err : "not set (run through run-itc.sh)");
		return -1;
	}
	adm = mysql_init(NULL);
	const char *sock = acfg.db_socket[0] ? acfg.db_socket : NULL;
	if (adm == NULL ||
	    !mysql_real_connect(adm, sock ? NULL : acfg.db_host, acfg.db_user,
				acfg.db_password, acfg.db_name,
				(unsigned)acfg.db_port, sock, 0)) {
		fprintf(stderr, "itc_decision_paths: admin connect: %s\n",
			adm ? mysql_error(adm) : "out of memory");
		return -1;
	}
	/* Never wait a server's default year for a lock (a leftover
	** transaction elsewhere): fail instead. */
	row_exec(adm, "SET SESSION lock_wait_timeout = 30", NULL);
	wipe();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	itc_close(wipe);
	if (adm)
		mysql_close(adm);
	return 0;
}

/* ---- small helpers ------------------------------------------------------- */

static void ok_store(int rc, const char *what)
{
	if (rc != GB_OK)
		fail_msg("%s: %s (%s)", what, gb_strerror(rc), st_error(db));
}

static void ok_parse(int rc, const char *err)
{
	if (rc != GB_OK)
		fail_msg("parse: %s (%s)", err, gb_strerror(rc));
}

/* Fail the scenario with what the store cannot hold. */
#define CANNOT_HOLD(file, ...)                                               \
	fail_msg("%s: the store cannot hold this scenario: %s", file,        \
		 (snprintf(why, sizeof(why), __VA_ARGS__), why))
static char why[1024];

/* The worker side's records: one per decision (timeout: per fired job). */
struct wrec {
	long long job_id; /* timeout: the job; else 0 */
	const char *text;
};
struct wrecs {
	struct wrec v[256];
	size_t n;
};

/* Keep `text` (malloc'd by record.h) in the arena. */
static void keep(struct wrecs *w, struct arena *a, long long job_id,
		 char *text)
{
	assert_non_null(text);
	assert_true(w->n < sizeof(w->v) / sizeof(w->v[0]));
	w->v[w->n].job_id = job_id;
	w->v[w->n].text = arena_strdup(a, text);
	free(text);
	assert_non_null(w->v[w->n].text);
	w->n++;
}

/* The scenario's "params" as the rows an operator writes into params. */
static void store_params(json_t *root, struct arena *a)
{
	char err[1024] = "";
	struct prm_kv *kv = NULL;
	size_t n = 0;
	ok_parse(scn_parse_params(json_object_get(root, "params"), "params", a,
				  &kv, &n, err, sizeof(err)),
		 err);
	for (size_t i = 0; i < n; i++) {
		const struct prm_def *d = prm_find(kv[i].name);
		assert_non_null(d);
		struct row r = {.n = 0};
		row_str(&r, d->component);
		row_str(&r, kv[i].name);
		row_dbl(&r, kv[i].value);
		row_exec(raw,
			 "INSERT INTO params (component, name, value) VALUES "
			 "(?, ?, ?) ON DUPLICATE KEY UPDATE value = "
			 "VALUES(value)",
			 &r);
	}
}

/* What travels on the wire: encoded as the CLI does, decoded as the worker
** does, so a field the codec drops or defaults shows in the digest. */
enum wire { W_TASK, W_JOBS, W_SUBMIT, W_PILOT };

struct jobs_msg {
	struct gm_request req;
	struct cdj_extra extra;
};

static void wire(enum wire k, const void *in, void *out, struct arena *a)
{
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	struct cod_error ce;
	memset(&ce, 0, sizeof(ce));
	struct jobs_msg *jm = out;
	int rc = k == W_TASK	 ? cod_encode_task(in, &sb)
		 : k == W_JOBS	 ? cdj_encode_request(in, &sb)
		 : k == W_SUBMIT ? cdt_encode_submit(in, &sb)
				 : cdt_encode_pilot(in, &sb);
	if (rc == GB_OK && k == W_TASK)
		rc = cod_decode_task(sb.data, sb.size, a, out, &ce);
	else if (rc == GB_OK && k == W_JOBS)
		rc = cdj_decode_request(sb.data, sb.size, a, &jm->req,
					&jm->extra, &ce);
	else if (rc == GB_OK && k == W_SUBMIT)
		rc = cdt_decode_submit(sb.data, sb.size, a, out, &ce);
	else if (rc == GB_OK)
		rc = cdt_decode_pilot(sb.data, sb.size, a, out, &ce);
	msgpack_sbuffer_destroy(&sb);
	if (rc != GB_OK)
		fail_msg("message %d: %s at %s: %s", (int)k, gb_strerror(rc),
			 ce.field, ce.problem);
}

/* ---- task ---------------------------------------------------------------- */

static void worker_task(json_t *root, const struct scn_task_scenario *s,
			struct arena *a, struct wrecs *out)
{
	char err[1024] = "";
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	/* `grid load`: nuclei with their storages and replicas. */
	ok_parse(scn_parse_nuclei(json_object_get(root, "nuclei"), "nuclei", a,
				  &nuclei, &n, err, sizeof(err)),
		 err);
	ok_store(st_grid_load_nuclei(db, nuclei, n), "st_grid_load_nuclei");
	/* `task submit`, then route_task.c in its transaction. */
	struct tb_task sent, task;
	ok_parse(scn_parse_task(json_object_get(root, "task"), "task", a, &sent,
				err, sizeof(err)),
		 err);
	wire(W_TASK, &sent, &task, a);
	ok_store(st_begin(db), "begin");
	ok_store(st_task_save(db, &task, REQ_ID, s->now), "st_task_save");
	struct prm_set set;
	ok_store(st_params_load(db, a, &set), "st_params_load");
	ok_store(st_tb_state(db, &task, a, &nuclei, &n), "st_tb_state");
	struct md_task d;
	ok_store(md_decide_task(&task, nuclei, n, &set, s->now, s->seed, a, &d),
		 "md_decide_task");
	keep(out, a, 0, rec_task(&d, NULL));
	st_rollback(db);
}

/* ---- jobs and analysis --------------------------------------------------- */

/* `grid load` of the job-brokerage keys; the parsed grid for the caller. */
static void store_grid(json_t *root, long long now, struct arena *a,
		       struct gm_grid *g)
{
	char err[1024] = "";
	ok_parse(scj_parse_grid(root, a, now, g, err, sizeof(err)), err);
	ok_store(st_jobs_grid_save(db, g, now), "st_jobs_grid_save");
}

/*
** Inside the transaction: the request as route_jobs.c has it before
** deciding: `job submit`'s encoding decoded, completed from the task
** record and without the jobs that already have a queue; the parameters
** and the grid loaded for it.
*/
static void load_request(json_t *root, struct arena *a, struct gm_request *r,
			 struct prm_set *set, struct gm_grid *grid)
{
	char err[1024] = "";
	struct gm_request sent;
	struct jobs_msg m;
	ok_parse(scj_parse_request(json_object_get(root, "task"), "task", a, 0,
				   &sent, err, sizeof(err)),
		 err);
	wire(W_JOBS, &sent, &m, a);
	*r = m.req;
	if (r->an.is_analysis) {
		r->t.nucleus = r->t.nucleus ? r->t.nucleus : "";
		r->t.gshare = r->t.gshare ? r->t.gshare : "User Analysis";
	} else if (!r->t.nucleus || !r->t.gshare || !m.extra.has_scope) {
		const char *nucleus = NULL, *gshare = NULL;
		enum tb_job_scope scope = TB_SCOPE_SATELLITES;
		int rc = st_jobs_task_info(db, r->t.task_id, a, &nucleus,
					   &gshare, &scope);
		if (rc == GB_ENOTFOUND && r->t.nucleus && r->t.gshare)
			rc = GB_OK;
		ok_store(rc, "st_jobs_task_info");
		r->t.nucleus = r->t.nucleus ? r->t.nucleus : nucleus;
		r->t.gshare = r->t.gshare ? r->t.gshare : gshare;
		if (!m.extra.has_scope)
			r->t.scope = scope;
	}
	long long *ids = arena_alloc(a, (r->njobs + 1) * sizeof(*ids));
	unsigned char *done = arena_alloc(a, r->njobs + 1);
	struct gm_job *left = arena_alloc(a, (r->njobs + 1) * sizeof(*left));
	assert_true(ids && done && left);
	for (size_t i = 0; i < r->njobs; i++)
		ids[i] = r->jobs[i].job_id;
	ok_store(st_jobs_done(db, ids, r->njobs, done), "st_jobs_done");
	size_t n = 0;
	for (size_t i = 0; i < r->njobs; i++)
		if (!done[i])
			left[n++] = r->jobs[i];
	r->jobs = left;
	r->njobs = n;
	ok_store(st_params_load(db, a, set), "st_params_load");
	ok_store(st_jobs_grid_load(db, r, a, grid), "st_jobs_grid_load");
}

static void worker_jobs(json_t *root, const struct scj_scenario *s,
			struct arena *a, struct wrecs *out)
{
	struct gm_grid g;
	store_grid(root, s->now, a, &g);
	ok_store(st_begin(db), "begin");
	struct gm_request r;
	struct prm_set set;
	load_request(root, a, &r, &set, &g);
	struct md_jobs m;
	ok_store(md_decide_jobs(&g, &r, &set, s->now, s->seed, a, &m),
		 "md_decide_jobs");
	keep(out, a, 0, rec_jobs(&m, NULL));
	st_rollback(db);
}

/* One job row of the jobs table, as the life cycle leaves it. */
struct jrow {
	long long job_id, task_id;
	const char *queue, *status, *gshare, *user, *group;
	int cores, priority;
	const char *sub_status;
	long long created, since, heartbeat, started, check_at; /* 0: NULL */
};

static void put_job(const struct jrow *j, long long now)
{
	struct row r = {.n = 0};
	row_ll(&r, j->job_id);
	row_ll(&r, j->task_id);
	row_str(&r, j->queue);
	row_str(&r, j->status);
	row_ll(&r, now);
	row_str(&r, j->gshare ? j->gshare : "");
	row_str(&r, j->user);
	row_str(&r, j->group);
	row_ll(&r, j->cores);
	row_ll(&r, j->priority);
	row_str(&r, j->sub_status ? j->sub_status : "");
	row_ll(&r, j->created);
	row_ll(&r, j->since);
	row_ll(&r, j->since);
	row_ll(&r, j->created);
	const long long *opt[] = {&j->heartbeat, &j->started, &j->check_at};
	for (size_t i = 0; i < 3; i++)
		if (*opt[i])
			row_ll(&r, *opt[i]);
		else
			row_str(&r, NULL);
	row_exec(raw,
		 "INSERT INTO jobs (job_id, task_id, request_id, queue, status, "
		 "nevents, input_mb, decision_id, updated_at, gshare, "
		 "user_name, working_group, cores, current_priority, "
		 "job_sub_status, created_at, status_since, status_time, "
		 "brokered_at, last_heartbeat, started_at, check_at) VALUES "
		 "(?, ?, '" REQ_ID "', ?, ?, 0, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, "
		 "?, ?, ?, ?, ?, ?)",
		 &r);
}

/* `n` job rows like `j` (ids from *next on). */
static void put_jobs(struct jrow j, double n, long long now, long long *next)
{
	for (long k = 0; k < lround(n); k++) {
		j.job_id = (*next)++;
		put_job(&j, now);
	}
}

static int whole(double x)
{
	return x >= 0 && x < 1e6 && x == floor(x);
}

static const struct gm_queue *grid_queue(const struct gm_grid *g,
					 const char *name)
{
	for (size_t i = 0; i < g->nqueues; i++)
		if (strcmp(g->queues[i].q.name, name) == 0)
			return &g->queues[i];
	return NULL;
}

/*
** The per-queue figures of st_analysis_state as job rows at `now`:
**   nqUser, nrUser  the owner's activated and running jobs (user_name, and
**                   working_group when the task names one), one core
**                   each, started before the trr window;
**   nUsers          other owners with one activated job each (the owner
**                   counts itself when it has jobs there);
**   trr             trr x 6 h finished jobs of another task started inside
**                   (now - 6 h, now];
**   taskFailed/Closed/Finished  the task's own jobs in that status since a
**                   minute ago.
** tot[0..2] grow by the owner's running and queued jobs written and its
** running jobs at hi-class queues (the hi-site slots the rows give).
*/
static void put_queue_load(const char *file, const struct sca_scenario *s,
			   const struct gm_analysis_queue *q,
			   const struct gm_grid *g, long long *next,
			   double tot[3])
{
	const struct gm_request *r = &s->job.req;
	long long now = s->job.now;
	double starts = q->trr * AN_TRR_WINDOW_H;
	const double v[] = {q->nq_user,	    q->nr_user,	    q->nusers, starts,
			    q->task_failed, q->task_closed, q->task_finished};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!whole(v[i]))
			CANNOT_HOLD(file, "analysis.queues[\"%s\"]: %g is no "
					  "number of job rows",
				    q->name, v[i]);
	int own = q->nq_user + q->nr_user > 0;
	if (q->nusers < own)
		CANNOT_HOLD(file, "analysis.queues[\"%s\"]: the owner has jobs "
				  "there but nUsers is 0",
			    q->name);
	const char *group = r->an.working_group;
	struct jrow j = {.task_id = AUX_TASK, .queue = q->name,
			 .gshare = r->t.gshare, .user = r->an.user,
			 .group = group && group[0] ? group : NULL, .cores = 1,
			 .created = now - 8 * H, .since = now - 7 * H,
			 .started = now - 7 * H};
	j.status = "activated";
	put_jobs(j, q->nq_user, now, next);
	j.status = "running";
	put_jobs(j, q->nr_user, now, next);
	char other[64];
	j.group = NULL;
	j.status = "activated";
	for (long k = 0; k < lround(q->nusers) - own; k++) {
		snprintf(other, sizeof(other), "itc-paths-user-%ld", k);
		j.user = other;
		put_jobs(j, 1, now, next);
	}
	j.user = NULL;
	j.status = "finished";
	j.since = j.started = now - 60;
	put_jobs(j, starts, now, next);
	j.task_id = r->t.task_id;
	j.started = 0;
	const char *const fin[] = {"failed", "closed", "finished"};
	const double nfin[] = {q->task_failed, q->task_closed,
			       q->task_finished};
	for (size_t i = 0; i < 3; i++) {
		j.status = fin[i];
		put_jobs(j, nfin[i], now, next);
	}
	const struct gm_queue *gq = grid_queue(g, q->name);
	assert_non_null(gq);
	tot[0] += q->nr_user;
	tot[1] += q->nq_user;
	tot[2] += gq->site_class == AN_SITE_HI ? q->nr_user : 0;
}

/*
** AJ-11's grid-wide counts of the task's gshare: st_analysis_state sums
** every queue_counts row of the gshare, and the grid saved the queues'
** rows; what the scenario's gridQueued/gridRunning add beyond them is one
** more row, of a queue not in the grid (the rest of the grid, which
** counts there and nowhere else).
*/
static void put_grid_rest(const char *file, const struct sca_scenario *s,
			  const struct gm_grid *g)
{
	const char *gs = s->job.req.t.gshare;
	double nq = 0, nr = 0;
	for (size_t i = 0; i < g->nqueues; i++)
		for (size_t j = 0; j < g->queues[i].ncounts; j++) {
			const struct gm_counts *k = &g->queues[i].counts[j];
			if (strcmp(k->gshare, gs) != 0)
				continue;
			nq += k->k.defined + k->k.assigned + k->k.activated +
			      k->k.starting;
			nr += k->k.running;
		}
	double rq = s->state.grid_queued - nq, rr = s->state.grid_running - nr;
	if (rq < 0 || rr < 0 || nq + rq != s->state.grid_queued ||
	    nr + rr != s->state.grid_running)
		CANNOT_HOLD(file, "analysis.gridQueued/gridRunning (%g, %g) "
				  "are not the queues' counts of %s (%g, %g) "
				  "plus a rest of the grid",
			    s->state.grid_queued, s->state.grid_running, gs,
			    nq, nr);
	if (rq == 0 && rr == 0)
		return;
	struct row r = {.n = 0};
	row_str(&r, "itc-paths-rest-of-grid");
	row_str(&r, gs);
	row_dbl(&r, rq);
	row_dbl(&r, rr);
	row_exec(raw,
		 "INSERT INTO queue_counts (queue, gshare, defined, running) "
		 "VALUES (?, ?, ?, ?)",
		 &r);
}

/*
** Everything st_analysis_state reads for the scenario's owner: the job
** rows above, then what they do not account for in the analysis_owners
** row(s), the User Analysis share and the task's class, saved as `grid
** load` saves a grid file's analysis section (st_analysis_save).
*/
static void store_analysis(const char *file, const struct sca_scenario *s,
			   const struct gm_grid *g)
{
	const struct gm_request *r = &s->job.req;
	const struct an_user_load *u = &s->state.user;
	const char *group = r->an.working_group;
	int is_group = group && group[0];
	if (u->working_group != is_group)
		CANNOT_HOLD(file, "analysis.owner.workingGroup is %s but the "
				  "task %s a workingGroup (the store counts "
				  "the group's jobs exactly when it does)",
			    u->working_group ? "true" : "false",
			    is_group ? "names" : "names no");
	put_grid_rest(file, s, g);
	long long next = AUX_JOB;
	double tot[3] = {0, 0, 0}; /* running, queued, running at hi */
	for (size_t i = 0; i < s->state.nqueues; i++)
		put_queue_load(file, s, &s->state.queues[i], g, &next, tot);
	/* The row holds what the jobs table does not: one core per job. */
	struct gm_owner own[2] = {
		{.name = r->an.user, .quota_gb = NAN},
		{.name = group, .is_group = 1, .quota_gb = NAN},
	};
	struct gm_owner *load = &own[is_group];
	load->running_jobs = u->running_jobs - tot[0];
	load->queued_jobs = u->queued_jobs - tot[1];
	load->running_cores = u->running_cores - tot[0];
	load->queued_cores = u->queued_cores - tot[1];
	own[0].hi_site_slots = u->hi_site_slots - tot[2];
	if (u->quota_exceeded) {
		own[0].quota_used_gb = 1;
		own[0].quota_gb = 0;
	}
	const char *what[] = {"runningJobs", "queuedJobs", "runningCores",
			      "queuedCores"};
	const double row[] = {load->running_jobs, load->queued_jobs,
			      load->running_cores, load->queued_cores};
	for (size_t i = 0; i < 4; i++)
		if (row[i] < 0)
			CANNOT_HOLD(file, "analysis.owner.%s is %g less than "
					  "the owner's jobs at the queues "
					  "(analysis.queues); the store counts "
					  "those jobs in the owner's load",
				    what[i], -row[i]);
	if (own[0].hi_site_slots < 0)
		CANNOT_HOLD(file, "analysis.owner.hiSiteSlots is less than the "
				  "owner's running jobs at hi-class queues");
	/* AJ-04's share: a row for User Analysis only, with a target. */
	int ua = strcmp(r->t.gshare, "User Analysis") == 0;
	struct gm_share share = {r->t.gshare, u->share_target, u->share_usage};
	int has_share = ua && u->share_target > 0;
	if (!has_share && (u->share_target != 0 || u->share_usage != 0))
		CANNOT_HOLD(file, "analysis.owner.shareUsage/shareTarget are "
				  "only read for gshare \"User Analysis\" "
				  "with a target > 0");
	const struct gm_task_class cls = {r->t.task_id, s->task_class};
	const struct gm_analysis_grid ag = {own, 1u + (unsigned)is_group,
					    &share, has_share ? 1u : 0u,
					    &cls, 1};
	ok_store(st_analysis_save(db, &ag, s->job.now), "st_analysis_save");
}

static void worker_analysis(const char *file, json_t *root,
			    const struct sca_scenario *s, struct arena *a,
			    struct wrecs *out)
{
	struct gm_grid g;
	store_grid(root, s->job.now, a, &g);
	store_analysis(file, s, &g);
	ok_store(st_begin(db), "begin");
	struct gm_request r;
	struct prm_set set;
	load_request(root, a, &r, &set, &g);
	struct gm_analysis_state st;
	enum an_task_class tclass = AN_CLASS_B;
	ok_store(st_analysis_state(db, &r, &set, s->job.now, a, &st, &tclass),
		 "st_analysis_state");
	st.user.task_class = tclass;
	struct md_analysis m;
	ok_store(md_decide_analysis(&g, &r, &st, tclass, &set, s->job.now,
				    s->job.seed, a, &m),
		 "md_decide_analysis");
	keep(out, a, 0, rec_analysis(&m, NULL));
	st_rollback(db);
}

/* ---- pilot match --------------------------------------------------------- */

static int tq_by_id(const void *x, const void *y)
{
	const struct scm_tq *p = *(const struct scm_tq *const *)x;
	const struct scm_tq *q = *(const struct scm_tq *const *)y;
	return p->tq_id < q->tq_id ? -1 : p->tq_id > q->tq_id;
}

/*
** job.submit of every TQ's jobs, one TQ after the other in id order (a
** fresh store numbers them so); a TQ without jobs gets one that is then
** claimed, as when its jobs were matched.
*/
static void store_tqs(const char *file, const struct scm_scenario *s,
		      const long long *seg, size_t nseg, struct arena *a)
{
	const struct scm_tq **by = arena_alloc(a, (s->ntqs + 1) * sizeof(*by));
	assert_non_null(by);
	for (size_t i = 0; i < s->ntqs; i++)
		by[i] = &s->tqs[i];
	qsort(by, s->ntqs, sizeof(*by), tq_by_id);
	for (size_t i = 0; i < s->ntqs; i++) {
		const struct scm_tq *t = by[i];
		size_t n = t->njobs ? t->njobs : 1;
		struct cdt_job *jobs = arena_alloc(a, n * sizeof(*jobs));
		assert_non_null(jobs);
		for (size_t k = 0; k < n; k++) {
			jobs[k] = t->def;
			jobs[k].job_id = t->njobs ? t->jobs[k].job_id
						  : EMPTY_TQ_JOB + t->tq_id;
			jobs[k].user_priority =
				t->njobs ? t->jobs[k].user_priority : 1;
		}
		struct cdt_submit sub = {jobs, n}, got;
		wire(W_SUBMIT, &sub, &got, a);
		struct st_tq_submitted res;
		ok_store(st_begin(db), "begin");
		ok_store(st_tq_submit(db, got.jobs, got.njobs, seg, nseg,
				      REQ_ID, s->now, a, &res),
			 "st_tq_submit");
		if (res.new_tqs != 1 || res.tq_of[0] != t->tq_id)
			CANNOT_HOLD(file, "the store numbers task queues 1, "
					  "2, 3... as they are created; "
					  "taskQueues[] id %lld became %lld",
				    t->tq_id, res.tq_of[0]);
		int claimed = 0;
		if (t->njobs == 0)
			ok_store(st_tq_claim(db, &jobs[0].job_id, 1, &claimed),
				 "st_tq_claim");
		assert_true(t->njobs > 0 || claimed);
		ok_store(st_commit(db), "commit");
	}
}

/* The history where st_tq_history_sample writes it. */
static void store_history(const struct scm_scenario *s)
{
	for (size_t i = 0; i < s->nhist; i++) {
		struct row r = {.n = 0};
		row_ll(&r, s->hist[i].t);
		row_str(&r, s->hist[i].group);
		row_str(&r, s->hist[i].owner ? s->hist[i].owner : "");
		row_dbl(&r, s->hist[i].running);
		row_exec(raw,
			 "INSERT INTO wms_history (t, owner_group, owner, "
			 "running) VALUES (?, ?, ?, ?)",
			 &r);
	}
}

/* route_tq.c's recompute on the leader: the priorities stored (or the
** scenario's own, which a worker's index held). */
static void store_priorities(const struct scm_scenario *s,
			     const struct pr_config *pc, struct arena *a)
{
	struct tqi_index *x = tqi_new();
	struct wk_tqs_state sync = {0};
	assert_non_null(x);
	ok_store(wk_tqs_load(db, x, &sync, NULL), "wk_tqs_load");
	size_t n = tqi_ntqs(x);
	struct pr_tq *tqs = arena_alloc(a, (n + 1) * sizeof(*tqs));
	assert_non_null(tqs);
	long long span = 0;
	for (size_t i = 0; i < pc->ninst; i++)
		for (size_t k = 0; k < pc->inst[i].nslices; k++)
			if (pc->inst[i].slices[k].timespan > span)
				span = pc->inst[i].slices[k].timespan;
	struct pr_sample *hist = NULL;
	size_t nhist = 0;
	if (pc->corrections && span > 0)
		ok_store(st_tq_history_load(db, s->now - span, a, &hist,
					    &nhist),
			 "st_tq_history_load");
	char note[512] = "";
	ok_store(md_priorities(x, pc, hist, nhist, s->now, tqs, note,
			       sizeof(note)),
		 "md_priorities");
	for (size_t i = 0; i < n && s->ntqs && s->tqs[0].has_priority; i++)
		for (size_t k = 0; k < s->ntqs; k++)
			if (s->tqs[k].tq_id == tqs[i].tq_id)
				tqs[i].priority = s->tqs[k].priority;
	long long dirty = 0, seen = 0, at = 0, version = 0;
	ok_store(st_tq_prio_state(db, &dirty, &seen, &at, &version),
		 "st_tq_prio_state");
	ok_store(st_tq_prio_save(db, tqs, n, dirty, s->now), "st_tq_prio_save");
	tqi_free(x);
}

static void worker_match(const char *file, json_t *root,
			 const struct scm_scenario *s, struct arena *a,
			 struct wrecs *out)
{
	char err[1024] = "";
	struct dj_config dc;
	ok_parse(dj_parse_config(root, a, &dc, err, sizeof(err)), err);
	ok_store(st_tq_config_save(db, &dc.pr, dc.seg, dc.nseg, s->now),
		 "st_tq_config_save");
	/* What wk_tq_config holds. */
	struct pr_config pcfg;
	long long *seg = NULL;
	size_t nseg = 0;
	ok_store(st_tq_config_load(db, a, &pcfg, &seg, &nseg),
		 "st_tq_config_load");
	store_tqs(file, s, seg, nseg, a);
	store_history(s);
	store_priorities(s, &pcfg, a);

	/* A worker's index, loaded after the leader saved. */
	struct tqi_index *x = tqi_new();
	struct wk_tqs_state sync = {0};
	assert_non_null(x);
	ok_store(wk_tqs_load(db, x, &sync, NULL), "wk_tqs_load");
	struct cdt_pilot sent, p;
	ok_parse(dj_parse_pilot(json_object_get(root, "pilot"), "pilot", a,
				&sent, err, sizeof(err)),
		 err);
	if (sent.pilot_id == NULL)
		CANNOT_HOLD(file, "pilot.match needs a pilotID");
	wire(W_PILOT, &sent, &p, a);
	/* The pilot as route_match.c's enqueue hands it to the match. */
	const struct md_pilot mp = {.site = p.site, .d = p.d};
	double *w = arena_alloc(a, (tqi_ntqs(x) + 1) * sizeof(*w));
	assert_non_null(w);
	struct md_match m;
	ok_store(md_match_pilot(x, &pcfg, &mp, s->seed, w, NULL, &m),
		 "md_match_pilot");
	/* route_match.c: the pick is claimed, then recorded. */
	int claimed = 0;
	ok_store(st_begin(db), "begin");
	if (m.result.chosen >= 0)
		ok_store(st_tq_claim(db, &m.job_id, 1, &claimed),
			 "st_tq_claim");
	st_rollback(db);
	assert_int_equal(claimed, m.result.chosen >= 0);
	const struct rec_pilot rp = {
		.pilot_id = p.pilot_id,
		.p = mp,
		.job_sharing = m.job_sharing > 0,
		.res = &m.result,
		.matched = claimed,
		.code = claimed ? "matched" : m.code,
		.reason = m.reason,
		.tq_id = m.tq_id,
		.job_id = m.job_id,
		.user_priority = m.user_priority,
		.tq_cpu = m.tq_cpu,
		.owner_dn = m.owner,
		.tq_owner_group = m.owner_group,
	};
	keep(out, a, 0, rec_match(&rp, NULL));
	tqi_free(x);
}

/* ---- timeouts ------------------------------------------------------------ */

/* The queues as a grid file's queues (status, lastStartAge and the 0005
** timeout attributes), loaded as `grid load` loads them. */
static void store_timeout_queues(const char *file,
				 const struct sct_scenario *s, struct arena *a)
{
	json_t *root = json_object(), *qs = json_array();
	assert_true(root && qs && json_object_set_new(root, "queues", qs) == 0);
	for (size_t i = 0; i < s->nqueues; i++) {
		const struct sct_queue *q = &s->queues[i];
		if (q->q.last_start > s->now)
			CANNOT_HOLD(file, "queues[\"%s\"].lastStart is after "
					  "now",
				    q->name);
		json_t *o = json_pack(
			"{s:s, s:s, s:s, s:{s:s, s:f}, s:b, s:f, s:f, s:s, "
			"s:o}",
			"name", q->name, "status", q->status, "site", q->name,
			"storage", "name", q->name, "spaceFree", 0.0,
			"disableReassign", q->q.disable_reassign,
			"transtimehi", q->q.transtimehi, "transtimelo",
			q->q.transtimelo, "workflow", q->workflow,
			"lastStartAge",
			q->q.last_start ? json_integer(s->now - q->q.last_start)
					: json_null());
		assert_true(o && json_array_append_new(qs, o) == 0);
	}
	struct gm_grid g;
	store_grid(root, s->now, a, &g);
	json_decref(root);
}

static void worker_timeout(const char *file, const struct sct_scenario *s,
			   struct arena *a, struct wrecs *out)
{
	store_timeout_queues(file, s, a);
	/* A job waiting for a queue has none (jobs.ck_jobs_queue). */
	char bad[512] = "";
	for (size_t i = 0; i < s->njobs; i++) {
		const struct sct_job *j = &s->jobs[i];
		size_t l = strlen(bad);
		if ((j->j.status == TO_ST_PENDING ||
		     j->j.status == TO_ST_THROTTLED) && j->queue)
			snprintf(bad + l, sizeof(bad) - l, " %lld (%s at %s)",
				 j->j.job_id, to_status_name(j->j.status),
				 j->queue);
	}
	if (bad[0])
		CANNOT_HOLD(file, "a pending or throttled job has no queue "
				  "(jobs.ck_jobs_queue), but these have one:%s",
			    bad);
	for (size_t i = 0; i < s->njobs; i++) {
		const struct sct_job *j = &s->jobs[i];
		const struct jrow r = {
			.job_id = j->j.job_id,
			.task_id = j->task_id,
			.queue = j->queue,
			.status = to_status_name(j->j.status),
			.gshare = j->gshare,
			.priority = j->j.current_priority,
			.sub_status = j->sub_status,
			.cores = 1,
			.created = j->j.created_at,
			.since = j->j.status_since,
			.heartbeat = j->j.last_heartbeat,
			.check_at = s->now,
		};
		put_job(&r, s->now);
	}
	/* route_panda.c's scan, without applying the verdicts. */
	ok_store(st_begin(db), "begin");
	struct prm_set set;
	ok_store(st_params_load(db, a, &set), "st_params_load");
	struct sp_job *jobs = NULL;
	size_t n = 0;
	ok_store(st_panda_due(db, s->now, s->njobs + 1, a, &jobs, &n),
		 "st_panda_due");
	assert_int_equal(n, s->njobs);
	for (size_t i = 0; i < n; i++) {
		const struct sp_job *j = &jobs[i];
		struct md_timeout m;
		ok_store(md_timeout(&j->j, j->has_queue_row ? &j->q : NULL,
				    &set, s->now, &m),
			 "md_timeout");
		if (!m.fired)
			continue;
		/* route_panda.c's record of a fired rule (TO-13 aside). */
		const struct cdp_timeout_event ev = {
			.job_id = j->j.job_id, .task_id = j->task_id,
			.queue = j->queue, .gshare = j->gshare,
			.status = j->j.status, .v = &m.v};
		keep(out, a, j->j.job_id, rec_timeout(&ev, NULL, NULL, NULL));
	}
	st_rollback(db);
}

/* ---- comparing ----------------------------------------------------------- */

/*
** The first place where x and y differ: its path in `path` (appended),
** the two values in *dx and *dy. Returns 0 when they are equal.
*/
static int first_diff(json_t *x, json_t *y, char *path, size_t len,
		      json_t **dx, json_t **dy)
{
	size_t l = strlen(path);
	*dx = x;
	*dy = y;
	if (x == NULL || y == NULL || json_typeof(x) != json_typeof(y))
		return 1;
	if (json_is_object(x)) {
		const char *k;
		json_t *v;
		json_object_foreach(x, k, v) {
			snprintf(path + l, len - l, ".%s", k);
			if (first_diff(v, json_object_get(y, k), path, len, dx,
				       dy))
				return 1;
		}
		json_object_foreach(y, k, v) {
			snprintf(path + l, len - l, ".%s", k);
			if (json_object_get(x, k) == NULL)
				return first_diff(NULL, v, path, len, dx, dy);
		}
	} else if (json_is_array(x)) {
		size_t n = json_array_size(x);
		for (size_t i = 0; i <= n; i++) {
			snprintf(path + l, len - l, "[%zu]", i);
			json_t *a = json_array_get(x, i), *b = json_array_get(y, i);
			if ((a || b) && first_diff(a, b, path, len, dx, dy))
				return 1;
		}
		if (json_array_size(y) > n)
			return 1;
	} else if (!json_equal(x, y)) {
		return 1;
	}
	path[l] = '\0';
	return 0;
}

static const char *digest_of(const char *text, char out[65])
{
	json_error_t je;
	json_t *r = json_loads(text, 0, &je);
	json_t *d = json_object_get(json_object_get(r, "record"), "digest");
	snprintf(out, 65, "%s", json_is_string(d) ? json_string_value(d) : "");
	json_decref(r);
	if (out[0] == '\0')
		fail_msg("a record without record.digest: %.200s", text);
	return out;
}

/* Add to `msg` where the two records differ (the record block aside). */
static void explain_diff(const char *ex, const char *wk, char *msg,
			 size_t len)
{
	json_t *x = json_loads(ex, 0, NULL), *y = json_loads(wk, 0, NULL);
	json_object_del(x, "record");
	json_object_del(y, "record");
	char path[512] = "";
	json_t *dx = NULL, *dy = NULL;
	if (first_diff(x, y, path, sizeof(path), &dx, &dy)) {
		char *a = dx ? json_dumps(dx, JSON_COMPACT | JSON_ENCODE_ANY)
			     : NULL;
		char *b = dy ? json_dumps(dy, JSON_COMPACT | JSON_ENCODE_ANY)
			     : NULL;
		size_t l = strlen(msg);
		snprintf(msg + l, len - l,
			 "\n    first difference at %s: explain %.160s, "
			 "worker %.160s",
			 path, a ? a : "(absent)", b ? b : "(absent)");
		free(a);
		free(b);
	}
	json_decref(x);
	json_decref(y);
}

/*
** Why a difference may be the order: the store keeps none, and the worker
** loads nuclei (st_tb_state) and queues (st_jobs_grid_load) by name, while
** explain keeps the file's order; candidates are recorded in that order
** and the weighted draws walk it. A note naming the first entry out of
** name order, or "" when the file has none.
*/
static void order_note(json_t *root, char *note, size_t len)
{
	static const char *const keys[] = {"nuclei", "queues"};
	note[0] = '\0';
	for (size_t k = 0; k < 2 && note[0] == '\0'; k++) {
		json_t *arr = json_object_get(root, keys[k]);
		for (size_t i = 1; json_is_array(arr) && i < json_array_size(arr);
		     i++) {
			const char *p = json_string_value(json_object_get(
				json_array_get(arr, i - 1), "name"));
			const char *q = json_string_value(json_object_get(
				json_array_get(arr, i), "name"));
			if (p && q && strcmp(p, q) > 0) {
				snprintf(note, len,
					 "\n  a possible cause: %s[%zu] \"%s\" "
					 "comes after \"%s\"; the worker loads "
					 "%s by name, explain keeps the file's "
					 "order",
					 keys[k], i, q, p, keys[k]);
				break;
			}
		}
	}
}

/*
** Every record of explain's has a worker record with the same digest
** (timeout: the same job), and the worker made no other. Fails naming
** the file and both digests of each difference.
*/
static void compare(const char *file, const struct ex_result *ex,
		    const struct wrecs *w, const char *note)
{
	static char msg[16384];
	size_t bad = 0;
	msg[0] = '\0';
	unsigned char *used = calloc(w->n + 1, 1);
	assert_non_null(used);
	for (size_t i = 0; i < ex->nrecords; i++) {
		const struct ex_record *e = &ex->records[i];
		size_t k = 0;
		while (k < w->n && (used[k] || w->v[k].job_id != e->job_id))
			k++;
		char de[65], dw[65] = "(no record)";
		digest_of(e->text, de);
		if (k < w->n) {
			used[k] = 1;
			digest_of(w->v[k].text, dw);
		}
		if (strcmp(de, dw) == 0)
			continue;
		bad++;
		size_t l = strlen(msg);
		snprintf(msg + l, sizeof(msg) - l,
			 "\n  %s %s: explain %s, worker %s",
			 ex_kind_name(ex->kind), e->subject, de, dw);
		if (k < w->n)
			explain_diff(e->text, w->v[k].text, msg, sizeof(msg));
	}
	for (size_t k = 0; k < w->n; k++) {
		if (used[k])
			continue;
		bad++;
		size_t l = strlen(msg);
		snprintf(msg + l, sizeof(msg) - l,
			 "\n  %s job %lld: explain (no record), worker %.64s",
			 ex_kind_name(ex->kind), w->v[k].job_id,
			 digest_of(w->v[k].text, (char[65]){0}));
	}
	free(used);
	if (bad)
		fail_msg("%s: %zu record digest(s) differ between explain and "
			 "the worker's path:%s%s",
			 file, bad, msg, note);
}

/* ---- the test of one file ------------------------------------------------ */

static void test_scenario(void **state)
{
	const char *path = *state;
	const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char err[1024] = "";
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct ex_result *ex = arena_alloc(&a, sizeof(*ex));
	assert_non_null(ex);
	if (ex_run(root, &a, ex, err, sizeof(err)) != GB_OK)
		fail_msg("%s: explain: %s", file, err);
	kinds_seen[ex->kind]++;

	wipe();
	store_params(root, &a);
	struct wrecs *w = arena_alloc(&a, sizeof(*w));
	assert_non_null(w);
	switch (ex->kind) {
	case EX_TASK:
		worker_task(root, &ex->in.task, &a, w);
		break;
	case EX_JOBS:
		worker_jobs(root, &ex->in.jobs, &a, w);
		break;
	case EX_ANALYSIS:
		worker_analysis(file, root, &ex->in.analysis, &a, w);
		break;
	case EX_MATCH:
		worker_match(file, root, &ex->in.match, &a, w);
		break;
	case EX_TIMEOUT:
		worker_timeout(file, &ex->in.timeout, &a, w);
		break;
	}
	char note[512];
	order_note(root, note, sizeof(note));
	compare(file, ex, w, note);
	print_message("%s: %zu record(s), the same digests\n", file,
		      ex->nrecords);
	json_decref(root);
	arena_free(&a);
}

/* The files did cover every kind: a directory that lost its match or
** timeout scenarios would otherwise pass by testing nothing of them. */
static void test_every_kind_compared(void **state)
{
	(void)state;
	for (int k = EX_TASK; k <= EX_TIMEOUT; k++)
		if (kinds_seen[k] == 0)
			fail_msg("no %s scenario in %s",
				 ex_kind_name((enum ex_kind)k), SCN_DIR);
}

static int by_name(const void *x, const void *y)
{
	return strcmp(x, y);
}

int main(void)
{
	static char paths[MAX_FILES][1024];
	static struct CMUnitTest tests[MAX_FILES + 1];
	size_t n = 0;
	DIR *d = opendir(SCN_DIR);
	if (d == NULL) {
		fprintf(stderr, "itc_decision_paths: %s: cannot open\n",
			SCN_DIR);
		return 1;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL && n < MAX_FILES;) {
		size_t l = strlen(e->d_name);
		if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0 &&
		    snprintf(paths[n], sizeof(paths[n]), "%s/%s", SCN_DIR,
			     e->d_name) < (int)sizeof(paths[n]))
			n++;
	}
	closedir(d);
	qsort(paths, n, sizeof(paths[0]), by_name);
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct CMUnitTest){
			.name = strrchr(paths[i], '/') + 1,
			.test_func = test_scenario,
			.teardown_func = test_teardown,
			.initial_state = paths[i],
		};
	tests[n] = (struct CMUnitTest){
		.name = "every kind compared",
		.test_func = test_every_kind_compared,
	};
	/* cmocka_run_group_tests wants an array of fixed size; the files
	** are known only now, so call what that macro expands to. */
	return _cmocka_run_group_tests("itc_decision_paths", tests, n + 1,
				       group_setup, group_teardown);
}
