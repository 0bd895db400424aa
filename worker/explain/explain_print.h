/*
** explain_print.h — `gridbroker explain`'s output (prefix exp_): what
** ex_run returns (explain.h) as text or as JSON.
**
** Text: each record as report/render.h prints it, under the explain head
** (the records are the ones the worker would store, so `gridbroker why`
** prints the same lines after the first for the same decision), records
** apart by a blank line; then, under a title saying so, what only an
** offline run shows: for a match scenario every task queue's verdict and
** priorities and the corrector's slices (scm_print_queues), for a timeout
** scenario the jobs no rule fires for with their next check and the TO-13
** rows (sct_print_offline).
**
** JSON (`explain --json`): the record exactly as the worker stores it,
** pretty-printed:
**   task, jobs, analysis: the record;
**   match: the record plus "taskQueues" and "corrections" next to its
**     keys (scm_result_json's): offline only, neither stored nor in the
**     digest;
**   timeout: {"records": [the record of each job a rule fires for],
**     "now", "nextChecks": [the jobs no rule fires for: jobID, status,
**     queue, exempt, nextCheck, nextCheckIn], "rebro": [TO-13 per row]}
**     (all but "records" offline only; sct_result_json's rows).
** Every other key is the stored record's, in its order and with its
** numbers (EXP_JSON_FLAGS keep the record's real precision).
*/
#ifndef GB_EXPLAIN_PRINT_H
#define GB_EXPLAIN_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "explain/explain.h"
#include "report/render.h"

/* How explain --json dumps exp_json: indented, reals as the record has
** them (decrec.c writes 12 significant digits). */
#define EXP_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(12))

/* The head of records[i] of `r` for render.h: its kind, subject, outcome
** and chosen; no stored row (an offline run). The strings stay r's. */
struct rn_head exp_head(const struct ex_result *r, size_t i);

/* The text described above to `out`. Returns 0, GB_EINVAL (NULL
** arguments) or GB_ENOMEM. */
int exp_print(FILE *out, const struct ex_result *r);

/* The JSON described above: a new reference for json_decref, NULL when
** out of memory or given NULL. */
json_t *exp_json(const struct ex_result *r);

#endif
