/*
** scenario.h — JSON scenario files for `gridbroker explain`, grid files for
** `gridbroker grid load`, and the JSON/table rendering of decisions.
**
** The scenario format is documented in schemas/scenario-task.schema.json:
** {now, seed, params, nuclei[], task}. A grid file is {"nuclei": [...]} with
** the same nucleus objects. Every parse error names the field with its path,
** e.g. "nuclei[3].storages[0].spaceFree: expected a number >= 0".
*/
#ifndef GB_SCENARIO_H
#define GB_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "base/arena.h"
#include "decision.h"
#include "params.h"
#include "taskbroker.h"

struct scn_task_scenario {
	long long now;   /* unix s, from RFC 3339 `now` */
	uint64_t seed;
	struct prm_kv *params;
	size_t nparams;
	struct tb_nucleus *nuclei;
	size_t nnuclei;
	struct tb_task task;
};

/* Read and parse a JSON file; NULL with err filled on failure. */
json_t *scn_read_file(const char *path, char *err, size_t errlen);

/* Parse a whole task scenario. Returns 0 or a GB_E* code with err. */
int scn_parse_task_scenario(json_t *root, struct arena *a,
			    struct scn_task_scenario *out, char *err,
			    size_t errlen);

/* Parse a "nuclei" array (path is the field name used in errors). */
int scn_parse_nuclei(json_t *arr, const char *path, struct arena *a,
		     struct tb_nucleus **out, size_t *n, char *err,
		     size_t errlen);

/* Parse one "task" object. */
int scn_parse_task(json_t *obj, const char *path, struct arena *a,
		   struct tb_task *out, char *err, size_t errlen);

/* Parse a "params" object into overrides (validated with prm_check). */
int scn_parse_params(json_t *obj, const char *path, struct arena *a,
		     struct prm_kv **out, size_t *n, char *err, size_t errlen);

#endif
