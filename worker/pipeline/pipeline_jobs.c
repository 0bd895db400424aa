/*
** pipeline_jobs.c — the job.broker request: place a task's jobs on queues.
**
** Same shape as the task brokerage in pipeline.c: decode and validate, then
** one MariaDB transaction that dedups the message id, loads the grid for
** this task (queues with the task's gshare counts, links to its nucleus,
** the replicas of its input files), runs the engine, records the decision,
** the jobs' queues and the queue counts they move, and queues the event in
** the outbox; publish with a confirm, then ack.
**
** Jobs no queue could take (PJ-35 pending, or PJ-36 caps) stay 'pending'
** and their request row is due again after an hour; the periodic scan
** re-decodes the stored request, drops the jobs placed meanwhile and
** decides the rest, so no job is forgotten.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "report/decrec.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "base/log.h"
#include "pipeline/pipeline_internal.h"
#include "report/report_jobs.h"
#include "store/store_jobs.h"

/*
** Fill what the request left to the task record (nucleus, gshare, the
** FC-06 scope; a request naming nucleus and gshare of a task the store
** does not know keeps the default scope, satellites) and drop the jobs that already have a queue (a retried or
** re-sent request). Returns 0, GB_ENOTFOUND (task unknown or not placed)
** or a store error; *left gets the number of jobs still to place.
*/
static int complete_request(struct wk_worker *w, struct gm_request *r,
			    int has_scope, struct arena *a, size_t *left)
{
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
		int rc = st_jobs_task_info(w->db, r->t.task_id, a, &nucleus,
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
	long long *ids = arena_alloc(a, r->njobs * sizeof(*ids));
	unsigned char *done = arena_alloc(a, r->njobs);
	struct gm_job *keep = arena_alloc(a, r->njobs * sizeof(*keep));
	if (ids == NULL || done == NULL || keep == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < r->njobs; i++)
		ids[i] = r->jobs[i].job_id;
	int rc = st_jobs_done(w->db, ids, r->njobs, done);
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

int wk_jobs_event(struct wk_worker *w, const struct gm_request *r,
		  const struct jb_queue *queues, const struct dec_decision *dec,
		  const struct jb_plan *plan, long long decision_id,
		  const char *request_id, long long now, long long retry_at,
		  struct arena *a, struct st_outbox_row *row)
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
		.decided_at = now,
		.retry_at = retry_at,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdj_encode_event(&ev, &sb);
	if (rc == GB_OK)
		rc = wk_outbox_event(w, event, decision_id, request_id, &sb, now,
				     a, row);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/*
** Inside the caller's transaction: decide the request's jobs and record
** everything. `request_id` names the request row (the original message id
** also on retries, so the same row is updated). `row` gets the event.
*/
static int decide_jobs(struct wk_worker *w, struct gm_request *r,
		       const char *request_id, const char *decision_ref,
		       const void *body, size_t len, long long now,
		       struct arena *a, struct st_outbox_row *row)
{
	struct prm_set set;
	int rc = st_params_load(w->db, a, &set);
	if (rc != GB_OK)
		return rc;
	if (r->an.is_analysis)
		return wk_decide_analysis(w, r, request_id, body, len, now,
					  &set, a, row);
	struct jb_params p;
	jb_params_resolve(&set, r->t.gshare, &p);
	struct gm_grid grid;
	rc = st_jobs_grid_load(w->db, r, a, &grid);
	if (rc != GB_OK)
		return rc;
	struct jb_queue *queues = NULL;
	struct jb_env env;
	rc = gm_resolve(&grid, r, now, a, &queues, &env);
	if (rc != GB_OK)
		return rc;
	size_t nq = grid.nqueues;
	struct dec_candidate *cands =
		nq ? arena_alloc(a, nq * sizeof(*cands)) : NULL;
	struct jb_plan plan;
	memset(&plan, 0, sizeof(plan));
	plan.job_queue = arena_alloc(a, (r->njobs ? r->njobs : 1) *
					    sizeof(*plan.job_queue));
	plan.job_status = arena_alloc(a, (r->njobs ? r->njobs : 1) *
					     sizeof(*plan.job_status));
	if ((nq && cands == NULL) || !plan.job_queue || !plan.job_status)
		return GB_ETOOBIG;
	struct gb_rng rng;
	gb_rng_seed(&rng, wk_seed(w, decision_ref, now));
	struct dec_decision dec;
	rc = jb_broker(&r->t, queues, nq, &p, &env, &rng, cands, &dec, &plan);
	if (rc != GB_OK)
		return rc;
	mx_wk_decision(&dec);

	size_t unassigned = r->njobs - plan.nassigned;
	long long retry_at = (dec.outcome == DEC_PENDING || unassigned > 0)
				     ? now + JB_PENDING_RETRY_S
				     : 0;
	json_t *detail = rpj_detail_json(r, queues, nq, &dec, &plan, &p, &env);
	char *detail_s = dr_finish(detail, DR_RECORD_MAX);
	long long decision_id = 0;
	rc = st_jobs_decide(w->db, r, queues, &dec, &plan, request_id, body,
			    len, now, retry_at, detail_s ? detail_s : "{}",
			    &set, 0, &decision_id);
	free(detail_s);
	if (rc != GB_OK)
		return rc;

	rc = wk_jobs_event(w, r, queues, &dec, &plan, decision_id, request_id,
			   now, retry_at, a, row);
	if (rc != GB_OK)
		return rc;

	if (dec.outcome == DEC_ASSIGNED)
		wk_decided(w, request_id, r->t.task_id, dec.outcome,
			   "task %lld: %zu of %zu jobs placed on %zu best "
			   "queue(s), first %s (%zu queues) decision %lld "
			   "request %s",
			   r->t.task_id, plan.nassigned, r->njobs, plan.nbest,
			   cands[plan.best[0]].name, nq, decision_id,
			   request_id);
	else
		wk_decided(w, request_id, r->t.task_id, dec.outcome,
			   "task %lld: %zu jobs pending, retry in %d s (no "
			   "queue of %zu eligible) decision %lld request %s",
			   r->t.task_id, r->njobs, JB_PENDING_RETRY_S, nq,
			   decision_id, request_id);
	return GB_OK;
}

void wk_handle_job_broker(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a)
{
	struct gm_request req;
	struct cdj_extra extra;
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	int rc = cdj_decode_request(d->body, d->len, a, &req, &extra, &err);
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		return;
	}
	const char *msgid = d->props.message_id;
	/* Decoding filled `req` from the arena; a retry of the transaction
	** starts again from this copy, since completing it trims the jobs. */
	const struct gm_request orig = req;
	for (int attempt = 0;; attempt++) {
		long long now = clk_now();
		int already = 0;
		size_t left = 0;
		struct st_outbox_row row;
		req = orig;
		rc = st_begin(w->db);
		if (rc == GB_OK)
			rc = st_claim_message(w->db, msgid, "job.broker", now,
					      &already);
		if (rc == GB_OK && already) {
			st_rollback(w->db);
			wk_redelivered(w, d, now, a);
			return;
		}
		if (rc == GB_OK)
			rc = complete_request(w, &req, extra.has_scope, a,
					      &left);
		if (rc == GB_OK && left == 0) {
			/* Every job already has a queue: nothing to decide,
			** but the message id stays recorded. */
			rc = st_commit(w->db);
			if (rc == GB_OK) {
				log_info("request %s: all %zu jobs already "
					 "placed", msgid, orig.njobs);
				amq_ack(w->amq, d->gen, d->tag);
				return;
			}
		} else if (rc == GB_OK) {
			rc = decide_jobs(w, &req, msgid, msgid, d->body, d->len,
					 now, a, &row);
			if (rc == GB_OK)
				rc = st_commit(w->db);
			if (rc == GB_OK) {
				wk_crash_point("after-commit");
				wk_publish_row(w, &row, d);
				return;
			}
		}
		if (w->db)
			st_rollback(w->db);
		if (rc == GB_EDBRETRY && attempt + 1 < WK_DB_RETRIES)
			continue;
		if (rc == GB_ENOTFOUND) {
			char problem[160];
			snprintf(problem, sizeof(problem),
				 "task %lld has no nucleus: broker the task "
				 "first or give \"nucleus\" and \"gshare\"",
				 orig.t.task_id);
			wk_dead_letter(w, d, "taskID", problem);
			return;
		}
		if (rc == GB_EINVAL) {
			wk_dead_letter(w, d, "task",
				       "rejected by the engine as inconsistent");
			return;
		}
		wk_db_failed(w, rc, "job.broker");
		wk_requeue(w, d);
		return;
	}
}

void wk_jobs_pending_scan(struct wk_worker *w)
{
	long long now = clk_now();
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes * 4);
	long long ids[WK_RETRY_BATCH];
	struct st_outbox_row rows[WK_RETRY_BATCH];
	size_t n = 0, done = 0;
	int rc = st_begin(w->db);
	if (rc == GB_OK)
		rc = st_jobs_pending_due(w->db, now, WK_RETRY_BATCH, ids, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		char *request_id = NULL;
		void *body = NULL;
		size_t len = 0, left = 0;
		rc = st_jobs_request_load(w->db, ids[i], &a, &request_id, &body,
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
		if (cdj_decode_request(body, len, &a, &req, &extra, &err) !=
		    GB_OK) {
			log_error("pending job request %s no longer decodes "
				  "(%s: %s); retries stopped, the body stays in "
				  "job_requests row %lld", request_id,
				  err.field, err.problem, ids[i]);
			rc = st_jobs_request_close(w->db, ids[i], now);
			continue;
		}
		rc = complete_request(w, &req, extra.has_scope, &a, &left);
		if (rc == GB_OK && left > 0) {
			char ref[96];
			snprintf(ref, sizeof(ref), "gb-retry-jobs-%lld-%lld",
				 ids[i], now);
			rc = decide_jobs(w, &req, request_id, ref, body, len,
					 now, &a, &rows[done]);
			if (rc == GB_OK)
				done++;
		} else if (rc == GB_OK) {
			rc = st_jobs_request_close(w->db, ids[i], now);
		}
	}
	if (rc == GB_OK)
		rc = st_commit(w->db);
	if (rc != GB_OK) {
		st_rollback(w->db);
		wk_db_failed(w, rc, "pending job retry scan");
	} else {
		for (size_t i = 0; i < done; i++)
			wk_publish_row(w, &rows[i], NULL);
		w->n_retried += done;
		mx_wk_request(MX_T_JOB_BROKER, MX_O_RETRIED, (double)done);
		if (done)
			log_info("retried %zu pending job request(s)", done);
	}
	arena_free(&a);
}
