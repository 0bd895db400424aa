/*
** explain.c — a scenario of any kind decided and recorded as the worker
** would (explain.h).
*/
#include "explain/explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "report/record.h"

const char *ex_kind_name(enum ex_kind k)
{
	static const char *const names[] = {"task", "jobs", "analysis",
					    "pilot", "timeout"};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k]
							      : "?";
}

static const char *num(struct arena *a, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", v);
	return arena_strdup(a, buf);
}

/* Keep a record text (malloc'd by record.h, freed here) in the arena, and
** its object `json` (a reference, or NULL; ex_result_release drops it). */
static int add(struct arena *a, struct ex_result *out, size_t cap, char *text,
	       json_t *json, const char *subject, const char *outcome,
	       const char *chosen, long long job_id)
{
	if (out->records == NULL) {
		out->records = arena_alloc(a, (cap ? cap : 1) *
						      sizeof(*out->records));
		if (out->records == NULL) {
			free(text);
			json_decref(json);
			return GB_ENOMEM;
		}
	}
	const char *kept = text ? arena_strdup(a, text) : NULL;
	free(text);
	if (kept == NULL) {
		json_decref(json);
		return GB_ENOMEM;
	}
	out->records[out->nrecords++] = (struct ex_record){
		.text = kept,
		.json = json,
		.subject = subject,
		.outcome = outcome,
		.chosen = chosen,
		.job_id = job_id,
	};
	return GB_OK;
}

static const char *chosen_cand(const struct dec_decision *d)
{
	return d->chosen >= 0 && (size_t)d->chosen < d->ncands
		       ? d->cands[d->chosen].name
		       : NULL;
}

static int run_task(json_t *root, struct arena *a, struct ex_result *out,
		    char *err, size_t errlen, int keep)
{
	struct scn_task_scenario *s = &out->in.task;
	int rc = scn_parse_task_scenario(root, a, s, err, errlen);
	if (rc != GB_OK)
		return rc;
	const struct prm_set set = {s->params, s->nparams};
	struct md_task *d = &out->out.task;
	rc = md_decide_task(&s->task, s->nuclei, s->nnuclei, &set, s->now,
			    s->seed, a, d);
	if (rc != GB_OK)
		return rc;
	json_t *k = NULL;
	char *t = rec_task(d, keep ? &k : NULL);
	return add(a, out, 1, t, k, num(a, s->task.task_id),
		   dec_outcome_name(d->dec.outcome), chosen_cand(&d->dec), 0);
}

static int run_jobs(json_t *root, struct arena *a, struct ex_result *out,
		    char *err, size_t errlen, const struct scj_opts *o)
{
	struct scj_scenario *s = &out->in.jobs;
	int rc = scj_parse_scenario_opts(root, a, o, s, err, errlen);
	if (rc != GB_OK)
		return rc;
	struct md_jobs *d = &out->out.jobs;
	rc = scj_run(s, a, d);
	if (rc != GB_OK)
		return rc;
	json_t *k = NULL;
	char *t = rec_jobs(d, o && o->keep_json ? &k : NULL);
	return add(a, out, 1, t, k, num(a, s->req.t.task_id),
		   dec_outcome_name(d->dec.outcome), chosen_cand(&d->dec), 0);
}

static int run_analysis(json_t *root, struct arena *a, struct ex_result *out,
			char *err, size_t errlen, const struct scj_opts *o)
{
	struct sca_scenario *s = &out->in.analysis;
	int rc = sca_parse_scenario_opts(root, a, o, s, err, errlen);
	if (rc != GB_OK)
		return rc;
	struct md_analysis *d = &out->out.analysis;
	rc = sca_run(s, a, d);
	if (rc != GB_OK)
		return rc;
	const char *outcome = d->throttle.throttled
				      ? "throttled"
				      : dec_outcome_name(d->dec.outcome);
	json_t *k = NULL;
	char *t = rec_analysis(d, o && o->keep_json ? &k : NULL);
	return add(a, out, 1, t, k, num(a, s->job.req.t.task_id),
		   outcome, d->throttle.throttled ? NULL : chosen_cand(&d->dec),
		   0);
}

