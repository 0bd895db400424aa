/*
** pipeline_analysis.c — job.broker for analysis tasks (taskType "anal"): the
** task throttle (AJ-01..AJ-04) first, then the analysis brokerage
** (AJ-05..AJ-28) over the same queues the production brokerage reads.
**
** Runs inside the job.broker transaction of pipeline_jobs.c (and of its
** pending scan), so the state read, the decision, the jobs, the queue
** counts and the outbox row commit together, exactly as for production.
**
** Outcomes:
**  - throttled: no queue is looked at. The jobs wait with status
**    throttled (no queue), the request row is due again after
**    AB_PENDING_RETRY_S, and task.throttled says which cap or share was
**    over and by how much. A throttled job left so for 7 days is killed by
**    TO-04.
**  - assigned: the best queues (at most 10, AJ-28) share the jobs by
**    weight (ab_distribute); a job whose input is all at the queue's
**    storage is activated, else assigned. jobs.assigned as for production.
**  - pending: nothing survived even without the locality check (AJ-28):
**    the jobs stay pending for 20 minutes; jobs.pending.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/codec_panda.h"
#include "report/decrec.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "base/log.h"
#include "pipeline/pipeline_internal.h"
#include "report/report_analysis.h"
#include "store/store_analysis.h"
#include "store/store_jobs.h"

/* Queue the task.throttled event. */
static int throttled_event(struct wk_worker *w, const struct gm_request *r,
			   const struct gm_analysis_state *st,
			   enum an_task_class tclass, const struct an_throttle *th,
			   long long decision_id, const char *request_id,
			   long long now, long long retry_at, struct arena *a,
			   struct st_outbox_row *row)
{
	const struct cdp_throttled_event ev = {
		.decision_id = decision_id,
		.request_id = request_id,
		.task_id = r->t.task_id,
		.gshare = r->t.gshare,
		.user = r->an.user,
		.working_group = r->an.working_group,
		.task_class = tclass,
		.load = &st->user,
		.th = th,
		.decided_at = now,
		.retry_at = retry_at,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdp_encode_throttled(&ev, &sb);
	if (rc == GB_OK)
		rc = wk_outbox_event(w, "task.throttled", decision_id,
				     request_id, &sb, now, a, row);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

int wk_decide_analysis(struct wk_worker *w, struct gm_request *r,
		       const char *request_id, const void *body, size_t len,
		       long long now, const struct prm_set *set,
		       struct arena *a, struct st_outbox_row *row)
{
	struct gm_grid grid;
	int rc = st_jobs_grid_load(w->db, r, a, &grid);
	if (rc != GB_OK)
		return rc;
	struct jb_queue *queues = NULL;
	struct jb_env env;
	rc = gm_resolve(&grid, r, now, a, &queues, &env);
	if (rc != GB_OK)
		return rc;
	struct gm_analysis_state st;
	enum an_task_class tclass = AN_CLASS_B;
	rc = st_analysis_state(w->db, r, set, now, a, &st, &tclass);
	if (rc != GB_OK)
		return rc;
	st.user.task_class = tclass;
	if (!st.user.user_analysis && r->t.gshare &&
	    strcmp(r->t.gshare, "User Analysis") == 0)
		log_debug("task %lld: no share_usage row for User Analysis; "
			  "the share throttle (AJ-04) does not apply",
			  r->t.task_id);
	struct an_throttle th;
	rc = an_throttle_check(&st.user, set, &th);
	if (rc != GB_OK)
		return rc;

	size_t nq = grid.nqueues, nj = r->njobs;
	struct dec_candidate *cands =
		arena_alloc(a, (nq ? nq : 1) * sizeof(*cands));
	long *job_queue = arena_alloc(a, (nj ? nj : 1) * sizeof(*job_queue));
	enum jb_job_status *job_status =
		arena_alloc(a, (nj ? nj : 1) * sizeof(*job_status));
	if (cands == NULL || job_queue == NULL || job_status == NULL)
		return GB_ETOOBIG;
	struct dec_decision dec;
	struct ab_plan ap;
	memset(&ap, 0, sizeof(ap));
	struct ab_queue *aq = NULL;
	struct ab_task at;
	memset(&at, 0, sizeof(at));
	for (size_t i = 0; i < nj; i++) {
		job_queue[i] = -1;
		job_status[i] = JB_JOB_UNASSIGNED;
	}
	if (th.throttled) {
		/* Nothing is brokered: the decision holds the throttle's
		** verdict and every queue stays untouched. */
		dec_init(&dec, cands, nq);
		for (size_t i = 0; i < nq; i++)
			cands[i].name = queues[i].name;
		dec.outcome = DEC_PENDING;
		dec.chosen = -1;
		dec.retry_after_s = AB_PENDING_RETRY_S;
		snprintf(dec.note, sizeof(dec.note),
			 "%s: throttled, %s %g > %g", th.rule, th.code,
			 th.value, th.limit);
	} else {
		rc = gm_analysis_resolve(&grid, queues, r, &st, tclass, a, &aq,
				     &at);
		if (rc == GB_OK)
			rc = ab_broker(&at, aq, nq, set, now, cands, &dec, &ap);
		if (rc == GB_OK && dec.outcome == DEC_ASSIGNED)
			rc = ab_distribute(&ap, nj, job_queue);
		if (rc != GB_OK)
			return rc;
		mx_wk_decision(&dec);
	}
	/* The production plan shape, so the store and the jobs.* event
	** encoder serve both brokerages. */
	struct jb_plan plan = {.job_queue = job_queue, .job_status = job_status};
	for (size_t k = 0; k < ap.nbest && k < JB_BEST_N; k++)
		plan.best[plan.nbest++] = ap.best[k];
	for (size_t i = 0; i < nj; i++) {
		if (job_queue[i] < 0)
			continue;
		const struct jb_queue *q = &queues[job_queue[i]];
		job_status[i] = q->missing_files == 0 && q->missing_size <= 0
					? JB_JOB_ACTIVATED
					: JB_JOB_ASSIGNED;
		plan.nassigned++;
	}
	long long retry_at = (dec.outcome == DEC_PENDING || plan.nassigned < nj)
				     ? now + AB_PENDING_RETRY_S
				     : 0;
	json_t *detail = rpa_decision_json(r, th.throttled ? NULL : aq, nq,
					   &dec, &ap, job_queue, &th, &st.user,
					   tclass);
	char *detail_s = dr_finish(detail, DR_RECORD_MAX);
	long long decision_id = 0;
	rc = st_jobs_decide(w->db, r, queues, &dec, &plan, request_id, body,
			    len, now, retry_at, detail_s ? detail_s : "{}", set,
			    th.throttled, &decision_id);
	free(detail_s);
	if (rc != GB_OK)
		return rc;

	if (th.throttled) {
		rc = throttled_event(w, r, &st, tclass, &th, decision_id,
				     request_id, now, retry_at, a, row);
		if (rc != GB_OK)
			return rc;
		wk_decided(w, request_id, r->t.task_id, DEC_PENDING,
			   "analysis task %lld of %s throttled: %s %s %g > %g; "
			   "%zu jobs wait, retry in %d s (decision %lld "
			   "request %s)",
			   r->t.task_id, r->an.user ? r->an.user : "?",
			   th.rule, th.code, th.value, th.limit, nj,
			   AB_PENDING_RETRY_S, decision_id, request_id);
		wk_mx_outcome(w, MX_O_THROTTLED);
		return GB_OK;
	}
	rc = wk_jobs_event(w, r, queues, &dec, &plan, decision_id, request_id,
			   now, retry_at, a, row);
	if (rc != GB_OK)
		return rc;
	if (dec.outcome == DEC_ASSIGNED)
		wk_decided(w, request_id, r->t.task_id, dec.outcome,
			   "analysis task %lld: %zu of %zu jobs on %zu best "
			   "queue(s), first %s%s (decision %lld request %s)",
			   r->t.task_id, plan.nassigned, nj, plan.nbest,
			   cands[plan.best[0]].name,
			   ap.locality_dropped ? ", locality check dropped "
						 "(AJ-28)"
					       : "",
			   decision_id, request_id);
	else
		wk_decided(w, request_id, r->t.task_id, dec.outcome,
			   "analysis task %lld: %zu jobs pending, retry in %d "
			   "s (no queue of %zu survived, AJ-28) decision %lld "
			   "request %s",
			   r->t.task_id, nj, AB_PENDING_RETRY_S, nq,
			   decision_id, request_id);
	return GB_OK;
}
