/*
** pipeline_panda.c — the PanDA job life cycle in the worker: job.status
** updates for PanDA jobs, the timeout scan (TO-01..TO-12, one job.timeout
** event per expired job: TO-14) and fast rebrokerage (TO-13).
**
** How several workers scan without doing anything twice: every status
** change stores the job's next possible timeout (check_at, from
** to_next_check). A scan claims due jobs with FOR UPDATE SKIP LOCKED in a
** transaction, so a job another worker holds is skipped, not waited for;
** the verdict, the job's new state, the decision row and the outbox rows
** of its events commit together, and the new state moves check_at past
** now (or clears it), so the job is not due again. A worker that dies
** mid-scan rolls back: the jobs stay due and the next scan takes them.
** Events are published after the commit (outbox), so none is lost and
** none is sent twice under its message id "gb-decision-<id>".
**
** Fast rebrokerage runs only on the worker holding the leader lease (the
** DIRAC leader's, st_tq_lease): one pass over every queue and gshare is
** enough. Its correctness does not rest on the lease: each triggered
** queue's counts row is locked and re-read in the transaction that
** rebrokers, so two passes at once run one after the other and the
** second sees the first's decrements.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "codec/codec_panda.h"
#include "report/decrec.h"
#include "gb_error.h"
#include "base/log.h"
#include "pipeline/pipeline_internal.h"
#include "store/store_panda.h"

/* ---- job.status (system "panda") -------------------------------------- */

void wk_handle_panda_status(struct wk_worker *w, const struct amq_delivery *d,
			    struct arena *a)
{
	struct cdp_status s;
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	int rc = cdp_decode_status(d->body, d->len, a, &s, &err);
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		return;
	}
	const struct sp_update u = {
		.job_id = s.job_id,
		.heartbeat = s.heartbeat,
		.status = s.status,
		.time = s.time,
		.job_sub_status = s.job_sub_status,
	};
	const char *msgid = d->props.message_id;
	for (int attempt = 0;; attempt++) {
		long long now = clk_now();
		int already = 0;
		struct sp_result res;
		memset(&res, 0, sizeof(res));
		struct prm_set set;
		rc = st_begin(w->db);
		if (rc == GB_OK)
			rc = st_claim_message(w->db, msgid, "job.status", now,
					      &already);
		if (rc == GB_OK && !already)
			rc = st_params_load(w->db, a, &set);
		if (rc == GB_OK && !already)
			rc = st_panda_status(w->db, &u, &set, now, &res);
		if (rc == GB_OK)
			rc = st_commit(w->db);
		if (rc == GB_OK) {
			w->n_status++;
			wk_mx_outcome(w, already ? MX_O_DUPLICATE : res.outcome <= SP_HEARTBEAT ? MX_O_UPDATED : MX_O_IGNORED);
			const char *word = s.heartbeat
						   ? "heartbeat"
						   : to_status_name(s.status);
			if (already) {
				w->n_dup++;
				log_info("job.status %s was processed before",
					 msgid);
			} else if (res.outcome == SP_UNKNOWN_JOB) {
				log_warn("job.status %s: PanDA job %lld is "
					 "unknown; ignored", msgid, s.job_id);
			} else if (res.outcome == SP_APPLIED) {
				log_info("job %lld: %s -> %s at %s (job.status "
					 "%s)", s.job_id,
					 to_status_name(res.old_status),
					 to_status_name(res.new_status),
					 res.queue[0] ? res.queue : "no queue",
					 msgid);
			} else {
				log_debug("job.status %s: job %lld %s%s", msgid,
					  s.job_id, word,
					  res.outcome == SP_STALE
						  ? " (stale, ignored)"
						  : " (heartbeat)");
			}
			amq_ack(w->amq, d->gen, d->tag);
			return;
		}
		if (w->db)
			st_rollback(w->db);
		if (rc == GB_EDBRETRY && attempt + 1 < WK_DB_RETRIES)
			continue;
		if (rc == GB_EINVAL) {
			wk_dead_letter(w, d, "status",
				       "refused by the store as inconsistent");
			return;
		}
		wk_db_failed(w, rc, "job.status");
		wk_requeue(w, d);
		return;
	}
}

