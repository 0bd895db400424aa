/*
** render.h — a decision record (record.h, decrec.h) as the text an
** operator reads (prefix rn_): the one renderer of `gridbroker explain`
** (a record made offline) and `gridbroker why` (a record read back from
** MariaDB), for every kind of decision.
**
** THE RULE: the text is one head line, then the body. The head line is
** the only one that says where the record came from: `why` names the
** stored row (its time, request id and decision id, and for `why job`
** where that job went), `explain` says it is an offline run. The body is
** a function of the record alone, never of the head, so the same decision
** prints the same lines after the first from both commands
** (tests/unit/explain/test_scenario_render.c holds every example scenario
** to it, tests/integration/it_why.sh a worker's decisions). Whatever the
** body must show therefore has to be in the record; what only an offline
** run knows (every task queue of a match, the jobs no timeout rule fires
** for) is explain's own addition after the text (explain_print.h).
**
** The body, each part only when the record has what it needs:
**   the subject (the request: task, gshare, jobs, queues; the pilot's
**   description; the job of a timeout), the verdict (the analysis
**   throttle with the owner's numbers; the timeout rule with age and
**   limit, and the fast-rebrokerage numbers; a pilot's task queue counts,
**   lottery and TQ-10 code and reason), the stage lines with each stage's
**   main cut ("  166 ->  16 candidates,  88% cut : move input [PJ-11 io
**   x12]"), the candidates (the best ones ranked, or the survivors, with
**   weight and weight detail; the dropped ones grouped by the stage that
**   dropped them with rule, code and detail; or, in a truncated record,
**   the per-rule aggregates), the jobs per queue and status with the
**   first job IDs and the unassigned count, the note, the decision line
**   (what was chosen, or the retry time) and what truncation left out.
**
** Pure functions of their arguments (no I/O, no clock, no database), so
** the exact text is unit-tested (tests/unit/report/test_render.c). The
** record is read as JSON, not as the engine's structs: it outlives the
** inputs and the binary that wrote it, so every member is optional (an
** older record, a truncated one) and a missing one prints nothing.
*/
#ifndef GB_RENDER_H
#define GB_RENDER_H

#include <stddef.h>

#include <jansson.h>

/* What the head line says: the decision's row (store_decisions.h's
** st_dec_row fields) or, for an offline run, what explain.h returns. */
struct rn_head {
	const char *kind;       /* task, jobs, analysis, timeout, rebro,
				   pilot */
	const char *subject;    /* task id, job id or pilot id */
	const char *outcome;    /* assigned, pending, matched, reassign, ... */
	const char *chosen;     /* NULL when nothing was chosen */
	/* The stored row (`why`); id 0 is an offline run (`explain`), whose
	** head names none of these. */
	long long id;           /* decision id */
	const char *request_id; /* may be NULL */
	long long decided_at;   /* unix s */
	long long focus_job;    /* `why job`: the job asked about, else 0 */
};

/*
** The record as text: the head line
**   why:     "KIND SUBJECT: OUTCOME, chosen CHOSEN|-, at TIME, request
**            ID|-, digest 16HEX|-, decision ID[; job N: QUEUE STATUS]"
**   explain: "KIND SUBJECT: OUTCOME, chosen CHOSEN|-, digest 16HEX|-,
**            offline run"
** then the body described above. `record` may be NULL (no record text, or
** not JSON): the head and a line saying so. Returns a malloc'd string for
** free(), NULL when out of memory or h is NULL.
*/
char *rn_render(const struct rn_head *h, const json_t *record);

/*
** `why --json`: {"decision": id, "kind", "subject", "requestId",
** "outcome", "chosen", "decidedAt" (RFC 3339), "record": record or null}.
** A new reference (NULL when out of memory); record is not consumed.
*/
json_t *rn_json(const struct rn_head *h, const json_t *record);

/*
** One stage object {"name", "rule", "in", "out", "cut"?} as its summary
** line: "  120 ->  80 candidates,  33% cut : memory [PJ-15 highmemory x31]"
** (the bracket only with a cut). Returns snprintf's length, GB_EINVAL when
** the stage has no name.
*/
int rn_stage_line(const json_t *stage, char *buf, size_t n);

/* The last CN of a DN ("/DC=ch/.../CN=alice" -> "alice"), for tables; the
** DN itself when it has none (NULL for NULL). Points into dn. */
const char *rn_short_dn(const char *dn);

#endif
