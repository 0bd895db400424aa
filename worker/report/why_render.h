/*
** why_render.h — `gridbroker why`: a stored decision record (decrec.h) as
** the text an operator reads, or as the JSON of `--json`.
**
** Pure functions of their arguments (no I/O, no clock, no database), so the
** exact text is unit-tested (tests/unit/report/test_why_render.c). The stage
** summary line is dec_stage_format's, the one `explain` and PanDA's
** brokerage log print, with the stage's main cut reason appended.
*/
#ifndef GB_WHY_RENDER_H
#define GB_WHY_RENDER_H

#include <stddef.h>

#include <jansson.h>

/* The row a record came with (store_decisions.h's st_dec_row fields). */
struct wr_head {
	long long id;           /* decision id */
	const char *kind;       /* task, jobs, timeout, rebro, pilot */
	const char *subject;    /* task id, job id or pilot id */
	const char *request_id; /* may be NULL */
	const char *outcome;    /* assigned, pending, matched, reassign, ... */
	const char *chosen;     /* NULL when nothing was chosen */
	long long decided_at;   /* unix s */
	long long focus_job;    /* `why job`: the job asked about, else 0 */
};

/*
** The record as text: a header line (kind, subject, outcome, chosen, time,
** request id, first 16 digest digits), the stage summary lines, what
** stopped the decision (throttle, timeout rule, TQ-10 reason), the
** rejected candidates grouped by stage with rule, code and the numbers
** compared (or the per-rule aggregates of a truncated record), then the
** surviving candidates' weights. `detail` may be NULL (no record text, or
** not JSON): the header and a line saying so. Returns a malloc'd string
** for free(), NULL when out of memory or h is NULL.
*/
char *wr_render(const struct wr_head *h, const json_t *detail);

/*
** `--json`: {"decision": id, "kind", "subject", "requestId", "outcome",
** "chosen", "decidedAt" (RFC 3339), "record": detail or null}. A new
** reference (NULL when out of memory); detail is not consumed.
*/
json_t *wr_json(const struct wr_head *h, const json_t *detail);

/*
** One stage object {"name", "rule", "in", "out", "cut"?} as its summary
** line: "  120 ->  80 candidates,  33% cut : memory [PJ-15 highmemory x31]"
** (the bracket only with a cut). Returns snprintf's length, GB_EINVAL when
** the stage has no name.
*/
int wr_stage_line(const json_t *stage, char *buf, size_t n);

#endif
