/*
** pipeline_tq.c — the rest of the DIRAC side: job.submit puts jobs into
** task queues (TQ-01..03), job.status records what the jobs do (the
** running-job history the share corrector reads, PR-04), and the periodic
** work of wk_tq_tick: keep the task queue index fresh on every worker and,
** on the one worker holding the leader lease in MariaDB, recompute the
** priorities (PR-01..07) periodically and when task queues appear or empty
** (PR-08), sample the running-job history and delete empty task queues.
**
** Why one leader: a recomputation reads every TQ and writes every
** priority; two workers doing it at once would only repeat each other. The
** lease (st_tq_lease) is a row in MariaDB, so it needs no coordination
** service, and a leader that dies is replaced when its lease ends. The
** other workers pick the priorities up in their next index refresh.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "codec/codec_panda.h"
#include "gb_error.h"
#include "base/log.h"
#include "pipeline/pipeline_internal.h"
#include "store/store_tq.h"

/* ---- job.submit -------------------------------------------------------- */

void wk_handle_job_submit(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a)
{
	struct cdt_submit sub;
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	int rc = cdt_decode_submit(d->body, d->len, a, &sub, &err);
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		return;
	}
	rc = wk_tq_config(w);
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "job.submit: loading the configuration");
		wk_requeue(w, d);
		return;
	}
	const char *msgid = d->props.message_id;
	for (int attempt = 0;; attempt++) {
		long long now = clk_now();
		int already = 0;
		struct st_tq_submitted out;
		memset(&out, 0, sizeof(out));
		rc = st_begin(w->db);
		if (rc == GB_OK)
			rc = st_claim_message(w->db, msgid, "job.submit", now,
					      &already);
		if (rc == GB_OK && already) {
			st_rollback(w->db);
			w->n_dup++;
			wk_mx_outcome(w, MX_O_DUPLICATE);
			log_info("job.submit %s was processed before", msgid);
			amq_ack(w->amq, d->gen, d->tag);
			return;
		}
		if (rc == GB_OK)
			rc = st_tq_submit(w->db, sub.jobs, sub.njobs,
					  w->tq->seg, w->tq->nseg, msgid, now, a,
					  &out);
		if (rc == GB_OK)
			rc = st_commit(w->db);
		if (rc == GB_OK) {
			w->n_submitted += sub.njobs;
			wk_mx_outcome(w, MX_O_ACCEPTED);
			log_info("job.submit %s: %zu job(s) into %zu task "
				 "queue(s), %zu new",
				 msgid, sub.njobs, out.tqs, out.new_tqs);
			amq_ack(w->amq, d->gen, d->tag);
			return;
		}
		char why[512];
		snprintf(why, sizeof(why), "%s",
			 w->db ? st_error(w->db) : gb_strerror(rc));
		if (w->db)
			st_rollback(w->db);
		if (rc == GB_EDBRETRY && attempt + 1 < WK_DB_RETRIES)
			continue;
		if (rc == GB_EDUP || rc == GB_EINVAL) {
			wk_dead_letter(w, d, "jobs", why);
			return;
		}
		wk_db_failed(w, rc, "job.submit");
		wk_requeue(w, d);
		return;
	}
}

/* ---- job.status -------------------------------------------------------- */

void wk_handle_job_status(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a)
{
	struct cdt_status s;
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	/* One routing key for both systems: "system" picks the decoder. */
	enum cdp_system sys = CDP_SYS_DIRAC;
	int rc = cdp_status_system(d->body, d->len, &sys, &err);
	if (rc == GB_OK && sys == CDP_SYS_PANDA) {
		wk_handle_panda_status(w, d, a);
		return;
	}
	if (rc == GB_OK)
		rc = cdt_decode_status(d->body, d->len, a, &s, &err);
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		return;
	}
	const char *msgid = d->props.message_id;
	for (int attempt = 0;; attempt++) {
		long long now = clk_now();
		int already = 0, found = 0, applied = 0;
		rc = st_begin(w->db);
		if (rc == GB_OK)
			rc = st_claim_message(w->db, msgid, "job.status", now,
					      &already);
		if (rc == GB_OK && !already)
			rc = st_tq_job_status(w->db, &s, now, &found,
					      &applied);
		if (rc == GB_OK)
			rc = st_commit(w->db);
		if (rc == GB_OK) {
			w->n_status++;
			wk_mx_outcome(w, already ? MX_O_DUPLICATE : found && applied ? MX_O_UPDATED : MX_O_IGNORED);
			if (already)
				w->n_dup++;
			else if (!found)
				log_warn("job.status %s: job %lld is unknown; "
					 "ignored",
					 msgid, s.job_id);
			else
				log_debug("job.status %s: job %lld %s%s", msgid,
					  s.job_id, cdt_status_name(s.status),
					  applied ? "" : " (stale, ignored)");
			amq_ack(w->amq, d->gen, d->tag);
			return;
		}
		if (w->db)
			st_rollback(w->db);
		if (rc == GB_EDBRETRY && attempt + 1 < WK_DB_RETRIES)
			continue;
		wk_db_failed(w, rc, "job.status");
		wk_requeue(w, d);
		return;
	}
}

