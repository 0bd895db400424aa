/*
** record.c — the decision record of each kind (record.h).
*/
#include "report/record.h"

#include <jansson.h>

#include "base/jsonutil.h"

#include "report/decrec.h"
#include "report/report.h"
#include "report/report_analysis.h"
#include "report/report_jobs.h"

char *rec_task(const struct md_task *d, json_t **kept)
{
	if (kept)
		*kept = NULL;
	return d ? dr_finish_keep(rpt_decision_json(&d->dec), NULL,
				  DR_RECORD_MAX, kept)
		 : NULL;
}

char *rec_jobs(const struct md_jobs *d, json_t **kept)
{
	if (kept)
		*kept = NULL;
	if (d == NULL)
		return NULL;
	return dr_finish_keep(rpj_detail_json(&d->req, d->queues, d->nqueues,
					      &d->dec, &d->plan, &d->params,
					      &d->env),
			      NULL, DR_RECORD_MAX, kept);
}

char *rec_analysis(const struct md_analysis *d, json_t **kept)
{
	if (kept)
		*kept = NULL;
	return d ? dr_finish_keep(rpa_decision_json(d), NULL, DR_RECORD_MAX,
				  kept)
		 : NULL;
}

/* The stages of a match: each filter that cut, in table order, with what
** it left of the task queues considered (the PanDA-style summary). */
static int match_stages(const struct tq_result *m, json_t *st, json_t *by)
{
	int bad = 0;
	long in = (long)m->in;
	for (int f = 0; !bad && f < TQ_NFILTERS; f++) {
		const struct tq_filter_desc *fd = tq_filter((enum tq_filter_id)f);
		long cut = (long)m->rejected[f];
		if (cut == 0)
			continue;
		json_t *s = json_object();
		/* s belongs to st from here, so every failure below frees it */
		bad |= ju_push(st, s) || ju_set(s, "name", ju_str(fd->name)) ||
		       ju_set(s, "rule", ju_str(fd->rule)) ||
		       ju_set(s, "in", json_integer(in)) ||
		       ju_set(s, "out", json_integer(in - cut));
		if (!bad) {
			json_t *c = json_object();
			bad |= ju_set(s, "cut", c) ||
			       ju_set(c, "rule", ju_str(fd->rule)) ||
			       ju_set(c, "code", ju_str(fd->name)) ||
			       ju_set(c, "count", json_integer(cut)) ||
			       ju_set(by, fd->name, json_integer(cut));
		}
		in -= cut;
	}
	return bad;
}

