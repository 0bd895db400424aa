/*
** report.h — a task-brokerage decision shown: the JSON that is both
** `explain --json`'s output and the detail of the decision record the
** worker stores, and the readable table of `explain` (report.c).
*/
#ifndef GB_REPORT_H
#define GB_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "decision.h"

/*
** The decision as JSON: {"decision", "nucleus" (or null), "retryAfter" (when
** pending), "note", "candidates": [{name, weight|null, stage (the stage
** that dropped it, or null), reasons:[{rule, code, detail}], moreReasons
** (how many reasons were not kept, only when > 0), weightDetail (object
** for a survivor, else null)}], "stages": [{name, rule, in, out}]}. Returns NULL only when
** out of memory.
*/
json_t *rpt_decision_json(const struct dec_decision *d);

/* The decision as a readable table with the stage summary lines. */
void rpt_print_decision(FILE *out, const struct dec_decision *d,
			const char *title);

#endif
