/*
** route_jobs.c — job.broker: place a task's jobs on queues, production
** (PJ-*, RC-*, NW-*) or analysis (AJ-01..AJ-28), as the request's
** taskType says.
**
** Inside the runner's transaction: complete the request from the task
** record (nucleus, gshare, scope), drop the jobs that already have a
** queue, load the grid for this task (queues with the task's gshare
** counts, links to its nucleus, the replicas of its input), decide
** (md_decide_jobs, or md_decide_analysis with the owner's load), record
** the decision, the jobs' queues and the counts they move, and queue the
** event: jobs.assigned, jobs.pending, or task.throttled when the analysis
** throttle held the task (its jobs wait as throttled, no queue is looked
** at, and the request is due again in 20 minutes).
**
** Jobs no queue could take stay pending and their request row is due again
** (an hour, 20 minutes for analysis); the retry hook re-decodes the stored
** request, drops the jobs placed meanwhile and decides the rest, so no job
** is forgotten.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "gb_error.h"
#include "model/decide.h"
#include "explain/scenario_write.h"
#include "pipeline/dump.h"
#include "pipeline/pipeline_internal.h"
#include "report/record.h"
#include "store/store_analysis.h"
#include "store/store_jobs.h"

/* A decoded job.broker request. */
struct wk_jobs_req {
	struct gm_request req;
	struct cdj_extra extra;
	const void *body; /* the message, stored with the request row */
	size_t len;
};

/*
** Fill what the request left to the task record (nucleus, gshare, the
** FC-06 scope; a request naming nucleus and gshare of a task the store
** does not know keeps the default scope, satellites) and drop the jobs
** that already have a queue (a retried or re-sent request). Returns 0,
** GB_ENOTFOUND (task unknown or not placed) or a store error; *left gets
** the number of jobs still to place.
*/
static int complete_request(struct wk_txn *t, struct gm_request *r,
			    int has_scope, size_t *left)
{
	struct st_db *db = t->w->db;
	if (r->an.is_analysis) {
		/* Analysis tasks have no nucleus (no links are read), and
		** their jobs count in the User Analysis share by default. */
		if (r->t.nucleus == NULL)
			r->t.nucleus = "";
		if (r->t.gshare == NULL)
			r->t.gshare = "User Analysis";
	} else if (r->t.nucleus == NULL || r->t.gshare == NULL || !has_scope) {
		const char *nucleus = NULL, *gshare = NULL;
		enum tb_job_scope scope = TB_SCOPE_SATELLITES;
		int rc = st_jobs_task_info(db, r->t.task_id, t->a, &nucleus,
					   &gshare, &scope);
		/* A request that names its nucleus and gshare does not need
		** the task record; without one the scope is the default. */
		if (rc == GB_ENOTFOUND && r->t.nucleus && r->t.gshare)
			rc = GB_OK;
		if (rc != GB_OK)
			return rc;
		if (r->t.nucleus == NULL)
			r->t.nucleus = nucleus;
		if (r->t.gshare == NULL)
			r->t.gshare = gshare;
		if (!has_scope)
			r->t.scope = scope;
	}
	size_t nj = r->njobs ? r->njobs : 1;
	long long *ids = arena_alloc(t->a, nj * sizeof(*ids));
	unsigned char *done = arena_alloc(t->a, nj);
	struct gm_job *keep = arena_alloc(t->a, nj * sizeof(*keep));
	if (ids == NULL || done == NULL || keep == NULL)
		return GB_ETOOBIG;
	for (size_t i = 0; i < r->njobs; i++)
		ids[i] = r->jobs[i].job_id;
	int rc = st_jobs_done(db, ids, r->njobs, done);
	if (rc != GB_OK)
		return rc;
	size_t n = 0;
	for (size_t i = 0; i < r->njobs; i++)
		if (!done[i])
			keep[n++] = r->jobs[i];
	r->jobs = keep;
	r->njobs = n;
	*left = n;
	return GB_OK;
}

