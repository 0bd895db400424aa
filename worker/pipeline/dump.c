/*
** dump.c — a decision's inputs as a scenario file (dump.h).
*/
#include "pipeline/dump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/zbuf.h"
#include "gb_error.h"
#include "pipeline/pipeline_internal.h"
#include "report/decrec.h"
#include "store/store_inputs.h"

/* zlib level of stored inputs, paid inside every decision's transaction:
** measured on a sample-grid job decision (338 KB of scenario JSON), level
** 1 gives 23.7 KB in 0.72 ms, 3 gives 19.6 KB in 0.74 ms, 6 gives 14.5 KB
** in 1.78 ms; 3 is nearly free over 1 and 6 costs 2.4 times the CPU. */
#define WK_INPUTS_ZLEVEL 3

int wk_dumping(const struct wk_worker *w)
{
	return w && w->cfg &&
	       (w->cfg->decision_inputs || w->cfg->decision_inputs_dir[0]);
}

/* Largest index a pilot's inputs are written out for as a file. Each pilot
** of a batch holds its own copy of the index as JSON until the commit,
** about 1 kB a job: a worker whose index held 891,000 jobs (a database a
** benchmark had filled) grew past 11 GB in a batch of pilots and was
** killed. 20,000 jobs is about 20 MB a pilot. */
#define WK_DUMP_DIR_MAX_JOBS 20000

int wk_dumping_pilot(const struct wk_worker *w, size_t njobs)
{
	if (w == NULL || w->cfg == NULL)
		return 0;
	if (w->cfg->decision_inputs_dir[0] && njobs <= WK_DUMP_DIR_MAX_JOBS)
		return 1;
	return w->cfg->decision_inputs &&
	       njobs <= (size_t)w->cfg->decision_inputs_max_jobs &&
	       w->cfg->decision_inputs_max_jobs > 0;
}

int wk_dump_store(struct wk_worker *w, const char *kind, long long decision_id,
		  long long now, const char *record, json_t *scenario)
{
	if (!w->cfg->decision_inputs || w->db == NULL)
		return GB_OK;
	char *text = json_dumps(scenario, JSON_COMPACT | JSON_SORT_KEYS |
						  JSON_REAL_PRECISION(17));
	unsigned char *z = NULL;
	size_t zlen = 0, raw = text ? strlen(text) : 0;
	int zrc = text ? zb_deflate(text, raw, WK_INPUTS_ZLEVEL, &z, &zlen)
		       : GB_ENOMEM;
	free(text);
	if (zrc != GB_OK) {
		log_warn("decision %lld (%s): inputs not stored: %s",
			 decision_id, kind, gb_strerror(zrc));
		return GB_OK;
	}
	char digest[65];
	dr_text_digest(record, digest); /* "" when it has none */
	int rc = st_in_write(w->db,
			     strcmp(kind, "pilot") == 0 ? ST_IN_PILOTS
							 : ST_IN_DECISIONS,
			     decision_id, kind, now, digest, z, zlen, raw);
	free(z);
	return rc;
}

void wk_dump_write(const char *dir, const struct wk_dump *d)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%s-%lld.json", dir, d->kind,
		 d->decision_id);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	int ok = f != NULL && fputs(d->text, f) >= 0 && fputc('\n', f) >= 0;
	if (f != NULL && fclose(f) != 0)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return;
	log_warn("decision inputs %s: %s", path, strerror(errno));
	unlink(tmp);
}