/* A pilot's list as the record shows it: "ANY", one string, an array of
** several, or null when the pilot gave nothing. */
static json_t *list_json(const struct tq_strset *l, int any)
{
	if (any)
		return json_string("ANY");
	if (l->n == 0)
		return json_null();
	if (l->n == 1)
		return ju_str(l->v[0]);
	json_t *a = json_array();
	for (size_t i = 0; a && i < l->n; i++)
		if (ju_push(a, ju_str(l->v[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* One key, left out when the list is absent and `skip` is set. */
static int list_set(json_t *o, const char *k, const struct tq_strset *l,
		    int any, int skip)
{
	if (skip && !any && l->n == 0)
		return 0;
	return ju_set(o, k, list_json(l, any));
}

int rec_pilot_lists(json_t *rs, const struct tqi_pilot *d, int skip)
{
	int bad = 0;
	for (int f = 0; !bad && f < TQ_NPFIELDS; f++)
		bad |= list_set(rs, tq_pfield_names[f], &d->want[f], d->any[f],
				skip) ||
		       list_set(rs, tq_pfield_ban_names[f], &d->banned[f], 0,
				skip);
	return bad || list_set(rs, "requiredTags", &d->required, 0, skip) ||
	       list_set(rs, "ownerGroup", &d->groups, 0, skip) ||
	       list_set(rs, "ownerDN", &d->owners, 0, skip);
}

static json_t *or_null_int(int have, long long v)
{
	return have ? json_integer(v) : json_null();
}

char *rec_match(const struct rec_pilot *p, json_t **kept)
{
	if (kept)
		*kept = NULL;
	if (p == NULL || p->res == NULL)
		return NULL;
	const struct tq_result *m = p->res;
	json_t *o = json_object(), *by = json_object(), *st = json_array();
	json_t *rs = json_object();
	int bad = !o || !by || !st || !rs || match_stages(m, st, by);
	int y = p->matched;
	bad |= bad || ju_set(rs, "setup", ju_str(p->p.d.setup)) ||
	       ju_set(rs, "cpuTime", json_integer(p->p.d.cpu_time)) ||
	       rec_pilot_lists(rs, &p->p.d, 0) ||
	       ju_set(rs, "jobSharing", json_boolean(p->job_sharing));
	bad |= bad || ju_set(o, "decision", ju_str(y ? "matched" : "nomatch")) ||
	       ju_set(o, "code", ju_str(p->code)) ||
	       ju_set(o, "reason", ju_str(p->reason)) ||
	       ju_set(o, "pilot", ju_str(p->pilot_id)) ||
	       ju_set(o, "site", ju_str(p->p.site)) ||
	       json_object_set(o, "resource", rs) ||
	       ju_set(o, "tq", or_null_int(y, p->tq_id)) ||
	       ju_set(o, "job", or_null_int(y, p->job_id)) ||
	       ju_set(o, "userPriority", or_null_int(y, p->user_priority)) ||
	       ju_set(o, "tqOwnerDN", y ? ju_str(p->owner_dn) : json_null()) ||
	       ju_set(o, "tqOwnerGroup",
		      y ? ju_str(p->tq_owner_group) : json_null()) ||
	       ju_set(o, "tqCpuTime", or_null_int(y, p->tq_cpu)) ||
	       ju_set(o, "considered", json_integer((json_int_t)m->in)) ||
	       ju_set(o, "matched", json_integer((json_int_t)m->matched)) ||
	       ju_set(o, "empty", json_integer((json_int_t)m->empty)) ||
	       ju_set(o, "entrants", json_integer((json_int_t)m->entrants)) ||
	       ju_set(o, "topCpuTime", json_integer(m->top_cpu)) ||
	       ju_set(o, "lotteryTotal", json_real(m->lottery_total)) ||
	       json_object_set(o, "rejectedBy", by) ||
	       json_object_set(o, "stages", st);
	json_decref(rs);
	json_decref(by);
	json_decref(st);
	json_t *extra = bad ? NULL : json_object();
	if (bad || extra == NULL ||
	    ju_set(extra, "lostClaims", json_integer(p->lost))) {
		json_decref(extra);
		json_decref(o);
		return NULL;
	}
	return dr_finish_keep(o, extra, DR_RECORD_MAX, kept);
}

char *rec_timeout(const struct cdp_timeout_event *t,
		  const struct to_rebro_in *in,
		  const struct to_rebro_out *out, json_t **kept)
{
	if (kept)
		*kept = NULL;
	if (t == NULL || t->v == NULL)
		return NULL;
	const struct to_verdict *v = t->v;
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "jobID", json_integer(t->job_id)) ||
		  ju_set(o, "taskID", json_integer(t->task_id)) ||
		  ju_set(o, "queue", t->queue ? json_string(t->queue)
					      : json_null()) ||
		  ju_set(o, "gshare", json_string(t->gshare ? t->gshare : "")) ||
		  ju_set(o, "status", json_string(to_status_name(t->status))) ||
		  ju_set(o, "rule", ju_str(v->rule)) ||
		  ju_set(o, "what", json_string(v->what ? v->what : "")) ||
		  ju_set(o, "age", json_real(v->age_s)) ||
		  ju_set(o, "limit", json_real(v->limit_s)) ||
		  ju_set(o, "action", json_string(to_action_name(v->action)));
	if (!bad && in && out) {
		json_t *f = json_object();
		bad = ju_set(o, "fastRebro", f) ||
		      ju_set(f, "nQueue", json_real(in->nqueue)) ||
		      ju_set(f, "nRun", json_real(in->nrun)) ||
		      ju_set(f, "nQueueTotal", json_real(in->nqueue_total)) ||
		      ju_set(f, "ratioLimit", json_real(out->ratio_limit)) ||
		      ju_set(f, "fracLimit", json_real(out->frac_limit)) ||
		      ju_set(f, "nQueueLimit", json_real(out->nqueue_limit)) ||
		      ju_set(f, "excess", json_integer(out->excess));
	}
	bad = bad || ju_set(o, "decision",
			    json_string(to_action_name(v->action)));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return dr_finish_keep(o, NULL, DR_RECORD_MAX, kept);
}
