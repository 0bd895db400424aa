/*
** report_analysis.c — the JSON and the table of an analysis-brokerage decision
** (declared in report_analysis.h).
**
** Like report_jobs.c, reasons keep their static templates and numbers
** until dec_reason_format renders them here, once, when asked; and the
** table lists the best queues first and the dropped ones grouped by the
** stage that dropped them, so "why not this queue?" is one group. What is
** different: the throttle verdict comes first (a throttled task has no
** queue section at all), and the weights are W_s x W_q (AJ-25/26) rather
** than PJ-30's. The plan part (best queues, each job activated or
** assigned, unassigned jobs) is the production record's (rpj_plan_json).
*/
#include "report/report_analysis.h"

#include <math.h>
#include <string.h>

#include "base/jsonutil.h"
#include "gb_error.h"
#include "report/report_jobs.h"

#define RPA_NAME_MAX 40 /* widest queue column */
#define RPA_SHOW_IDS 5  /* job IDs printed per queue line */

static const char *qname(const struct ab_queue *qs,
			 const struct dec_decision *d, size_t i)
{
	if (d && d->cands && i < d->ncands && d->cands[i].name)
		return d->cands[i].name;
	return qs && qs[i].q && qs[i].q->name ? qs[i].q->name : "?";
}

/* The arguments agree with each other (see the contract in the header). */
static int consistent(const struct gm_request *r, const struct ab_queue *qs,
		      size_t nq, const struct dec_decision *d,
		      const struct ab_plan *plan, const long *job_queue,
		      const struct an_throttle *th,
		      const struct an_user_load *u)
{
	if (r == NULL || th == NULL || u == NULL ||
	    (r->njobs && r->jobs == NULL))
		return 0;
	if (th->throttled)
		return 1;
	if (d == NULL || plan == NULL || d->ncands != nq ||
	    (nq && (qs == NULL || d->cands == NULL)) ||
	    (r->njobs && job_queue == NULL) || plan->nbest > AB_BEST_N ||
	    d->nstages > DEC_MAX_STAGES)
		return 0;
	for (size_t b = 0; b < plan->nbest; b++)
		if (plan->best[b] < 0 || (size_t)plan->best[b] >= nq)
			return 0;
	for (size_t j = 0; j < r->njobs; j++)
		if (job_queue[j] >= (long)nq)
			return 0;
	return 1;
}

static const char *decision_word(const struct dec_decision *d,
				 const struct an_throttle *th)
{
	return th->throttled ? "throttled" : dec_outcome_name(d->outcome);
}

static double share_percent(const struct an_user_load *u)
{
	return u->share_target > 0 ? 100.0 * u->share_usage / u->share_target
				   : NAN;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *throttle_json(const struct an_throttle *th)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "throttled", json_boolean(th->throttled));
	bad |= ju_set(o, "rule", th->throttled ? ju_str(th->rule) : json_null());
	bad |= ju_set(o, "code", th->throttled ? ju_str(th->code) : json_null());
	bad |= ju_set(o, "value", th->throttled ? jnum(th->value) : json_null());
	bad |= ju_set(o, "limit", th->throttled ? jnum(th->limit) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *owner_json(const struct an_user_load *u)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "countsOf",
			 ju_str(u->working_group ? "workingGroup" : "user"));
	bad |= ju_set(o, "runningJobs", jnum(u->running_jobs));
	bad |= ju_set(o, "queuedJobs", jnum(u->queued_jobs));
	bad |= ju_set(o, "runningCores", jnum(u->running_cores));
	bad |= ju_set(o, "queuedCores", jnum(u->queued_cores));
	bad |= ju_set(o, "quotaExceeded", json_boolean(u->quota_exceeded));
	bad |= ju_set(o, "userAnalysis", json_boolean(u->user_analysis));
	bad |= ju_set(o, "shareUsage", jnum(u->share_usage));
	bad |= ju_set(o, "shareTarget", jnum(u->share_target));
	bad |= ju_set(o, "sharePercent", jnum(share_percent(u)));
	bad |= ju_set(o, "hiSiteSlots", jnum(u->hi_site_slots));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The production candidate entry plus the analysis facts of the queue. */