/* ---- events of one verdict ---------------------------------------------- */

/* The decision record's detail: what was compared, bounded in size. */
static char *verdict_detail(const struct sp_job *j, const struct to_verdict *v,
			    const struct to_rebro_in *in,
			    const struct to_rebro_out *out)
{
	json_t *o = json_object();
	json_object_set_new(o, "jobID", json_integer(j->j.job_id));
	json_object_set_new(o, "taskID", json_integer(j->task_id));
	json_object_set_new(o, "queue",
			    j->queue ? json_string(j->queue) : json_null());
	json_object_set_new(o, "gshare", json_string(j->gshare ? j->gshare
								: ""));
	json_object_set_new(o, "status",
			    json_string(to_status_name(j->j.status)));
	json_object_set_new(o, "rule", json_string(v->rule));
	json_object_set_new(o, "what", json_string(v->what ? v->what : ""));
	json_object_set_new(o, "age", json_real(v->age_s));
	json_object_set_new(o, "limit", json_real(v->limit_s));
	json_object_set_new(o, "action",
			    json_string(to_action_name(v->action)));
	if (in && out) {
		json_t *f = json_object();
		json_object_set_new(f, "nQueue", json_real(in->nqueue));
		json_object_set_new(f, "nRun", json_real(in->nrun));
		json_object_set_new(f, "nQueueTotal",
				    json_real(in->nqueue_total));
		json_object_set_new(f, "ratioLimit", json_real(out->ratio_limit));
		json_object_set_new(f, "fracLimit", json_real(out->frac_limit));
		json_object_set_new(f, "nQueueLimit",
				    json_real(out->nqueue_limit));
		json_object_set_new(f, "excess", json_integer(out->excess));
		json_object_set_new(o, "fastRebro", f);
	}
	json_object_set_new(o, "decision",
			    json_string(to_action_name(v->action)));
	return dr_finish(o, DR_RECORD_MAX);
}

/*
** Inside the caller's transaction: apply `v` to `j` and queue its events:
** job.timeout (not for TO-13, which is no timeout) and, when the job went
** back to the brokerage, job.rebrokered. rows[] gets 1 or 2 rows, *nrows
** their number.
*/
/* What one applied verdict did, logged once its transaction commits (a
** rolled-back scan must not log decisions that never happened). */
struct verdict_log {
	const struct sp_job *j;
	struct to_verdict v;
	const char *new_status;
	long long decision_id;
	int no_request;
};

static void log_verdict(const struct verdict_log *l)
{
	const struct sp_job *j = l->j;
	char f_job[48], f_rule[32];
	snprintf(f_job, sizeof(f_job), "GB_JOB_ID=%lld", j->j.job_id);
	snprintf(f_rule, sizeof(f_rule), "GB_RULE=%s", l->v.rule);
	const char *fields[] = {f_job, f_rule, NULL};
	if (l->no_request)
		log_warn("job %lld: back to the brokerage, but its job.broker "
			 "request %s is gone; it stays pending until a new "
			 "request names it", j->j.job_id,
			 j->request_id ? j->request_id : "?");
	log_fields(LOG_LVL_INFO, fields,
		   "job %lld: %s %s %.0f s > %.0f s at %s: %s -> %s "
		   "(decision %lld)", j->j.job_id, l->v.rule,
		   l->v.what ? l->v.what : "", l->v.age_s, l->v.limit_s,
		   j->queue ? j->queue : "no queue",
		   to_action_name(l->v.action),
		   l->new_status ? l->new_status : "?", l->decision_id);
}

