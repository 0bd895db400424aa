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

int wk_dumping(const struct wk_worker *w)
{
	return w && w->cfg && w->cfg->decision_inputs_dir[0] != '\0';
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
