/*
** route_tq.c — the DIRAC side's state and its requests but pilot.match:
** the worker's task queue index and configuration (struct wk_tq), job.submit
** (jobs into task queues, TQ-01..03), the DIRAC form of job.status (what
** the jobs do: the running-job history the share corrector reads, PR-04),
** and the periodic work of its tick hook: keep the task queue index fresh on
** every worker and,
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
#include "model/decide.h"
#include "base/log.h"
#include "pipeline/pipeline_internal.h"
#include "store/store_tq.h"

#define WK_CFG_RELOAD_S 30.0 /* groups/segments re-read period */

/* ---- job.submit -------------------------------------------------------- */

static int decode_submit(const void *body, size_t len, struct arena *a,
			 void *req, struct cod_error *err)
{
	return cdt_decode_submit(body, len, a, req, err);
}

static int prepare_submit(struct wk_worker *w, void *req)
{
	(void)req;
	return wk_tq_config(w);
}

static int decide_submit(struct wk_txn *t, void *req)
{
	struct wk_worker *w = t->w;
	const struct cdt_submit *sub = req;
	struct st_tq_submitted out;
	memset(&out, 0, sizeof(out));
	int rc = st_tq_submit(w->db, sub->jobs, sub->njobs, w->tq->seg,
			      w->tq->nseg, t->request_id, t->now, t->a, &out);
	if (rc != GB_OK)
		return rc;
	w->n_submitted += sub->njobs;
	wk_mx_outcome(w, MX_O_ACCEPTED);
	wk_txn_log(t, LOG_LVL_INFO, NULL, NULL, "job.submit %s: %zu job(s) into %zu task queue(s), "
			    "%zu new",
		   t->request_id, sub->njobs, out.tqs, out.new_tqs);
	return GB_OK;
}

/* A job the store refuses (a duplicate job id, an inconsistent row) is
** refused for good, with the store's own words. */
static int refuse_submit(const struct wk_txn *t, const void *req, int rc,
			 const char **field, char *problem, size_t n)
{
	(void)req;
	if (rc != GB_EDUP && rc != GB_EINVAL)
		return 0;
	*field = "jobs";
	snprintf(problem, n, "%s", t->db_error[0] ? t->db_error
						  : gb_strerror(rc));
	return 1;
}


/* ---- job.status (DIRAC) --------------------------------------------------- */

int wk_status_dirac(struct wk_txn *t, const struct cdt_status *s)
{
	struct wk_worker *w = t->w;
	int found = 0, applied = 0;
	int rc = st_tq_job_status(w->db, s, t->now, &found, &applied);
	if (rc != GB_OK)
		return rc;
	w->n_status++;
	wk_mx_outcome(w, found && applied ? MX_O_UPDATED : MX_O_IGNORED);
	if (!found)
		log_warn("job.status %s: job %lld is unknown; ignored",
			 t->request_id, s->job_id);
	else
		log_debug("job.status %s: job %lld %s%s", t->request_id,
			  s->job_id, cdt_status_name(s->status),
			  applied ? "" : " (stale, ignored)");
	return GB_OK;
}

/* ---- the index and the configuration ------------------------------------ */

static int tq_init(struct wk_worker *w)
{
	struct wk_tq *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return GB_ENOMEM;
	t->idx = tqi_new();
	if (t->idx == NULL) {
		free(t);
		return GB_ENOMEM;
	}
	arena_init(&t->cfg_arena, 4u << 20);
	w->tq = t;
	return GB_OK;
}

static void tq_free(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	if (t == NULL)
		return;
	if (t->leader && w->db && !w->db_down &&
	    st_tq_lease_release(w->db, w->id) == GB_OK)
		log_info("gave up the DIRAC leader lease");
	tqi_free(t->idx);
	arena_free(&t->cfg_arena);
	free(t);
	w->tq = NULL;
}

int wk_tq_config(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	double now = clk_mono();
	if (t->cfg_at > 0 && now - t->cfg_at < WK_CFG_RELOAD_S)
		return GB_OK;
	struct arena fresh;
	arena_init(&fresh, 4u << 20);
	struct pr_config c;
	long long *seg = NULL;
	size_t nseg = 0;
	int rc = st_tq_config_load(w->db, &fresh, &c, &seg, &nseg);
	if (rc != GB_OK) {
		arena_free(&fresh);
		/* Keep what we had; a first load must succeed. */
		return t->cfg_at > 0 ? GB_OK : rc;
	}
	arena_free(&t->cfg_arena);
	t->cfg_arena = fresh;
	t->pcfg = c;
	t->seg = seg;
	t->nseg = nseg;
	t->cfg_at = now;
	return GB_OK;
}


int wk_tq_fresh(struct wk_worker *w, int force)
{
	struct wk_tq *t = w->tq;
	double now = clk_mono();
	struct wk_tqs_stats st;
	memset(&st, 0, sizeof(st));
	int rc;
	if (!t->sync.loaded) {
		rc = wk_tqs_load(w->db, t->idx, &t->sync, &st);
		if (rc == GB_OK)
			log_info("task queue index loaded: %zu task queues, %zu "
				 "waiting jobs",
				 tqi_ntqs(t->idx), tqi_njobs(t->idx));
	} else if (force ||
		   now - t->refreshed_at >= w->cfg->index_refresh_ms / 1e3) {
		rc = wk_tqs_refresh(w->db, t->idx, &t->sync, &st);
		if (rc == GB_OK && (st.tqs_added || st.tqs_removed))
			log_debug("task queue index: +%zu -%zu TQs, +%zu -%zu "
				  "jobs, %zu priorities changed",
				  st.tqs_added, st.tqs_removed, st.jobs_added,
				  st.jobs_removed, st.priorities_changed);
	} else {
		return GB_OK;
	}
	if (rc != GB_OK) {
		/* A half-applied refresh is repaired by a full load. */
		t->sync.loaded = 0;
		return rc;
	}
	t->refreshed_at = now;
	return GB_OK;
}

/* ---- the leader's periodic work ---------------------------------------- */

/* PR-01..08: recompute every priority from this worker's (fresh) index
** (md_priorities, what `explain` runs on a match scenario), store them,
** then let the index carry them. */
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
		rc = md_priorities(t->idx, &t->pcfg, hist, nhist, now, tqs,
				   note, sizeof(note));
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
		/* Bounded per pass, like the cleanup: a backlog goes a batch
		** every few seconds. */
		size_t pruned = 0;
		rc = st_tq_removals_prune(w->db, now - c->removal_log_keep,
					  10000, &pruned);
		if (rc != GB_OK) {
			wk_db_failed(w, rc, "removal log pruning");
			return;
		}
		if (pruned)
			log_debug("pruned %zu removal log row(s)", pruned);
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

static void tick(struct wk_worker *w)
{
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

const struct wk_route wk_route_submit = {
	.key = "job.submit",
	/* the index and configuration both DIRAC routes and the tick use */
	.init = tq_init,
	.fini = tq_free,
	.tick = tick,
	.size = sizeof(struct cdt_submit),
	.decode = decode_submit,
	.prepare = prepare_submit,
	.decide = decide_submit,
	.refuse = refuse_submit,
};
