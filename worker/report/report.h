/*
** report.h — a task-brokerage decision as JSON: the detail of the decision
** record the worker stores (record.h), which `explain --json` prints and
** render.h turns into text. Also the end every decision's JSON shares.
*/
#ifndef GB_REPORT_H
#define GB_REPORT_H

#include <jansson.h>

#include "decision.h"

/*
** The decision as JSON: {"decision", "nucleus" (or null), "retryAfter" (when
** pending), "note", "candidates": [{name, weight|null, stage (the stage
** that dropped it, or null), reasons:[{rule, code, detail}], moreReasons
** (how many reasons were not kept, only when > 0), weightDetail (object
** for a survivor, else null)}], "stages": [{name, rule, in, out}]}. Returns
** NULL only when out of memory.
*/
json_t *rpt_decision_json(const struct dec_decision *d);

/*
** The end of every decision's JSON (task, jobs, analysis): sets
** "candidates" (cands, consumed) and "stages" (one per stage of `d`; []
** when d is NULL) in `root` and returns root. When `bad` is set on entry
** or memory runs out, root and cands are released and NULL returned, so a
** builder ORs its failures into `bad` and ends with this call.
*/
json_t *rpt_finish_json(json_t *root, json_t *cands,
			const struct dec_decision *d, int bad);

#endif
