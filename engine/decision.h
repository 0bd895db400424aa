/*
** decision.h — what every brokerage returns: per-candidate weight or reasons,
** per-stage in/out counts, and the outcome.
**
** Shaped after the Kubernetes scheduler framework's Filter -> Status{code,
** reasons} and NodeToStatus: each rejected candidate carries the rule ID that
** rejected it, a stable reason code, and the numbers that were compared. The
** human text is NOT formatted when a filter rejects (job brokerage rejects
** hundreds of queues per decision and must stay under 50 us); a reason keeps
** a static printf template and its numbers, and dec_reason_format() renders it
** only when someone asks (explain, the decision record, a log line).
**
** Memory: the caller owns the candidate array (one slot per candidate, sized
** by the caller from the input it already holds); nothing here allocates.
*/
#ifndef GB_DECISION_H
#define GB_DECISION_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#define DEC_MAX_REASONS 3 /* reasons kept per candidate; more are counted */
#define DEC_MAX_STAGES 48 /* job brokerage has ~35 stages */
#define DEC_NOTE_MAX 160

/*
** One reason. `fmt` is a static template whose conversions are, in order, an
** optional leading %s (only when `str` is non-NULL) and then up to four
** floating conversions (%g, %.0f, ...) consuming v[0..3]. By convention v[0]
** is the candidate's value and v[1] the limit it was compared against.
*/
struct dec_reason {
	const char *rule; /* rule ID, e.g. "TB-04" (static) */
	const char *code; /* stable reason code, e.g. "space" (static) */
	const char *fmt;  /* static template, see above */
	const char *str;  /* optional string argument (lives as long as input) */
	double v[4];      /* the numbers compared */
};

struct dec_candidate {
	const char *name;       /* candidate name (lives as long as input) */
	double weight;          /* final weight; NAN while/when dropped */
	const char *stage;      /* stage that dropped it, NULL if alive */
	unsigned nreasons;      /* reasons recorded, may exceed DEC_MAX_REASONS */
	struct dec_reason reasons[DEC_MAX_REASONS];
	struct dec_reason wexpl; /* weight breakdown (rule, template, terms) */
};

struct dec_stage {
	const char *name; /* stage name, e.g. "space" */
	const char *rule; /* main rule ID of the stage */
	int in;           /* candidates entering the stage */
	int out;          /* candidates leaving it */
};

enum dec_outcome {
	DEC_ASSIGNED = 0, /* a candidate was chosen */
	DEC_PENDING = 1,  /* nothing survived; retry after retry_after_s */
};

struct dec_decision {
	enum dec_outcome outcome;
	long chosen;           /* index into cands, -1 when pending */
	int retry_after_s;     /* seconds until retry when pending, else 0 */
	size_t nstages;
	struct dec_stage stages[DEC_MAX_STAGES];
	struct dec_candidate *cands; /* caller-provided, ncands slots */
	size_t ncands;
	char note[DEC_NOTE_MAX]; /* e.g. "TB-09: locality check dropped" */
};

/*
** Reset `d` and point it at `cands` (n slots, n may be 0). Every candidate is
** alive with weight NAN, no reasons and no weight breakdown (wexpl zeroed);
** names are left NULL for the caller. The reasons[] slots themselves are not
** cleared: only the first min(nreasons, DEC_MAX_REASONS) are ever valid, and
** clearing all of them wrote three times the memory a decision over 1000
** queues needs.
*/
void dec_init(struct dec_decision *d, struct dec_candidate *cands, size_t n);

/*
** dec_init() without touching the candidates: reset `d` and point it at
** `cands` (n slots), and leave the caller to reset each slot with
** dec_candidate_reset() before it records anything in it or the decision
** is read. For a brokerage that visits every candidate in one pass anyway
** (the job brokerage: a separate pass over 1000 candidates to reset them
** was 3% of its decision).
*/
void dec_init_lazy(struct dec_decision *d, struct dec_candidate *cands,
		   size_t n);

/* Reset one candidate as dec_init() does: alive, weight NAN, no reasons,
** no weight breakdown, name NULL. */
static inline void dec_candidate_reset(struct dec_candidate *c)
{
	c->name = NULL;
	c->weight = NAN;
	c->stage = NULL;
	c->nreasons = 0;
	memset(&c->wexpl, 0, sizeof(c->wexpl));
}

/*
** Record that `c` is dropped by `rule` with reason `code`. The first drop sets
** c->stage to `stage`; further reasons are appended (up to DEC_MAX_REASONS,
** counted beyond). Returns 0 so filters can `return dec_reject(...)`.
*/
int dec_reject(struct dec_candidate *c, const char *stage, const char *rule,
	       const char *code, const char *fmt, const char *str, double v0,
	       double v1, double v2, double v3);

/* Non-zero when the candidate has been dropped. Inline because the
** brokerages ask it of every candidate in several passes. */
static inline int dec_dropped(const struct dec_candidate *c)
{
	return c->stage != NULL;
}

/* Count the candidates still alive. */
size_t dec_alive(const struct dec_decision *d);

/* Clear a candidate's drop (used when a rule relaxes an earlier check). */
void dec_restore(struct dec_candidate *c);

/* Append a stage count. Silently ignores stages beyond DEC_MAX_STAGES. */
void dec_stage(struct dec_decision *d, const char *name, const char *rule,
	       int in, int out);

/*
** Render a reason into buf (always NUL-terminated when n > 0). Returns the
** length snprintf would have written.
*/
int dec_reason_format(const struct dec_reason *r, char *buf, size_t n);

/*
** Render one stage as the PanDA-style summary line
** "  120 ->  80 candidates,  34% cut : memory". Returns snprintf's length.
*/
int dec_stage_format(const struct dec_stage *s, char *buf, size_t n);

/* "assigned" or "pending". */
const char *dec_outcome_name(enum dec_outcome o);

#endif
