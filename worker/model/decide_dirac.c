/*
** decide_dirac.c — the DIRAC decision path (decide.h): the priorities the
** leader computes for every task queue, and one pilot's match.
**
** Both run over the task queue index (tqindex.h) the worker keeps in
** memory and `explain` builds from a match scenario, so the pilot a
** scenario describes meets the same views, priorities and draws.
*/
#include "model/decide.h"

#include <stdio.h>
#include <string.h>

#include "gb_error.h"
#include "rng.h"

int md_priorities(const struct tqi_index *x, const struct pr_config *cfg,
		  const struct pr_sample *hist, size_t nhist, long long now,
		  struct pr_tq *tqs, char *note, size_t notelen)
{
	if (x == NULL || cfg == NULL || (tqi_ntqs(x) && tqs == NULL))
		return GB_EINVAL;
	char scratch[8];
	tqi_stats(x, tqs);
	return pr_recompute(cfg, hist, nhist, now, tqs, tqi_ntqs(x),
			    note ? note : scratch,
			    note ? notelen : sizeof(scratch));
}

int md_job_sharing(const struct pr_config *cfg, const char *group)
{
	if (cfg == NULL || group == NULL)
		return 0;
	for (size_t i = 0; i < cfg->ngroups; i++)
		if (strcmp(cfg->groups[i].name, group) == 0)
			return cfg->groups[i].job_sharing;
	return 0;
}

int md_match_pilot(const struct tqi_index *x, const struct pr_config *cfg,
		   const struct md_pilot *p, uint64_t seed, double *weights,
		   uint8_t *verdict, struct md_match *out)
{
	if (x == NULL || p == NULL || out == NULL ||
	    (tqi_ntqs(x) && weights == NULL))
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	int js[TQ_MAX_PILOT_VALUES];
	size_t ng = p->d.groups.n < TQ_MAX_PILOT_VALUES ? p->d.groups.n
							: TQ_MAX_PILOT_VALUES;
	for (size_t i = 0; i < ng; i++) {
		js[i] = md_job_sharing(cfg, p->d.groups.v[i]);
		out->job_sharing += js[i];
	}
	tqi_resource(x, &p->d, js, &out->ids, &out->res);
	size_t n = 0, ncand = 0, cut[TQ_NFILTERS];
	const size_t *cand = NULL;
	const struct tq_view *v = tqi_views(x, &n);
	int rc = tqi_candidates(x, &out->res, &cand, &ncand, cut, verdict);
	if (rc != GB_OK)
		return rc;
	struct gb_rng rng;
	gb_rng_seed(&rng, seed);
	rc = tq_match_among(v, n, cand, ncand, cut, &out->res, &rng, weights,
			    verdict, &out->result);
	if (rc != GB_OK)
		return rc;
	tq_result_format(&out->result, out->reason, sizeof(out->reason));
	out->code = tq_result_code(&out->result);
	if (out->result.chosen < 0)
		return GB_OK;
	const struct tq_view *c = &v[out->result.chosen];
	out->tq_id = c->tq_id;
	out->job_id = out->result.job_id;
	out->user_priority = c->levels[out->result.level].user_priority;
	out->tq_cpu = c->cpu_time;
	out->owner = tqi_name(x, c->owner);
	out->owner_group = tqi_name(x, c->owner_group);
	return GB_OK;
}

int md_timeout(const struct to_job *j, const struct to_queue *q,
	       const struct prm_set *params, long long now,
	       struct md_timeout *out)
{
	if (j == NULL || params == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (q && (q->paused || q->disable_reassign))
		out->exempt = q->paused ? "paused" : "disableReassign";
	int rc = to_check(j, q, params, now, &out->v);
	if (rc < 0)
		return rc;
	out->fired = rc == 1;
	if (out->fired)
		return GB_OK;
	rc = to_next_check(j, q, params, now, &out->next_at);
	if (rc < 0)
		return rc;
	out->has_next = rc == 1;
	return GB_OK;
}
