/*
** report.c — a task-brokerage decision as JSON (report.h), the detail of
** its record.
**
** The builders read only the struct dec_decision: candidate names live in
** dec_candidate.name, reasons keep their static templates and numbers, and
** dec_reason_format renders them here, once. Nothing is looked up in the
** input the decision was made from, so the worker records a decision
** without its inputs at hand.
*/
#include "report/report.h"

#include "base/jsonutil.h"

json_t *rpt_finish_json(json_t *root, json_t *cands,
			const struct dec_decision *d, int bad)
{
	json_t *stages = bad ? NULL : json_array();
	bad |= stages == NULL;
	for (size_t i = 0; !bad && d && i < d->nstages; i++)
		bad |= ju_push(stages, ju_stage_json(&d->stages[i]));
	if (bad) {
		json_decref(root);
		json_decref(cands);
		json_decref(stages);
		return NULL;
	}
	/* ju_set steals its value even when it fails: call both */
	if (ju_set(root, "candidates", cands) |
	    ju_set(root, "stages", stages)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

json_t *rpt_decision_json(const struct dec_decision *d)
{
	if (d == NULL || (d->ncands && d->cands == NULL))
		return NULL;
	json_t *root = json_object(), *cands = json_array();
	int bad = root == NULL || cands == NULL;
	for (size_t i = 0; !bad && i < d->ncands; i++)
		bad |= ju_push(cands, ju_candidate_json(&d->cands[i],
							d->cands[i].name, 0));
	const char *chosen = NULL;
	if (d->outcome == DEC_ASSIGNED && d->chosen >= 0 &&
	    (size_t)d->chosen < d->ncands)
		chosen = d->cands[d->chosen].name;
	bad = bad ||
	      ju_set(root, "decision", ju_str(dec_outcome_name(d->outcome))) ||
	      ju_set(root, "nucleus", ju_str(chosen)) ||
	      (d->outcome == DEC_PENDING &&
	       ju_set(root, "retryAfter", json_integer(d->retry_after_s))) ||
	      ju_set(root, "note", d->note[0] ? ju_str(d->note) : json_null());
	return rpt_finish_json(root, cands, d, bad);
}
