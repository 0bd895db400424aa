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
#include "gb_error.h"

int wk_dumping(const struct wk_worker *w)
{
	return w && w->cfg && w->cfg->decision_inputs_dir[0] != '\0';
}

void wk_txn_dump(struct wk_txn *t, const char *kind, long long decision_id,
		 json_t *scenario)
{
	if (!wk_dumping(t->w)) {
		json_decref(scenario);
		return;
	}
	if (scenario == NULL) {
		log_warn("decision %lld (%s): its inputs could not be written "
			 "as a scenario", decision_id, kind);
		return;
	}
	/* Bit for bit: a double written with 17 significant digits reads
	** back to the same double. */
	char *text = json_dumps(scenario, JSON_INDENT(1) | JSON_SORT_KEYS |
						  JSON_REAL_PRECISION(17));
	json_decref(scenario);
	struct wk_dump *d = NULL;
	if (text != NULL && wk_txn_grow(t->a, (void **)&t->dumps, t->ndumps,
					&t->capdumps,
					sizeof(*t->dumps)) == GB_OK) {
		d = &t->dumps[t->ndumps];
		d->kind = arena_strdup(t->a, kind);
		d->text = arena_strdup(t->a, text);
		d->decision_id = decision_id;
	}
	if (d != NULL && d->kind != NULL && d->text != NULL)
		t->ndumps++;
	else
		log_warn("decision %lld (%s): no memory to keep its inputs",
			 decision_id, kind);
	free(text);
}

static void write_one(const char *dir, const struct wk_dump *d)
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

void wk_dump_flush(struct wk_txn *t)
{
	const char *dir = t->w->cfg->decision_inputs_dir;
	for (size_t i = 0; dir[0] && i < t->ndumps; i++)
		write_one(dir, &t->dumps[i]);
}