static int run_match(json_t *root, struct arena *a, struct ex_result *out,
		     char *err, size_t errlen, int keep)
{
	struct scm_scenario *s = &out->in.match;
	int rc = scm_parse_scenario(root, a, s, err, errlen);
	if (rc != GB_OK)
		return rc;
	struct scm_result *r = &out->out.match;
	rc = scm_run(s, a, r);
	if (rc != GB_OK)
		return rc;
	const struct cdt_pilot *p = &s->pilot;
	const struct md_match *m = &r->m;
	int matched = m->result.chosen >= 0;
	const struct rec_pilot rp = {
		.pilot_id = p->pilot_id,
		.p = scm_md_pilot(p),
		.job_sharing = m->job_sharing > 0,
		.res = &m->result,
		.matched = matched,
		.code = m->code,
		.reason = m->reason,
		.tq_id = m->tq_id,
		.job_id = m->job_id,
		.user_priority = m->user_priority,
		.tq_cpu = m->tq_cpu,
		.owner_dn = m->owner,
		.tq_owner_group = m->owner_group,
	};
	json_t *k = NULL;
	char *t = rec_match(&rp, keep ? &k : NULL);
	return add(a, out, 1, t, k, p->pilot_id ? p->pilot_id : "",
		   matched ? "matched" : "nomatch",
		   matched ? num(a, m->job_id) : NULL, 0);
}

static int run_timeout(json_t *root, struct arena *a, struct ex_result *out,
		       char *err, size_t errlen, int keep)
{
	struct sct_scenario *s = &out->in.timeout;
	int rc = sct_parse_scenario(root, a, s, err, errlen);
	if (rc != GB_OK)
		return rc;
	struct sct_result *r = &out->out.timeout;
	rc = sct_run(s, a, r);
	for (size_t i = 0; rc == GB_OK && i < s->njobs; i++) {
		const struct sct_job *j = &s->jobs[i];
		if (!r->jobs[i].fired)
			continue;
		const struct cdp_timeout_event ev = {
			.job_id = j->j.job_id,
			.task_id = j->task_id,
			.queue = j->queue,
			.gshare = j->gshare,
			.status = j->j.status,
			.v = &r->jobs[i].v,
		};
		json_t *k = NULL;
		char *t = rec_timeout(&ev, NULL, NULL, keep ? &k : NULL);
		rc = add(a, out, s->njobs, t, k, num(a, j->j.job_id),
			 to_action_name(r->jobs[i].v.action), NULL,
			 j->j.job_id);
	}
	return rc;
}

enum ex_kind ex_kind_of(json_t *root)
{
	/* "kind" first: a timeout scenario also has "queues" (an object). */
	if (sct_is_timeout_scenario(root) ||
	    (json_is_object(root) && json_object_get(root, "kind")))
		return EX_TIMEOUT;
	if (sca_is_analysis_scenario(root))
		return EX_ANALYSIS;
	if (json_is_object(root) && json_object_get(root, "queues"))
		return EX_JOBS;
	if (scm_is_match_scenario(root))
		return EX_MATCH;
	return EX_TASK;
}

int ex_run(json_t *root, struct arena *a, struct ex_result *out, char *err,
	   size_t errlen)
{
	return ex_run_opts(root, a, out, err, errlen, NULL);
}

int ex_run_opts(json_t *root, struct arena *a, struct ex_result *out,
		char *err, size_t errlen, const struct ex_opts *o)
{
	const struct scj_opts so = {.no_sw_text = o && o->no_sw_text,
				    .memo = o ? o->memo : NULL,
				    .keep_json = o && o->keep_json};
	const int keep = so.keep_json;
	if (root == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	out->kind = ex_kind_of(root);
	switch (out->kind) {
	case EX_TIMEOUT:
		return run_timeout(root, a, out, err, errlen, keep);
	case EX_ANALYSIS:
		return run_analysis(root, a, out, err, errlen, &so);
	case EX_JOBS:
		return run_jobs(root, a, out, err, errlen, &so);
	case EX_MATCH:
		return run_match(root, a, out, err, errlen, keep);
	case EX_TASK:
		break;
	}
	return run_task(root, a, out, err, errlen, keep);
}

void ex_result_release(struct ex_result *r)
{
	for (size_t i = 0; r && r->records && i < r->nrecords; i++) {
		json_decref(r->records[i].json);
		r->records[i].json = NULL;
	}
}
