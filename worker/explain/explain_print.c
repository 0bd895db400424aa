/*
** explain_print.c — `gridbroker explain`'s text and JSON (explain_print.h).
**
** Nothing here renders a record: report/render.c does, for `why` as well.
** This file strings the records together and adds, titled as such, what
** the scenario's offline run knows and no record holds.
*/
#include "explain/explain_print.h"

#include <stdlib.h>

#include "gb_error.h"

struct rn_head exp_head(const struct ex_result *r, size_t i)
{
	const struct ex_record *x = &r->records[i];
	return (struct rn_head){
		.kind = ex_kind_name(r->kind),
		.subject = x->subject,
		.outcome = x->outcome,
		.chosen = x->chosen,
	};
}

static json_t *record_json(const struct ex_record *x)
{
	return x->text ? json_loads(x->text, 0, NULL) : NULL;
}

int exp_print(FILE *out, const struct ex_result *r)
{
	if (out == NULL || r == NULL)
		return GB_EINVAL;
	for (size_t i = 0; i < r->nrecords; i++) {
		const struct rn_head h = exp_head(r, i);
		json_t *d = record_json(&r->records[i]);
		char *text = d ? rn_render(&h, d) : NULL;
		json_decref(d);
		if (text == NULL)
			return GB_ENOMEM;
		fprintf(out, "%s%s", i ? "\n" : "", text);
		free(text);
	}
	if (r->kind == EX_MATCH) {
		fprintf(out, "\n===== offline only (not in the record): every "
			     "task queue =====\n");
		scm_print_queues(out, &r->in.match, &r->out.match);
	} else if (r->kind == EX_TIMEOUT) {
		fprintf(out, "%s===== offline only (not in the records): the "
			     "jobs no rule fires for, fast rebrokerage =====\n",
			r->nrecords ? "\n" : "");
		sct_print_offline(out, &r->in.timeout, &r->out.timeout);
	}
	return GB_OK;
}

/* The rows of sct_result_json's "jobs" no rule fired for, without the
** verdict members they have no value for. */
static json_t *next_checks(const json_t *jobs)
{
	static const char *const verdict[] = {
		"rule", "what", "action", "ageSeconds", "limitSeconds",
		"ageHours", "limitHours", "ageDays", "limitDays",
	};
	json_t *out = json_array();
	size_t i;
	json_t *j;
	json_array_foreach(jobs, i, j)
	{
		if (out == NULL || !json_is_null(json_object_get(j, "rule")))
			continue;
		for (size_t k = 0; k < sizeof(verdict) / sizeof(*verdict); k++)
			json_object_del(j, verdict[k]);
		if (json_array_append(out, j) != 0) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

static json_t *timeout_json(const struct ex_result *r)
{
	json_t *o = json_object(), *recs = json_array();
	json_t *off = sct_result_json(&r->in.timeout, &r->out.timeout);
	int bad = o == NULL || recs == NULL || off == NULL;
	for (size_t i = 0; !bad && i < r->nrecords; i++)
		bad = json_array_append_new(recs,
					    record_json(&r->records[i])) != 0;
	if (!bad) {
		/* o's from here, even when the set fails */
		bad = json_object_set_new(o, "records", recs) != 0;
		recs = NULL;
	}
	bad = bad ||
	      json_object_set(o, "now", json_object_get(off, "now")) != 0 ||
	      json_object_set_new(o, "nextChecks",
				  next_checks(json_object_get(off, "jobs"))) !=
		      0 ||
	      json_object_set(o, "rebro", json_object_get(off, "rebro")) != 0;
	json_decref(off);
	json_decref(recs);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *exp_json(const struct ex_result *r)
{
	if (r == NULL)
		return NULL;
	if (r->kind == EX_TIMEOUT)
		return timeout_json(r);
	if (r->nrecords == 0)
		return NULL;
	json_t *o = record_json(&r->records[0]);
	if (o == NULL || r->kind != EX_MATCH)
		return o;
	json_t *off = scm_result_json(&r->in.match, &r->out.match);
	int bad = off == NULL ||
		  json_object_set(o, "taskQueues",
				  json_object_get(off, "taskQueues")) != 0 ||
		  json_object_set(o, "corrections",
				  json_object_get(off, "corrections")) != 0;
	json_decref(off);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
