/*
** report.c — how a decision is shown: as JSON (`explain --json`, the
** decision record) and as a table with the PanDA-style stage summary
** (`explain`). Declared in scenario.h.
**
** The renderers read only the struct dec_decision: candidate names live in
** dec_candidate.name, reasons keep their static templates and numbers, and
** dec_reason_format renders them here, once, when someone asks. Nothing is
** looked up in the input the decision was made from, so the worker can
** render a decision after its inputs are gone.
*/
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A JSON string, or a marker when the text is not valid UTF-8. */
static json_t *jstr(const char *s)
{
	if (s == NULL)
		return json_null();
	json_t *j = json_string(s);
	return j ? j : json_string("<not UTF-8>");
}

static int jset(json_t *o, const char *k, json_t *v)
{
	return v == NULL || json_object_set_new(o, k, v) != 0;
}

static json_t *reason_json(const struct dec_reason *r)
{
	char detail[512];
	dec_reason_format(r, detail, sizeof(detail));
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = jset(o, "rule", jstr(r->rule));
	bad |= jset(o, "code", jstr(r->code));
	bad |= jset(o, "detail", jstr(detail));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *candidate_json(const struct dec_candidate *c)
{
	json_t *o = json_object(), *reasons = json_array();
	int bad = o == NULL || reasons == NULL;
	int dropped = dec_dropped(c);
	unsigned nr = c->nreasons < DEC_MAX_REASONS ? c->nreasons
						    : DEC_MAX_REASONS;
	for (unsigned i = 0; !bad && dropped && i < nr; i++)
		bad |= json_array_append_new(reasons,
					     reason_json(&c->reasons[i])) != 0;
	if (bad) {
		json_decref(o);
		json_decref(reasons);
		return NULL;
	}
	bad |= jset(o, "name", jstr(c->name));
	bad |= jset(o, "weight", !dropped && isfinite(c->weight)
					 ? json_real(c->weight)
					 : json_null());
	bad |= jset(o, "stage", jstr(dropped ? c->stage : NULL));
	bad |= jset(o, "reasons", reasons);
	if (dropped && c->nreasons > DEC_MAX_REASONS)
		bad |= jset(o, "moreReasons",
			    json_integer(c->nreasons - DEC_MAX_REASONS));
	if (!dropped && c->wexpl.fmt)
		bad |= jset(o, "weightDetail", reason_json(&c->wexpl));
	else
		bad |= jset(o, "weightDetail", json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *scn_decision_json(const struct dec_decision *d)
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
		bad |= json_array_append_new(cands,
					     candidate_json(&d->cands[i])) != 0;
	for (size_t i = 0; !bad && i < d->nstages; i++) {
		const struct dec_stage *s = &d->stages[i];
		json_t *o = json_object();
		int b = o == NULL;
		if (!b) {
			b |= jset(o, "name", jstr(s->name));
			b |= jset(o, "rule", jstr(s->rule));
			b |= jset(o, "in", json_integer(s->in));
			b |= jset(o, "out", json_integer(s->out));
		}
		bad |= b || json_array_append_new(stages, o) != 0;
		if (b)
			json_decref(o);
	}
	if (bad) {
		json_decref(root);
		json_decref(cands);
		json_decref(stages);
		return NULL;
	}
	bad |= jset(root, "decision", jstr(dec_outcome_name(d->outcome)));
	bad |= jset(root, "nucleus", jstr(chosen));
	if (d->outcome == DEC_PENDING)
		bad |= jset(root, "retryAfter", json_integer(d->retry_after_s));
	bad |= jset(root, "note", d->note[0] ? jstr(d->note) : json_null());
	bad |= jset(root, "candidates", cands);
	bad |= jset(root, "stages", stages);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

void scn_print_decision(FILE *out, const struct dec_decision *d,
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
		fprintf(out, "%c %-*s %-11s %-6s %-20s %s\n", chosen ? '*' : ' ',
			w, nm, wt, c->wexpl.rule ? c->wexpl.rule : "",
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