static int apply_verdict(struct wk_worker *w, const struct sp_job *j,
			 const struct to_verdict *v, const struct prm_set *set,
			 const struct to_rebro_in *in,
			 const struct to_rebro_out *out, long long now,
			 struct arena *a, struct st_outbox_row *rows,
			 size_t *nrows, struct verdict_log *lg)
{
	*nrows = 0;
	int fast = in != NULL;
	char reqid[128];
	snprintf(reqid, sizeof(reqid), "gb-%s-%lld-%d-%lld",
		 fast ? "rebro" : "timeout", j->j.job_id, j->attempt, now);
	char *detail = verdict_detail(j, v, in, out);
	long long decision_id = 0;
	const char *new_status = NULL;
	int attempt = 0, no_request = 0;
	int rc = st_panda_timeout_apply(w->db, j, v, reqid,
					detail ? detail : "{}", set, now,
					&decision_id, &new_status, &attempt,
					&no_request);
	free(detail);
	if (rc != GB_OK)
		return rc;
	msgpack_sbuffer sb;
	if (!fast) {
		const struct cdp_timeout_event ev = {
			.decision_id = decision_id,
			.request_id = reqid,
			.job_id = j->j.job_id,
			.task_id = j->task_id,
			.queue = j->queue,
			.gshare = j->gshare,
			.status = j->j.status,
			.v = v,
			.new_status = new_status,
			.attempt = attempt,
			.decided_at = now,
		};
		msgpack_sbuffer_init(&sb);
		rc = cdp_encode_timeout(&ev, &sb);
		if (rc == GB_OK)
			rc = wk_outbox_event(w, "job.timeout", decision_id,
					     reqid, &sb, now, a, &rows[0]);
		msgpack_sbuffer_destroy(&sb);
		if (rc != GB_OK)
			return rc;
		(*nrows)++;
	}
	if (v->action == TO_ACT_REASSIGN) {
		const struct cdp_rebrokered_event ev = {
			.decision_id = decision_id,
			.request_id = reqid,
			.job_id = j->j.job_id,
			.task_id = j->task_id,
			.from_queue = j->queue,
			.gshare = j->gshare,
			.rule = v->rule,
			.attempt = attempt,
			.job_request_id = no_request ? NULL : j->request_id,
			.decided_at = now,
			.rebro_in = in,
			.rebro_out = out,
		};
		char msgid[80];
		snprintf(msgid, sizeof(msgid), "gb-decision-%lld-rebrokered",
			 decision_id);
		msgpack_sbuffer_init(&sb);
		rc = cdp_encode_rebrokered(&ev, &sb);
		if (rc == GB_OK)
			rc = wk_outbox_row(w, msgid, "job.rebrokered", reqid,
					   &sb, now, a, &rows[*nrows]);
		msgpack_sbuffer_destroy(&sb);
		if (rc != GB_OK)
			return rc;
		(*nrows)++;
	}
	*lg = (struct verdict_log){.j = j,
				   .v = *v,
				   .new_status = new_status,
				   .decision_id = decision_id,
				   .no_request = no_request};
	return GB_OK;
}

/* ---- the timeout scan ---------------------------------------------------- */

/* A job whose verdict the store refused (a row an operator edited into a
** shape no rule expects): look at it again later, in a transaction of its
** own, so that it cannot stop every scan that follows. */
static void set_aside(struct wk_worker *w, long long job_id, long long now,
		      int why)
{
	int rc = st_begin(w->db);
	if (rc == GB_OK)
		rc = st_panda_recheck(w->db, job_id,
				      now + w->cfg->exempt_recheck);
	if (rc == GB_OK)
		rc = st_commit(w->db);
	if (rc != GB_OK)
		st_rollback(w->db);
	log_error("timeout scan: job %lld refused (%s); looked at again in "
		  "%d s", job_id, gb_strerror(why), w->cfg->exempt_recheck);
}

