/*
** route_panda.c — the PanDA job life cycle in the worker: job.status
** updates for PanDA jobs (route_status.c hands them over), the timeout
** scan (TO-01..TO-12, one job.timeout event per expired job: TO-14) and
** fast rebrokerage (TO-13).
**
** How several workers scan without doing anything twice: every status
** change stores the job's next possible timeout (check_at, from
** to_next_check). A scan claims due jobs with FOR UPDATE SKIP LOCKED in a
** transaction, so a job another worker holds is skipped, not waited for;
** the verdict (md_timeout, the path `explain` runs on a timeout
** scenario), the job's new state, the decision row and the outbox rows
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

#include "base/clock.h"
#include "base/log.h"
#include "codec/codec_panda.h"
#include "gb_error.h"
#include "model/decide.h"
#include "explain/scenario_write.h"
#include "pipeline/dump.h"
#include "pipeline/pipeline_internal.h"
#include "report/record.h"
#include "store/store_panda.h"

/* ---- job.status (system "panda") -------------------------------------- */

int wk_status_panda(struct wk_txn *t, const struct cdp_status *s)
{
	struct wk_worker *w = t->w;
	const struct sp_update u = {
		.job_id = s->job_id,
		.heartbeat = s->heartbeat,
		.status = s->status,
		.time = s->time,
		.job_sub_status = s->job_sub_status,
	};
	struct sp_result res;
	memset(&res, 0, sizeof(res));
	struct prm_set set;
	int rc = st_params_load(w->db, t->a, &set);
	if (rc == GB_OK)
		rc = st_panda_status(w->db, &u, &set, t->now, &res);
	if (rc != GB_OK)
		return rc;
	w->n_status++;
	wk_mx_outcome(w, res.outcome <= SP_HEARTBEAT ? MX_O_UPDATED
						      : MX_O_IGNORED);
	const char *msgid = t->request_id;
	if (res.outcome == SP_UNKNOWN_JOB)
		wk_txn_log(t, LOG_LVL_WARN, NULL, NULL,
			   "job.status %s: PanDA job %lld is unknown; ignored",
			   msgid, s->job_id);
	else if (res.outcome == SP_APPLIED)
		wk_txn_log(t, LOG_LVL_INFO, NULL, NULL,
			   "job %lld: %s -> %s at %s (job.status %s)",
			   s->job_id, to_status_name(res.old_status),
			   to_status_name(res.new_status),
			   res.queue[0] ? res.queue : "no queue", msgid);
	else
		wk_txn_log(t, LOG_LVL_DEBUG, NULL, NULL,
			   "job.status %s: job %lld %s%s", msgid, s->job_id,
			   s->heartbeat ? "heartbeat"
					: to_status_name(s->status),
			   res.outcome == SP_STALE ? " (stale, ignored)"
						   : " (heartbeat)");
	return GB_OK;
}

/* ---- events of one verdict ---------------------------------------------- */

