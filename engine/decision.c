/*
** decision.c — bookkeeping for decisions: reasons, stages, rendering.
*/
#include "decision.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void dec_init_lazy(struct dec_decision *d, struct dec_candidate *cands,
		   size_t n)
{
	memset(d, 0, sizeof(*d));
	d->chosen = -1;
	d->outcome = DEC_PENDING;
	d->cands = cands;
	d->ncands = n;
}

void dec_init(struct dec_decision *d, struct dec_candidate *cands, size_t n)
{
	dec_init_lazy(d, cands, n);
	for (size_t i = 0; i < n; i++)
		dec_candidate_reset(&cands[i]);
}

int dec_reject(struct dec_candidate *c, const char *stage, const char *rule,
	       const char *code, const char *fmt, const char *str, double v0,
	       double v1, double v2, double v3)
{
	if (c->stage == NULL)
		c->stage = stage;
	c->weight = NAN;
	if (c->nreasons < DEC_MAX_REASONS) {
		struct dec_reason *r = &c->reasons[c->nreasons];
		r->rule = rule;
		r->code = code;
		r->fmt = fmt;
		r->str = str;
		r->v[0] = v0;
		r->v[1] = v1;
		r->v[2] = v2;
		r->v[3] = v3;
	}
	c->nreasons++;
	return 0;
}

size_t dec_alive(const struct dec_decision *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->ncands; i++)
		if (!dec_dropped(&d->cands[i]))
			n++;
	return n;
}

void dec_restore(struct dec_candidate *c)
{
	c->stage = NULL;
	c->nreasons = 0;
	c->weight = NAN;
}

void dec_stage(struct dec_decision *d, const char *name, const char *rule,
	       int in, int out)
{
	if (d->nstages >= DEC_MAX_STAGES)
		return;
	struct dec_stage *s = &d->stages[d->nstages++];
	s->name = name;
	s->rule = rule;
	s->in = in;
	s->out = out;
}

int dec_reason_format(const struct dec_reason *r, char *buf, size_t n)
{
	if (r->fmt == NULL) {
		if (n > 0)
			buf[0] = '\0';
		return 0;
	}
	/* Templates are static strings of this library; excess arguments to
	** snprintf are evaluated and ignored (C11 7.21.6.1p2). */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
	if (r->str != NULL)
		return snprintf(buf, n, r->fmt, r->str, r->v[0], r->v[1],
				r->v[2], r->v[3]);
	return snprintf(buf, n, r->fmt, r->v[0], r->v[1], r->v[2], r->v[3]);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

int dec_stage_format(const struct dec_stage *s, char *buf, size_t n)
{
	int cut = s->in > 0 ? (int)lround(100.0 * (s->in - s->out) / s->in) : 0;
	return snprintf(buf, n, "%5d -> %3d candidates, %3d%% cut : %s", s->in,
			s->out, cut, s->name);
}

const char *dec_outcome_name(enum dec_outcome o)
{
	return o == DEC_ASSIGNED ? "assigned" : "pending";
}