/*
** Jobs whose events can be published now: a job gives at most two events,
** each needs a publisher confirm slot. Rows beyond the free slots would
** wait in the outbox until their lease ends and a relay takes them, so a
** batch is never larger than what can go out at once.
*/
static size_t publishable(const struct wk_worker *w, size_t per_job,
			  size_t want)
{
	size_t used = wk_inflight(w);
	size_t free = w->npend > used ? w->npend - used : 0;
	return want < free / per_job ? want : free / per_job;
}

int wk_timeout_scan(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down || !amq_is_up(w->amq))
		return 0;
	long long now = clk_now();
	size_t batch = publishable(w, 2, (size_t)w->cfg->timeout_batch);
	if (batch == 0)
		return 1; /* every slot awaits a confirm: try at the next tick */
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes * 4);
	struct st_outbox_row *rows = arena_alloc(&a, 2 * batch * sizeof(*rows));
	struct verdict_log *logs = arena_alloc(&a, batch * sizeof(*logs));
	struct sp_job *jobs = NULL;
	size_t n = 0, nrows = 0, fired = 0;
	long long bad_job = 0;
	struct prm_set set;
	int rc = rows && logs ? st_begin(w->db) : GB_ENOMEM;
	if (rc == GB_OK)
		rc = st_params_load(w->db, &a, &set);
	if (rc == GB_OK)
		rc = st_panda_due(w->db, now, batch, &a, &jobs, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct sp_job *j = &jobs[i];
		const struct to_queue *q = j->has_queue_row ? &j->q : NULL;
		struct to_verdict v;
		bad_job = j->j.job_id;
		rc = to_check(&j->j, q, &set, now, &v);
		if (rc < 0)
			break;
		if (rc == 1) {
			size_t k = 0;
			rc = apply_verdict(w, j, &v, &set, NULL, NULL, now, &a,
					   &rows[nrows], &k, &logs[fired]);
			nrows += k;
			fired += rc == GB_OK;
			continue;
		}
		/* Nothing fired: look again when a rule can fire, or after
		** exempt_recheck at an exempt queue (TO-12: its operators may
		** lift the exemption) and when no limit is set now (an
		** operator may set one). */
		long long at = 0;
		int exempt = q && (q->paused || q->disable_reassign);
		rc = to_next_check(&j->j, q, &set, now, &at);
		if (rc < 0)
			break;
		if (exempt || rc == 0 || at <= now)
			at = now + w->cfg->exempt_recheck;
		rc = st_panda_recheck(w->db, j->j.job_id, at);
	}
	if (rc == GB_OK)
		rc = st_commit(w->db);
	if (rc != GB_OK) {
		st_rollback(w->db);
		if (rc == GB_EINVAL || rc == GB_ESTATE || rc == GB_ERANGE ||
		    rc == GB_ENOTFOUND)
			set_aside(w, bad_job, now, rc);
		else
			wk_db_failed(w, rc, "timeout scan");
		n = 0;
	} else {
		for (size_t i = 0; i < fired; i++)
			log_verdict(&logs[i]);
		for (size_t i = 0; i < nrows; i++)
			wk_publish_row(w, &rows[i], NULL);
		if (fired)
			log_info("timeout scan: %zu of %zu due job(s) timed out",
				 fired, n);
	}
	arena_free(&a);
	return n == batch;
}

/* ---- fast rebrokerage (TO-13) ------------------------------------------- */