/*
** Inside the transaction: apply `v` to `j`, record it and queue its
** events: job.timeout (not for TO-13, which is no timeout) and, when the
** job went back to the brokerage, job.rebrokered; the lines to log go with
** the commit.
*/
static int apply_verdict(struct wk_txn *t, const struct sp_job *j,
			 const struct to_verdict *v, const struct prm_set *set,
			 const struct to_rebro_in *in,
			 const struct to_rebro_out *out)
{
	struct wk_worker *w = t->w;
	int fast = in != NULL;
	char reqid[128];
	snprintf(reqid, sizeof(reqid), "gb-%s-%lld-%d-%lld",
		 fast ? "rebro" : "timeout", j->j.job_id, j->attempt, t->now);
	/* The job.timeout event, also what the record says of the job;
	** decision_id, new_status and attempt come from the store. */
	struct cdp_timeout_event ev = {
		.request_id = reqid,
		.job_id = j->j.job_id,
		.task_id = j->task_id,
		.queue = j->queue,
		.gshare = j->gshare,
		.status = j->j.status,
		.v = v,
		.decided_at = t->now,
	};
	char *record = rec_timeout(&ev, in, out, NULL);
	long long decision_id = 0;
	const char *new_status = NULL;
	int attempt = 0, no_request = 0;
	int rc = st_panda_timeout_apply(w->db, j, v, reqid,
					record ? record : "{}", set, t->now,
					&decision_id, &new_status, &attempt,
					&no_request);
	/* TO-13 is not dumped: which jobs move is the store's pick. */
	if (rc == GB_OK && !fast && wk_dumping(w))
		rc = wk_txn_dump(t, "timeout", decision_id, record,
				 scw_timeout(t->now, set, &j->j, j->task_id,
					     j->gshare, j->queue,
					     j->has_queue_row ? &j->q : NULL,
					     NULL));
	free(record);
	if (rc != GB_OK)
		return rc;
	msgpack_sbuffer sb;
	if (!fast) {
		ev.decision_id = decision_id;
		ev.new_status = new_status;
		ev.attempt = attempt;
		msgpack_sbuffer_init(&sb);
		rc = cdp_encode_timeout(&ev, &sb);
		if (rc == GB_OK)
			rc = wk_txn_event(t, "job.timeout", decision_id, reqid,
					  &sb);
		msgpack_sbuffer_destroy(&sb);
		if (rc != GB_OK)
			return rc;
	}
	if (v->action == TO_ACT_REASSIGN) {
		const struct cdp_rebrokered_event rb = {
			.decision_id = decision_id,
			.request_id = reqid,
			.job_id = j->j.job_id,
			.task_id = j->task_id,
			.from_queue = j->queue,
			.gshare = j->gshare,
			.rule = v->rule,
			.attempt = attempt,
			.job_request_id = no_request ? NULL : j->request_id,
			.decided_at = t->now,
			.rebro_in = in,
			.rebro_out = out,
		};
		char msgid[80];
		snprintf(msgid, sizeof(msgid), "gb-decision-%lld-rebrokered",
			 decision_id);
		msgpack_sbuffer_init(&sb);
		rc = cdp_encode_rebrokered(&rb, &sb);
		if (rc == GB_OK)
			rc = wk_txn_event_id(t, msgid, "job.rebrokered", reqid,
					     &sb);
		msgpack_sbuffer_destroy(&sb);
		if (rc != GB_OK)
			return rc;
	}
	if (no_request)
		wk_txn_log(t, LOG_LVL_WARN, NULL, NULL,
			   "job %lld: back to the brokerage, but its job.broker "
			   "request %s is gone; it stays pending until a new "
			   "request names it",
			   j->j.job_id, j->request_id ? j->request_id : "?");
	char f_job[48], f_rule[32];
	snprintf(f_job, sizeof(f_job), "GB_JOB_ID=%lld", j->j.job_id);
	snprintf(f_rule, sizeof(f_rule), "GB_RULE=%s", v->rule);
	wk_txn_log(t, LOG_LVL_INFO, f_job, f_rule,
		   "job %lld: %s %s %.0f s > %.0f s at %s: %s -> %s "
		   "(decision %lld)",
		   j->j.job_id, v->rule, v->what ? v->what : "", v->age_s,
		   v->limit_s, j->queue ? j->queue : "no queue",
		   to_action_name(v->action), new_status ? new_status : "?",
		   decision_id);
	return GB_OK;
}

/* ---- the timeout scan ---------------------------------------------------- */

/* A job whose verdict the store refused (a row an operator edited into a
** shape no rule expects): look at it again later, in a transaction of its
** own, so that it cannot stop every scan that follows. */
static int set_aside_body(struct wk_txn *t, void *arg)
{
	const long long *job_id = arg;
	return st_panda_recheck(t->w->db, *job_id,
				t->now + t->w->cfg->exempt_recheck);
}

static void set_aside(struct wk_worker *w, struct arena *a, long long job_id,
		      int why)
{
	struct wk_txn t;
	wk_txn_init(&t, w, a, NULL, NULL);
	wk_txn_run(&t, set_aside_body, &job_id, NULL);
	log_error("timeout scan: job %lld refused (%s); looked at again in "
		  "%d s", job_id, gb_strerror(why), w->cfg->exempt_recheck);
}

struct scan {
	size_t batch;      /* jobs to take at most */
	size_t due;        /* jobs taken */
	long long bad_job; /* the job being looked at when it failed */
};

static int scan_body(struct wk_txn *t, void *arg)
{
	struct wk_worker *w = t->w;
	struct scan *sc = arg;
	struct prm_set set;
	struct sp_job *jobs = NULL;
	size_t n = 0;
	sc->due = 0;
	int rc = st_params_load(w->db, t->a, &set);
	if (rc == GB_OK)
		rc = st_panda_due(w->db, t->now, sc->batch, t->a, &jobs, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct sp_job *j = &jobs[i];
		const struct to_queue *q = j->has_queue_row ? &j->q : NULL;
		struct md_timeout m;
		sc->bad_job = j->j.job_id;
		rc = md_timeout(&j->j, q, &set, t->now, &m);
		if (rc != GB_OK)
			break;
		if (m.fired) {
			rc = apply_verdict(t, j, &m.v, &set, NULL, NULL);
			t->done += rc == GB_OK;
			continue;
		}
		/* Nothing fired: look again when a rule can fire, or after
		** exempt_recheck at an exempt queue (TO-12: its operators may
		** lift the exemption) and when no limit is set now (an
		** operator may set one). */
		long long at = m.next_at;
		if (m.exempt || !m.has_next || at <= t->now)
			at = t->now + w->cfg->exempt_recheck;
		rc = st_panda_recheck(w->db, j->j.job_id, at);
	}
	sc->due = n;
	return rc;
}