static json_t *cand_json(const struct ab_queue *q,
			 const struct dec_candidate *c, const char *name)
{
	json_t *o = ju_candidate_json(c, name, 1);
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "type", ju_str(gm_queue_type_name(q->type)));
	bad |= ju_set(o, "siteClass",
		      ju_str(gm_site_class_name(q->site_class)));
	bad |= ju_set(o, "userQueued", jnum(q->load.nq_user));
	bad |= ju_set(o, "userRunning", jnum(q->load.nr_user));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *rpa_decision_json(const struct md_analysis *m)
{
	if (m == NULL)
		return NULL;
	const struct gm_request *r = &m->req;
	const struct an_throttle *th = &m->throttle;
	int brokered = !th->throttled;
	const struct ab_queue *qs = brokered ? m->aqs : NULL;
	const struct dec_decision *d = &m->dec;
	size_t nq = m->nqueues;
	if (!consistent(r, qs, nq, d, &m->aplan, m->plan.job_queue, th,
			&m->user))
		return NULL;
	json_t *root = json_object();
	json_t *cands = json_array(), *stages = json_array();
	int bad = !root || !cands || !stages;
	for (size_t i = 0; brokered && !bad && i < nq; i++)
		bad |= ju_push(cands, cand_json(&qs[i], &d->cands[i],
						qname(qs, d, i)));
	for (size_t i = 0; brokered && !bad && i < d->nstages; i++)
		bad |= ju_push(stages, ju_stage_json(&d->stages[i]));
	if (bad) {
		json_decref(root);
		json_decref(cands);
		json_decref(stages);
		return NULL;
	}
	bad |= ju_set(root, "taskID", json_integer(r->t.task_id));
	bad |= ju_set(root, "gshare", ju_str(r->t.gshare));
	bad |= ju_set(root, "user", ju_str(r->an.user));
	bad |= ju_set(root, "workingGroup", ju_str(r->an.working_group));
	bad |= ju_set(root, "taskClass",
		      ju_str(gm_task_class_name(m->task_class)));
	bad |= ju_set(root, "decision", ju_str(decision_word(d, th)));
	if (th->throttled)
		bad |= ju_set(root, "retryAfter",
			      json_integer(AB_PENDING_RETRY_S));
	else if (d->outcome == DEC_PENDING)
		bad |= ju_set(root, "retryAfter",
			      json_integer(d->retry_after_s));
	bad |= ju_set(root, "throttle", throttle_json(th));
	bad |= ju_set(root, "owner", owner_json(&m->user));
	bad |= ju_set(root, "localityDropped",
		      json_boolean(brokered && m->aplan.locality_dropped));
	bad |= ju_set(root, "note",
		      brokered && d->note[0] ? ju_str(d->note) : json_null());
	/* best, assignments (each job activated or assigned) and unassigned,
	** the shape of the production record */
	bad |= rpj_plan_json(root, r, m->queues, d, &m->plan) != GB_OK;
	bad |= ju_set(root, "candidates", cands);
	bad |= ju_set(root, "stages", stages);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* ---- table -------------------------------------------------------------- */

struct tctx {
	FILE *out;
	const struct gm_request *r;
	const struct ab_queue *qs;
	const struct dec_decision *d;
	const struct ab_plan *plan;
	const long *job_queue;
	int w; /* queue column width */
};

static void row(const struct tctx *t, const char *mark, const char *name,
		const char *weight, const struct dec_reason *x)
{
	char buf[512] = "";
	if (x->fmt)
		dec_reason_format(x, buf, sizeof(buf));
	fprintf(t->out, "%-3s %-*.*s %-10s %-6s %-14s %s\n", mark, t->w, t->w,
		name, weight, x->rule ? x->rule : "", x->code ? x->code : "",
		buf);
}

static void dropped_rows(const struct tctx *t, size_t i)
{
	const struct dec_candidate *c = &t->d->cands[i];
	unsigned nr = c->nreasons < DEC_MAX_REASONS ? c->nreasons
						    : DEC_MAX_REASONS;
	const char *name = qname(t->qs, t->d, i);
	for (unsigned k = 0; k < nr; k++)
		row(t, "", k ? "" : name, k ? "" : "-", &c->reasons[k]);
	if (nr == 0)
		fprintf(t->out, "%-3s %-*.*s %-10s %s\n", "", t->w, t->w, name,
			"-", c->stage ? c->stage : "?");
	if (c->nreasons > DEC_MAX_REASONS)
		fprintf(t->out, "%-3s %-*s (+%u more reasons)\n", "", t->w, "",
			c->nreasons - DEC_MAX_REASONS);
	if (c->wexpl.fmt)
		row(t, "", "", "weighed", &c->wexpl);
}

/* The candidates dropped at stage si's name, under a header; once per
** name (AJ-28's second pass repeats no name, but be safe). */
static void dropped_group(const struct tctx *t, size_t si)
{
	const struct dec_decision *d = t->d;
	const char *name = d->stages[si].name;
	for (size_t s = 0; name && s < si; s++)
		if (d->stages[s].name && strcmp(d->stages[s].name, name) == 0)
			return;
	size_t n = 0;
	for (size_t i = 0; name && i < d->ncands; i++)
		n += dec_dropped(&d->cands[i]) &&
		     strcmp(d->cands[i].stage, name) == 0;
	if (n == 0)
		return;
	fprintf(t->out, "-- dropped at %s (%s): %zu queue%s --\n", name,
		d->stages[si].rule ? d->stages[si].rule : "?", n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < d->ncands; i++)
		if (dec_dropped(&d->cands[i]) &&
		    strcmp(d->cands[i].stage, name) == 0)
			dropped_rows(t, i);
}

/* "4711, 4712, ... (+17)" for the jobs of queue qi (-1: none). */
static size_t job_list(const struct gm_request *r, const long *job_queue,
		       long qi, char *buf, size_t n)
{
	size_t cnt = 0, used = 0;
	buf[0] = '\0';
	for (size_t j = 0; j < r->njobs; j++) {
		if (job_queue[j] != qi)
			continue;
		if (cnt++ < RPA_SHOW_IDS && used < n) {
			int w = snprintf(buf + used, n - used, "%s%lld",
					 cnt > 1 ? ", " : "", r->jobs[j].job_id);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	if (cnt > RPA_SHOW_IDS && used < n)
		snprintf(buf + used, n - used, ", ... (+%zu)",
			 cnt - RPA_SHOW_IDS);
	return cnt;
}

static void throttle_lines(FILE *out, const struct gm_request *r,
			   const struct an_throttle *th,
			   const struct an_user_load *u)
{
	const char *who = u->working_group ? "working group" : "user";
	const char *name = u->working_group && r->an.working_group
				   ? r->an.working_group
				   : (r->an.user ? r->an.user : "?");
	fprintf(out, "-- throttle (AJ-01..AJ-04), counts of %s %s --\n", who,
		name);
	fprintf(out, "  running %g jobs, %g cores; queued %g jobs, %g cores; "
		     "disk quota %s\n",
		u->running_jobs, u->running_cores, u->queued_jobs,
		u->queued_cores, u->quota_exceeded ? "EXCEEDED" : "ok");
	if (u->user_analysis)
		fprintf(out, "  User Analysis share: usage %g of target %g "
			     "(%.4g %%), hi-site slots %g\n",
			u->share_usage, u->share_target, share_percent(u),
			u->hi_site_slots);
	else
		fprintf(out, "  share %s: not User Analysis, AJ-04 does not "
			     "apply\n",
			r->t.gshare ? r->t.gshare : "?");
	if (th->throttled)
		fprintf(out, "  THROTTLED by %s (%s): %.6g > limit %.6g\n",
			th->rule ? th->rule : "?", th->code ? th->code : "?",
			th->value, th->limit);
	else
		fprintf(out, "  not throttled\n");
}

static void summary(const struct tctx *t)
{
	const struct dec_decision *d = t->d;
	const struct ab_plan *p = t->plan;
	char buf[512];
	fprintf(t->out, "===== Analysis brokerage summary =====\n");
	fprintf(t->out, "the number of initial candidates: %d\n",
		d->nstages ? d->stages[0].in : (int)d->ncands);
	for (size_t i = 0; i < d->nstages; i++) {
		dec_stage_format(&d->stages[i], buf, sizeof(buf));
		fprintf(t->out, "%s\n", buf);
	}
	fprintf(t->out, "the number of final candidates: %zu\n", p->nbest);
	if (p->locality_dropped)
		fprintf(t->out, "AJ-28: second pass without the locality check "
				"(AJ-08) after the first left no queue\n");
	if (d->note[0])
		fprintf(t->out, "note: %s\n", d->note);
	size_t used = 0, placed = 0;
	for (size_t b = 0; b < p->nbest; b++) {
		size_t cnt = job_list(t->r, t->job_queue, p->best[b], buf,
				      sizeof(buf));
		if (cnt == 0)
			continue;
		fprintf(t->out, "  %-*.*s %5zu job%s: %s\n", t->w, t->w,
			qname(t->qs, d, (size_t)p->best[b]), cnt,
			cnt == 1 ? " " : "s", buf);
		used++;
		placed += cnt;
	}
	size_t un = job_list(t->r, t->job_queue, -1, buf, sizeof(buf));
	fprintf(t->out, "unassigned: %zu job%s%s%s\n", un, un == 1 ? "" : "s",
		un ? ": " : "", un ? buf : "");
	if (d->outcome == DEC_ASSIGNED && d->chosen >= 0 &&
	    (size_t)d->chosen < d->ncands)
		fprintf(t->out,
			"decision: assigned %zu of %zu jobs to %zu queue%s, "
			"best %s (weight %.4g)\n",
			placed, t->r->njobs, used, used == 1 ? "" : "s",
			qname(t->qs, d, (size_t)d->chosen),
			d->cands[d->chosen].weight);
	else
		fprintf(t->out,
			"decision: pending, %zu jobs retried after %d s\n",
			t->r->njobs, d->retry_after_s);
}

void rpa_print_decision(FILE *out, const struct md_analysis *m)
{
	if (m == NULL)
		return;
	const struct gm_request *r = &m->req;
	const struct an_throttle *th = &m->throttle;
	const struct an_user_load *u = &m->user;
	const struct ab_queue *qs = th->throttled ? NULL : m->aqs;
	const struct dec_decision *d = &m->dec;
	const struct ab_plan *plan = &m->aplan;
	const long *job_queue = m->plan.job_queue;
	size_t nq = m->nqueues;
	enum an_task_class tclass = m->task_class;
	if (out == NULL || !consistent(r, qs, nq, d, plan, job_queue, th, u))
		return;
	const char *cls = gm_task_class_name(tclass);
	fprintf(out, "== Analysis brokerage: task %lld of %s, gshare %s, "
		     "class %s, %zu job%s, %zu queue%s ==\n",
		r->t.task_id, r->an.user ? r->an.user : "?",
		r->t.gshare ? r->t.gshare : "?", cls ? cls : "?", r->njobs,
		r->njobs == 1 ? "" : "s", nq, nq == 1 ? "" : "s");
	throttle_lines(out, r, th, u);
	if (th->throttled) {
		fprintf(out, "decision: throttled, no queue looked at; %zu "
			     "job%s wait, retried after %d s\n",
			r->njobs, r->njobs == 1 ? "" : "s", AB_PENDING_RETRY_S);
		return;
	}
	struct tctx t = {out, r, qs, d, plan, job_queue, 5};
	for (size_t i = 0; i < nq; i++) {
		int len = (int)strlen(qname(qs, d, i));
		if (len > t.w)
			t.w = len < RPA_NAME_MAX ? len : RPA_NAME_MAX;
	}
	fprintf(out, "%-3s %-*s %-10s %-6s %-14s %s\n", "", t.w, "QUEUE",
		"WEIGHT", "RULE", "CODE", "DETAIL");
	char rank[24], wt[32];
	for (size_t b = 0; b < plan->nbest; b++) {
		const struct dec_candidate *c = &d->cands[plan->best[b]];
		snprintf(rank, sizeof(rank), "*%zu", b + 1);
		snprintf(wt, sizeof(wt), "%.4g", c->weight);
		row(&t, rank, qname(qs, d, (size_t)plan->best[b]), wt,
		    &c->wexpl);
	}
	for (size_t s = 0; s < d->nstages; s++)
		dropped_group(&t, s);
	size_t other = 0;
	for (size_t i = 0; i < nq; i++) {
		int in_best = 0;
		for (size_t b = 0; b < plan->nbest; b++)
			in_best |= (size_t)plan->best[b] == i;
		if (in_best)
			continue;
		if (!dec_dropped(&d->cands[i])) {
			snprintf(wt, sizeof(wt), "%.4g", d->cands[i].weight);
			row(&t, "", qname(qs, d, i), wt, &d->cands[i].wexpl);
			continue;
		}
		int listed = 0;
		for (size_t s = 0; s < d->nstages; s++)
			listed |= d->stages[s].name &&
				  strcmp(d->stages[s].name,
					 d->cands[i].stage) == 0;
		if (listed)
			continue;
		if (other++ == 0)
			fprintf(out, "-- dropped at other stages --\n");
		dropped_rows(&t, i);
	}
	summary(&t);
}