/* Queue jobs.assigned or jobs.pending for a decision of either brokerage. */
static int jobs_event(struct wk_txn *t, const struct gm_request *r,
		      const struct jb_queue *queues,
		      const struct dec_decision *dec,
		      const struct jb_plan *plan, long long decision_id,
		      const char *request_id, long long retry_at)
{
	const char *event = dec->outcome == DEC_ASSIGNED ? "jobs.assigned"
							 : "jobs.pending";
	struct cdj_event ev = {
		.event = event,
		.decision_id = decision_id,
		.request_id = request_id,
		.req = r,
		.queues = queues,
		.dec = dec,
		.plan = plan,
		.decided_at = t->now,
		.retry_at = retry_at,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdj_encode_event(&ev, &sb);
	if (rc == GB_OK)
		rc = wk_txn_event(t, event, decision_id, request_id, &sb);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* After the commit, the line of a job decision of either brokerage. */
static void jobs_decided(struct wk_txn *t, const char *what,
			 const char *request_id, long long task_id,
			 const struct dec_decision *dec,
			 const struct jb_plan *plan, size_t nj, size_t nq,
			 int retry_s, const char *extra, long long decision_id)
{
	if (dec->outcome == DEC_ASSIGNED)
		wk_txn_decided(t, request_id, task_id, MX_O_ASSIGNED,
			       "%s %lld: %zu of %zu jobs placed on %zu best "
			       "queue(s), first %s%s (%zu queues) decision %lld "
			       "request %s",
			       what, task_id, plan->nassigned, nj, plan->nbest,
			       dec->cands[plan->best[0]].name, extra, nq,
			       decision_id, request_id);
	else
		wk_txn_decided(t, request_id, task_id, MX_O_PENDING,
			       "%s %lld: %zu jobs pending, retry in %d s (no "
			       "queue of %zu eligible) decision %lld request %s",
			       what, task_id, nj, retry_s, nq, decision_id,
			       request_id);
}

/* Queue task.throttled for an analysis task the throttle held. */
static int throttled_event(struct wk_txn *t, const struct md_analysis *m,
			   const struct gm_analysis_state *st,
			   long long decision_id, const char *request_id)
{
	const struct gm_request *r = &m->req;
	const struct cdp_throttled_event ev = {
		.decision_id = decision_id,
		.request_id = request_id,
		.task_id = r->t.task_id,
		.gshare = r->t.gshare,
		.user = r->an.user,
		.working_group = r->an.working_group,
		.task_class = m->task_class,
		.load = &st->user,
		.th = &m->throttle,
		.decided_at = t->now,
		.retry_at = m->retry_at,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdp_encode_throttled(&ev, &sb);
	if (rc == GB_OK)
		rc = wk_txn_event(t, "task.throttled", decision_id, request_id,
				  &sb);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* The analysis brokerage of `r` (completed), inside the transaction. */
static int decide_analysis(struct wk_txn *t, const struct gm_request *r,
			   const struct gm_grid *grid,
			   const struct prm_set *set, const char *request_id,
			   uint64_t seed, const void *body, size_t len)
{
	struct wk_worker *w = t->w;
	struct gm_analysis_state st;
	enum an_task_class tclass = AN_CLASS_B;
	int rc = st_analysis_state(w->db, r, set, t->now, t->a, &st, &tclass);
	if (rc != GB_OK)
		return rc;
	st.user.task_class = tclass;
	if (!st.user.user_analysis && r->t.gshare &&
	    strcmp(r->t.gshare, "User Analysis") == 0)
		log_debug("task %lld: no share_usage row for User Analysis; "
			  "the share throttle (AJ-04) does not apply",
			  r->t.task_id);
	struct md_analysis m;
	rc = md_decide_analysis(grid, r, &st, tclass, set, t->now, seed, t->a,
				&m);
	if (rc != GB_OK)
		return rc;
	int throttled = m.throttle.throttled;
	if (!throttled)
		mx_wk_decision(&m.dec);
	char *record = rec_analysis(&m, NULL);
	long long decision_id = 0;
	rc = st_jobs_decide(w->db, &m.req, m.queues, &m.dec, &m.plan,
			    request_id, body, len, t->now, m.retry_at,
			    record ? record : "{}", set, throttled,
			    &decision_id);
	if (rc == GB_OK && wk_dumping(w))
		rc = wk_txn_dump(t, "analysis", decision_id, record,
				 scw_analysis(t->now, seed, set, grid, r, &st,
					      tclass));
	free(record);
	if (rc != GB_OK)
		return rc;
	size_t nj = m.req.njobs;
	if (throttled) {
		const struct an_throttle *th = &m.throttle;
		rc = throttled_event(t, &m, &st, decision_id, request_id);
		if (rc != GB_OK)
			return rc;
		wk_txn_decided(t, request_id, r->t.task_id, MX_O_THROTTLED,
			       "analysis task %lld of %s throttled: %s %s %g > "
			       "%g; %zu jobs wait, retry in %d s (decision "
			       "%lld request %s)",
			       r->t.task_id, r->an.user ? r->an.user : "?",
			       th->rule, th->code, th->value, th->limit, nj,
			       AB_PENDING_RETRY_S, decision_id, request_id);
		return GB_OK;
	}
	rc = jobs_event(t, &m.req, m.queues, &m.dec, &m.plan, decision_id,
			request_id, m.retry_at);
	if (rc != GB_OK)
		return rc;
	jobs_decided(t, "analysis task", request_id, r->t.task_id, &m.dec,
		     &m.plan, nj, m.nqueues, AB_PENDING_RETRY_S,
		     m.aplan.locality_dropped
			     ? ", locality check dropped (AJ-28)"
			     : "",
		     decision_id);
	return GB_OK;
}

/*
** Inside the transaction: decide the request's jobs and record everything.
** `request_id` names the request row (the original message id also on
** retries, so the same row is updated); `seed_ref` seeds the draws.
*/
static int decide_jobs(struct wk_txn *t, const struct gm_request *r,
		       const char *request_id, const char *seed_ref,
		       const void *body, size_t len)
{
	struct wk_worker *w = t->w;
	/* Before any count is read: job decisions are taken one
	** transaction at a time (0010_broker_lock.sql), so no two pass a
	** queue's cap together, whatever the group commit holds. */
	if (!t->jobs_locked) {
		int lrc = st_jobs_lock(w->db, t->now);
		if (lrc != GB_OK)
			return lrc;
		t->jobs_locked = 1;
	}
	struct prm_set set;
	int rc = wk_txn_params(t, &set);
	if (rc != GB_OK)
		return rc;
	struct gm_grid grid;
	rc = st_jobs_grid_load(w->db, r, t->a, &grid);
	if (rc != GB_OK)
		return rc;
	uint64_t seed = wk_seed(w, seed_ref, t->now);
	if (r->an.is_analysis)
		return decide_analysis(t, r, &grid, &set, request_id, seed,
				       body, len);
	struct md_jobs m;
	rc = md_decide_jobs(&grid, r, &set, t->now, seed, t->a, &m);
	if (rc != GB_OK)
		return rc;
	mx_wk_decision(&m.dec);
	char *record = rec_jobs(&m, NULL);
	long long decision_id = 0;
	rc = st_jobs_decide(w->db, &m.req, m.queues, &m.dec, &m.plan,
			    request_id, body, len, t->now, m.retry_at,
			    record ? record : "{}", &set, 0, &decision_id);
	if (rc == GB_OK && wk_dumping(w))
		rc = wk_txn_dump(t, "jobs", decision_id, record,
				 scw_jobs(t->now, seed, &set, &grid, r));
	free(record);
	if (rc != GB_OK)
		return rc;
	rc = jobs_event(t, &m.req, m.queues, &m.dec, &m.plan, decision_id,
			request_id, m.retry_at);
	if (rc != GB_OK)
		return rc;
	jobs_decided(t, "task", request_id, r->t.task_id, &m.dec, &m.plan,
		     m.req.njobs, m.nqueues, JB_PENDING_RETRY_S, "",
		     decision_id);
	return GB_OK;
}

static int decode(const void *body, size_t len, struct arena *a, void *req,
		  struct cod_error *err)
{
	struct wk_jobs_req *q = req;
	q->body = body;
	q->len = len;
	return cdj_decode_request(body, len, a, &q->req, &q->extra, err);
}

static int decide(struct wk_txn *t, void *req)
{
	const struct wk_jobs_req *q = req;
	/* A copy per attempt: completing trims the jobs. */
	struct gm_request r = q->req;
	size_t left = 0;
	int rc = complete_request(t, &r, q->extra.has_scope, &left);
	if (rc != GB_OK)
		return rc;
	if (left == 0) {
		/* Every job already has a queue: nothing to decide, but the
		** message id stays recorded. */
		wk_txn_log(t, LOG_LVL_INFO, NULL, NULL, "request %s: all %zu jobs already placed",
			   t->request_id, q->req.njobs);
		return GB_OK;
	}
	return decide_jobs(t, &r, t->request_id, t->request_id, q->body,
			   q->len);
}

static int refuse(const struct wk_txn *t, const void *req, int rc,
		  const char **field, char *problem, size_t n)
{
	const struct wk_jobs_req *q = req;
	if (rc == GB_ENOTFOUND) {
		*field = "taskID";
		snprintf(problem, n,
			 "task %lld has no nucleus: broker the task first or "
			 "give \"nucleus\" and \"gshare\"",
			 q->req.t.task_id);
		return 1;
	}
	return wk_refuse_inconsistent(t, req, rc, field, problem, n);
}

/* The retry scan's body: the due job requests, each decided again. */
static int retry_body(struct wk_txn *t, void *arg)
{
	(void)arg;
	struct st_db *db = t->w->db;
	long long ids[WK_RETRY_BATCH];
	size_t n = 0;
	int rc = st_jobs_pending_due(db, t->now, WK_RETRY_BATCH, ids, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		char *request_id = NULL;
		void *body = NULL;
		size_t len = 0, left = 0;
		rc = st_jobs_request_load(db, ids[i], t->a, &request_id, &body,
					  &len);
		if (rc != GB_OK)
			break;
		struct gm_request req;
		struct cdj_extra extra;
		struct cod_error err;
		memset(&err, 0, sizeof(err));
		/* It decoded when it arrived; if this binary no longer takes
		** it, stop retrying (every scan would fail the same way) and
		** say where the body stays for an operator to resubmit. */
		if (cdj_decode_request(body, len, t->a, &req, &extra, &err) !=
		    GB_OK) {
			log_error("pending job request %s no longer decodes "
				  "(%s: %s); retries stopped, the body stays in "
				  "job_requests row %lld",
				  request_id, err.field, err.problem, ids[i]);
			rc = st_jobs_request_close(db, ids[i], t->now);
			continue;
		}
		rc = complete_request(t, &req, extra.has_scope, &left);
		if (rc == GB_OK && left > 0) {
			char ref[96];
			snprintf(ref, sizeof(ref), "gb-retry-jobs-%lld-%lld",
				 ids[i], t->now);
			rc = decide_jobs(t, &req, request_id, ref, body, len);
			t->done += rc == GB_OK;
		} else if (rc == GB_OK) {
			rc = st_jobs_request_close(db, ids[i], t->now);
		}
	}
	return rc;
}

static void retry(struct wk_worker *w)
{
	wk_retry_scan(w, MX_T_JOB_BROKER, "job request", retry_body);
}

const struct wk_route wk_route_jobs = {
	.key = "job.broker",
	.size = sizeof(struct wk_jobs_req),
	.decode = decode,
	.decide = decide,
	.refuse = refuse,
	.republish = 1,
	.group = 1,
	.retry = retry,
};