int wk_timeout_scan(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down || !amq_is_up(w->amq))
		return 0;
	/* A job gives at most two events, each needs a confirm slot: a batch
	** is never larger than what can go out at once (rows beyond the free
	** slots would wait in the outbox for the relay). */
	struct scan sc = {.batch = wk_publishable(
				  w, 2, (size_t)w->cfg->timeout_batch)};
	if (sc.batch == 0)
		return 1; /* every slot awaits a confirm: try at the next tick */
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes * 4);
	struct wk_txn t;
	wk_txn_init(&t, w, &a, NULL, NULL);
	int rc = wk_txn_run(&t, scan_body, &sc, NULL);
	if (rc != GB_OK) {
		if (rc == GB_EINVAL || rc == GB_ESTATE || rc == GB_ERANGE ||
		    rc == GB_ENOTFOUND)
			set_aside(w, &a, sc.bad_job, rc);
		else
			wk_db_failed(w, rc, "timeout scan");
		sc.due = 0;
	} else {
		wk_txn_publish(&t, NULL);
		if (t.done)
			log_info("timeout scan: %zu of %zu due job(s) timed out",
				 t.done, sc.due);
	}
	arena_free(&a);
	return sc.due == sc.batch;
}

/* ---- fast rebrokerage (TO-13) ------------------------------------------- */

struct rebro {
	const struct sp_load *l;
	const struct prm_set *set; /* the parameters the pass read */
	struct to_rebro_in in;
	struct to_rebro_out out;
};

/* Rebroker the excess of one queue and gshare in one transaction. */
static int rebro_body(struct wk_txn *t, void *arg)
{
	struct wk_worker *w = t->w;
	struct rebro *b = arg;
	const struct sp_load *l = b->l;
	b->in = (struct to_rebro_in){.has_nslots = l->has_nslots};
	struct sp_job *jobs = NULL;
	size_t n = 0;
	int rc = st_panda_load_lock(w->db, l->queue, l->gshare, &b->in.nqueue,
				    &b->in.nrun, &b->in.nqueue_total);
	if (rc == GB_OK)
		rc = to_fast_rebro(&b->in, b->set, l->gshare, &b->out);
	if (rc == GB_OK && b->out.triggered && b->out.excess > 0) {
		/* Bounded per pass: a huge excess drains over several passes
		** rather than in one long transaction holding the counts. */
		size_t want = b->out.excess > w->cfg->timeout_batch
				      ? (size_t)w->cfg->timeout_batch
				      : (size_t)b->out.excess;
		rc = st_panda_rebro_pick(w->db, l->queue, l->gshare,
					 wk_publishable(w, 1, want), t->a,
					 &jobs, &n);
	}
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct to_verdict v = {
			.rule = "TO-13",
			.action = TO_ACT_REASSIGN,
			.age_s = (double)(t->now - jobs[i].j.status_since),
			.limit_s = 0,
			.what = "fast rebrokerage: queued jobs over the limits",
		};
		rc = apply_verdict(t, &jobs[i], &v, b->set, &b->in, &b->out);
	}
	t->done = n;
	return rc;
}

void wk_fast_rebro(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down || !amq_is_up(w->amq) ||
	    w->tq == NULL || !w->tq->leader)
		return;
	struct arena a;
	arena_init(&a, 64u << 20);
	struct prm_set set;
	struct sp_load *loads = NULL;
	size_t n = 0;
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
			struct arena one;
			arena_init(&one, 64u << 20);
			struct rebro b = {.l = l, .set = &set};
			struct wk_txn t;
			wk_txn_init(&t, w, &one, NULL, NULL);
			rc = wk_txn_run(&t, rebro_body, &b, NULL);
			if (rc == GB_OK) {
				wk_txn_publish(&t, NULL);
				if (t.done)
					log_info("TO-13 %s/%s: nQueue %.0f > "
						 "%.0f (ratio), %.0f (frac), "
						 "%.0f (limit): %zu of %lld "
						 "excess job(s) rebrokered",
						 l->queue, l->gshare,
						 b.in.nqueue, b.out.ratio_limit,
						 b.out.frac_limit,
						 b.out.nqueue_limit, t.done,
						 b.out.excess);
			}
			arena_free(&one);
		}
		i = end;
	}
	if (rc != GB_OK)
		wk_db_failed(w, rc, "fast rebrokerage");
	arena_free(&a);
}
