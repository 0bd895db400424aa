/*
** report.c — how a decision is shown: as JSON (`explain --json`, the
** decision record) and as a table with the PanDA-style stage summary
** (`explain`). Declared in report.h.
**
** The renderers read only the struct dec_decision: candidate names live in
** dec_candidate.name, reasons keep their static templates and numbers, and
** dec_reason_format renders them here, once, when someone asks. Nothing is
** looked up in the input the decision was made from, so the worker can
** render a decision after its inputs are gone.
*/
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonutil.h"

json_t *rpt_decision_json(const struct dec_decision *d)
{
	if (d == NULL || (d->ncands && d->cands == NULL))
		return NULL;
	json_t *root = json_object();
	json_t *cands = json_array(), *stages = json_array();
	int bad = root == NULL || cands == NULL || stages == NULL;
	const char *chosen = NULL;
	if (d->outcome == DEC_ASSIGNED && d->chosen >= 0 &&
	    (size_t)d->chosen < d->ncands)
		chosen = d->cands[d->chosen].name;
	for (size_t i = 0; !bad && i < d->ncands; i++)
		bad |= ju_push(cands, ju_candidate_json(&d->cands[i],
							d->cands[i].name, 0));
	for (size_t i = 0; !bad && i < d->nstages; i++)
		bad |= ju_push(stages, ju_stage_json(&d->stages[i]));
	if (bad) {
		json_decref(root);
		json_decref(cands);
		json_decref(stages);
		return NULL;
	}
	bad |= ju_set(root, "decision", ju_str(dec_outcome_name(d->outcome)));
	bad |= ju_set(root, "nucleus", ju_str(chosen));
	if (d->outcome == DEC_PENDING)
		bad |= ju_set(root, "retryAfter",
			      json_integer(d->retry_after_s));
	bad |= ju_set(root, "note", d->note[0] ? ju_str(d->note) : json_null());
	bad |= ju_set(root, "candidates", cands);
	bad |= ju_set(root, "stages", stages);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

void rpt_print_decision(FILE *out, const struct dec_decision *d,
			const char *title)
{
	if (out == NULL || d == NULL || (d->ncands && d->cands == NULL))
		return;
	int w = 7; /* "NUCLEUS" */
	for (size_t i = 0; i < d->ncands; i++) {
		const char *nm = d->cands[i].name ? d->cands[i].name : "?";
		int len = (int)strlen(nm);
		if (len > w)
			w = len < 40 ? len : 40;
	}
	if (title)
		fprintf(out, "== %s ==\n", title);
	fprintf(out, "  %-*s %-11s %-6s %-20s %s\n", w, "NUCLEUS", "WEIGHT",
		"RULE", "CODE", "DETAIL");
	char buf[512];
	for (size_t i = 0; i < d->ncands; i++) {
		const struct dec_candidate *c = &d->cands[i];
		const char *nm = c->name ? c->name : "?";
		int chosen = d->outcome == DEC_ASSIGNED &&
			     (long)i == d->chosen;
		if (dec_dropped(c)) {
			unsigned nr = c->nreasons < DEC_MAX_REASONS
					      ? c->nreasons
					      : DEC_MAX_REASONS;
			for (unsigned r = 0; r < nr; r++) {
				const struct dec_reason *x = &c->reasons[r];
				dec_reason_format(x, buf, sizeof(buf));
				fprintf(out, "  %-*s %-11s %-6s %-20s %s\n", w,
					r ? "" : nm, r ? "" : "-",
					x->rule ? x->rule : "",
					x->code ? x->code : "", buf);
			}
			if (nr == 0)
				fprintf(out, "  %-*s %-11s %-6s %-20s %s\n", w,
					nm, "-", "", "",
					c->stage ? c->stage : "");
			if (c->nreasons > DEC_MAX_REASONS)
				fprintf(out, "  %-*s %-11s (+%u more "
					     "reasons)\n",
					w, "", "",
					c->nreasons - DEC_MAX_REASONS);
			continue;
		}
		char wt[32];
		if (isfinite(c->weight))
			snprintf(wt, sizeof(wt), "%.4g", c->weight);
		else
			snprintf(wt, sizeof(wt), "-");
		buf[0] = '\0';
		if (c->wexpl.fmt)
			dec_reason_format(&c->wexpl, buf, sizeof(buf));
		fprintf(out, "%c %-*s %-11s %-6s %-20s %s\n",
			chosen ? '*' : ' ', w, nm, wt,
			c->wexpl.rule ? c->wexpl.rule : "",
			c->wexpl.code ? c->wexpl.code : "", buf);
	}
	fprintf(out, "===== Task brokerage summary =====\n");
	for (size_t i = 0; i < d->nstages; i++) {
		dec_stage_format(&d->stages[i], buf, sizeof(buf));
		fprintf(out, "%s\n", buf);
	}
	if (d->note[0])
		fprintf(out, "note: %s\n", d->note);
	if (d->outcome == DEC_ASSIGNED && d->chosen >= 0 &&
	    (size_t)d->chosen < d->ncands) {
		const struct dec_candidate *c = &d->cands[d->chosen];
		fprintf(out, "decision: assigned to %s (weight %.4g)\n",
			c->name ? c->name : "?", c->weight);
	} else {
		fprintf(out, "decision: pending, retry after %d s\n",
			d->retry_after_s);
	}
}