/* Rebroker the excess of one queue and gshare in one transaction, with
** the parameters the pass read (`set`). */
static int rebro_one(struct wk_worker *w, const struct sp_load *l,
		     const struct prm_set *set, long long now, size_t *moved)
{
	struct arena a;
	arena_init(&a, 64u << 20);
	struct to_rebro_in in = {.has_nslots = l->has_nslots};
	struct to_rebro_out out;
	struct sp_job *jobs = NULL;
	struct st_outbox_row *rows = NULL;
	struct verdict_log *logs = NULL;
	size_t n = 0, nrows = 0;
	int rc = st_begin(w->db);
	if (rc == GB_OK)
		rc = st_panda_load_lock(w->db, l->queue, l->gshare, &in.nqueue,
					&in.nrun, &in.nqueue_total);
	if (rc == GB_OK)
		rc = to_fast_rebro(&in, set, l->gshare, &out);
	if (rc == GB_OK && out.triggered && out.excess > 0) {
		/* Bounded per pass: a huge excess drains over several passes
		** rather than in one long transaction holding the counts. */
		size_t max = publishable(
			w, 1,
			out.excess > w->cfg->timeout_batch
				? (size_t)w->cfg->timeout_batch
				: (size_t)out.excess);
		rc = st_panda_rebro_pick(w->db, l->queue, l->gshare, max, &a,
					 &jobs, &n);
		rows = rc == GB_OK && n ? arena_alloc(&a, n * sizeof(*rows))
					: NULL;
		logs = rc == GB_OK && n ? arena_alloc(&a, n * sizeof(*logs))
					: NULL;
		if (rc == GB_OK && n && (rows == NULL || logs == NULL))
			rc = GB_ENOMEM;
	}
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct to_verdict v = {
			.rule = "TO-13",
			.action = TO_ACT_REASSIGN,
			.age_s = (double)(now - jobs[i].j.status_since),
			.limit_s = 0,
			.what = "fast rebrokerage: queued jobs over the limits",
		};
		size_t k = 0;
		rc = apply_verdict(w, &jobs[i], &v, set, &in, &out, now, &a,
				   &rows[nrows], &k, &logs[i]);
		nrows += k;
	}
	if (rc == GB_OK)
		rc = st_commit(w->db);
	if (rc != GB_OK) {
		st_rollback(w->db);
	} else {
		for (size_t i = 0; i < n; i++)
			log_verdict(&logs[i]);
		for (size_t i = 0; i < nrows; i++)
			wk_publish_row(w, &rows[i], NULL);
		if (n)
			log_info("TO-13 %s/%s: nQueue %.0f > %.0f (ratio), %.0f "
				 "(frac), %.0f (limit): %zu of %lld excess "
				 "job(s) rebrokered", l->queue, l->gshare,
				 in.nqueue, out.ratio_limit, out.frac_limit,
				 out.nqueue_limit, n, out.excess);
		*moved += n;
	}
	arena_free(&a);
	return rc;
}

void wk_fast_rebro(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down || !amq_is_up(w->amq) ||
	    w->tq == NULL || !w->tq->leader)
		return;
	long long now = clk_now();
	struct arena a;
	arena_init(&a, 64u << 20);
	struct prm_set set;
	struct sp_load *loads = NULL;
	size_t n = 0, moved = 0;
	int rc = st_params_load(w->db, &a, &set);
	if (rc == GB_OK)
		rc = st_panda_loads(w->db, &a, &loads, &n);
	/* Rows come ordered by gshare: one pass sums each gshare's queued
	** jobs, the next checks each queue against its gshare's total. */
	for (size_t i = 0; rc == GB_OK && i < n;) {
		size_t end = i;
		double total = 0;
		while (end < n && strcmp(loads[end].gshare, loads[i].gshare) == 0)
			total += loads[end++].nqueue;
		for (size_t k = i; rc == GB_OK && k < end; k++) {
			const struct sp_load *l = &loads[k];
			if (l->exempt || !l->known)
				continue;
			struct to_rebro_in in = {.nqueue = l->nqueue,
						 .nrun = l->nrun,
						 .nqueue_total = total,
						 .has_nslots = l->has_nslots};
			struct to_rebro_out out;
			if (to_fast_rebro(&in, &set, l->gshare, &out) != GB_OK ||
			    !out.triggered)
				continue;
			rc = rebro_one(w, l, &set, now, &moved);
		}
		i = end;
	}
	if (rc != GB_OK)
		wk_db_failed(w, rc, "fast rebrokerage");
	arena_free(&a);
}