/* ---- the leader's periodic work ---------------------------------------- */

/* PR-01..08: recompute every priority from this worker's (fresh) index. */
static int recompute(struct wk_worker *w, long long now, long long dirty)
{
	struct wk_tq *t = w->tq;
	int rc = wk_tq_fresh(w, 1);
	if (rc != GB_OK)
		return rc;
	size_t n = tqi_ntqs(t->idx);
	struct pr_tq *tqs = calloc(n ? n : 1, sizeof(*tqs));
	if (tqs == NULL)
		return GB_ENOMEM;
	tqi_stats(t->idx, tqs);
	long long span = 0;
	for (size_t i = 0; i < t->pcfg.ninst; i++)
		for (size_t k = 0; k < t->pcfg.inst[i].nslices; k++)
			if (t->pcfg.inst[i].slices[k].timespan > span)
				span = t->pcfg.inst[i].slices[k].timespan;
	struct arena a;
	arena_init(&a, 64u << 20);
	struct pr_sample *hist = NULL;
	size_t nhist = 0;
	if (t->pcfg.corrections && span > 0)
		rc = st_tq_history_load(w->db, now - span, &a, &hist, &nhist);
	char note[512] = "";
	if (rc == GB_OK)
		rc = pr_recompute(&t->pcfg, hist, nhist, now, tqs, n, note,
				  sizeof(note));
	if (rc == GB_OK)
		rc = st_tq_prio_save(w->db, tqs, n, dirty, now);
	if (rc == GB_OK) {
		for (size_t i = 0; i < n; i++)
			tqi_set_priority(t->idx, tqs[i].tq_id, tqs[i].priority);
		log_info("priorities recomputed for %zu task queue(s)%s%s", n,
			 note[0] ? ": " : "", note);
	}
	arena_free(&a);
	free(tqs);
	return rc;
}

static void leader_work(struct wk_worker *w, double mono, long long now)
{
	struct wk_tq *t = w->tq;
	const struct gb_config *c = w->cfg;
	int rc;
	if (mono >= t->sample_next) {
		rc = st_tq_history_sample(w->db, now);
		if (rc == GB_OK)
			rc = st_tq_history_prune(w->db, now - c->history_keep);
		if (rc != GB_OK) {
			wk_db_failed(w, rc, "running-job history sample");
			return;
		}
		t->sample_next = mono + c->history_interval;
	}
	if (mono >= t->cleanup_next) {
		size_t gone = 0;
		rc = st_tq_cleanup(w->db, now - c->cleanup_age, 100, &gone);
		if (rc != GB_OK) {
			wk_db_failed(w, rc, "empty task queue cleanup");
			return;
		}
		if (gone)
			log_info("deleted %zu empty task queue(s)", gone);
		t->cleanup_next = mono + (c->cleanup_age > 10 ? 10 : 1);
	}
	/* PR-08: periodically, and as soon as task queues appeared or went
	** (st_tq_submit and st_tq_cleanup count them in `dirty`). */
	long long dirty = 0, seen = 0, at = 0, version = 0;
	rc = st_tq_prio_state(w->db, &dirty, &seen, &at, &version);
	if (rc == GB_OK && (dirty != seen || mono >= t->prio_next ||
			    now - at >= c->priority_interval)) {
		rc = wk_tq_config(w);
		if (rc == GB_OK)
			rc = recompute(w, now, dirty);
		if (rc == GB_OK)
			t->prio_next = mono + c->priority_interval;
	}
	if (rc != GB_OK)
		wk_db_failed(w, rc, "priority recomputation");
}

void wk_tq_tick(struct wk_worker *w)
{
	wk_tq_replies_retry(w);
	struct wk_tq *t = w->tq;
	if (t == NULL || w->db == NULL || w->db_down)
		return;
	double mono = clk_mono();
	long long now = clk_now();
	/* A worker with no pilots still keeps its index warm, so the first
	** pilot after a quiet spell is not slowed by a big refresh. */
	int rc = wk_tq_config(w);
	if (rc == GB_OK)
		rc = wk_tq_fresh(w, 0);
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "task queue index refresh");
		return;
	}
	if (mono >= t->lease_next) {
		int leader = 0;
		rc = st_tq_lease(w->db, w->id, now, w->cfg->leader_lease,
				 &leader);
		if (rc != GB_OK) {
			wk_db_failed(w, rc, "leader lease");
			return;
		}
		if (leader != t->leader)
			log_info("%s the DIRAC leader (priorities, history, "
				 "cleanup)",
				 leader ? "became" : "is no longer");
		t->leader = leader;
		/* Renew well before the lease ends. */
		t->lease_next = mono + w->cfg->leader_lease / 3.0;
	}
	if (t->leader)
		leader_work(w, mono, now);
}
