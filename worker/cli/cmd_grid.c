/*
** cmd_grid.c — `gridbroker grid load FILE.json`: a grid file into MariaDB.
** One file may describe any of the brokerages: nuclei, storages and
** replicas (task brokerage); queues, sw, links and fileReplicas (job
** brokerage); analysis owners, shares and task classes; DIRAC groups,
** share corrections and CPU segments. Each part present is parsed by the
** same code that reads scenarios (explain/) and saved by its store module,
** so a file is checked by the same rules whether it is loaded or
** explained.
*/
#include <stdio.h>

#include "base/arena.h"
#include "base/clock.h"
#include "cli/cli.h"
#include "explain/dirac_json.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"
#include "gb_error.h"
#include "store/store.h"
#include "store/store_analysis.h"
#include "store/store_jobs.h"
#include "store/store_tq.h"

/* 1 when a grid file has any job-brokerage key (queues, sw, links,
** fileReplicas). */
static int has_jobs(json_t *root)
{
	static const char *const keys[] = {"queues", "sw", "links",
					   "fileReplicas", NULL};
	if (!json_is_object(root))
		return 0;
	for (size_t i = 0; keys[i]; i++)
		if (json_object_get(root, keys[i]))
			return 1;
	return 0;
}

static int has_analysis(json_t *root)
{
	return json_object_get(root, "analysis") != NULL;
}

/* What a part's loader says: why the file is wrong, how the save went,
** and what was loaded ("12 queues, ..."). */
struct part_out {
	char err[1024];
	int saved;
	char done[256];
};

/*
** The job-brokerage part: queues, links, software and replicas. The
** file's ages (lastPilotAge, lastStartAge, ...) count back from `now`, the
** workers' clock (clk_now), so that they mean the same to the brokerage
** whatever the clock's test offset.
*/
static int load_jobs(struct st_db *db, json_t *root, struct arena *a,
		     long long now, struct part_out *o)
{
	struct gm_grid g;
	int rc = scj_parse_grid(root, a, now, &g, o->err, sizeof(o->err));
	if (rc != GB_OK)
		return rc;
	o->saved = st_jobs_grid_save(db, &g, now);
	snprintf(o->done, sizeof(o->done),
		 "%zu queues, %zu links and replicas of %zu files", g.nqueues,
		 g.nlinks, g.nfiles);
	return GB_OK;
}

/* The "analysis" section (owners, shares, task classes), replacing the
** analysis tables, stamped `now`. */
static int load_analysis(struct st_db *db, json_t *root, struct arena *a,
			 long long now, struct part_out *o)
{
	struct gm_analysis_grid g;
	int rc = scj_parse_analysis_grid(json_object_get(root, "analysis"), a,
					 &g, o->err, sizeof(o->err));
	if (rc != GB_OK)
		return rc;
	o->saved = st_analysis_save(db, &g, now);
	snprintf(o->done, sizeof(o->done),
		 "%zu analysis owners, %zu shares and %zu task classes",
		 g.nowners, g.nshares, g.nclasses);
	return GB_OK;
}

/* The DIRAC part: groups, shareCorrections, cpuSegments. */
static int load_dirac(struct st_db *db, json_t *root, struct arena *a,
		      long long now, struct part_out *o)
{
	struct dj_config cfg;
	int rc = dj_parse_config(root, a, &cfg, o->err, sizeof(o->err));
	if (rc != GB_OK)
		return rc;
	o->saved = st_tq_config_save(db, &cfg.pr, cfg.seg, cfg.nseg, now);
	size_t js = 0;
	for (size_t i = 0; i < cfg.pr.ngroups; i++)
		js += cfg.pr.groups[i].job_sharing != 0;
	snprintf(o->done, sizeof(o->done),
		 "%zu groups (%zu with JOB_SHARING), %zu share-correction "
		 "instances (corrections %s) and %zu CPU segments",
		 cfg.pr.ngroups, js, cfg.pr.ninst,
		 cfg.pr.corrections ? "on" : "off", cfg.nseg);
	return GB_OK;
}

/*
** The parts of a grid file beyond its nuclei, loaded in this order when
** `has` finds them. `load` parses the part with memory from an arena of
** `arena` bytes and saves it into the database: it returns GB_OK, with
** the save's result in o->saved, or the parse error, with why in o->err
** (which `what` introduces).
*/
static const struct grid_part {
	const char *what;
	size_t arena;
	int (*has)(json_t *root);
	int (*load)(struct st_db *db, json_t *root, struct arena *a,
		    long long now, struct part_out *o);
} grid_parts[] = {
	{"", 512u << 20, has_jobs, load_jobs},
	{"analysis: ", 64u << 20, has_analysis, load_analysis},
	{"", 256u << 20, dj_has_config, load_dirac},
};
#define NPARTS (sizeof(grid_parts) / sizeof(grid_parts[0]))

/* Load one part and print what it loaded or why not. Returns 0 or 1. */
static int load_part(const struct grid_part *p, struct st_db *db,
		     json_t *root, const char *file, long long now)
{
	struct part_out o = {"", GB_OK, ""};
	struct arena a;
	arena_init(&a, p->arena);
	int rc = p->load(db, root, &a, now, &o);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s%s\n", file, p->what, o.err);
	else if ((rc = o.saved) != GB_OK)
		fprintf(stderr, "gridbroker: grid load: %s\n", st_error(db));
	else
		printf("loaded %s from %s\n", o.done, file);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_grid_load(struct cli *cli, int argc, char **argv)
{
	int status;
	json_t *root = cli_read_json_arg(argc, argv, &status);
	if (root == NULL)
		return status;
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 256u << 20);
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	int rc = GB_OK;
	/* A grid file may hold only the job-brokerage or the DIRAC part. */
	int has_nuclei = json_object_get(root, "nuclei") != NULL;
	if (has_nuclei || (!has_jobs(root) && !dj_has_config(root)))
		rc = scn_parse_nuclei(json_object_get(root, "nuclei"), "nuclei",
				      &a, &nuclei, &n, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", argv[0], err);
	} else {
		struct st_db *db = cli_open_db(cli);
		/* The workers' clock, test offset included: ages in the file
		** are relative to the "now" the brokerage will compare with. */
		clk_set_offset_file(cli->cfg.clock_offset_file);
		long long now = clk_now();
		if (db == NULL) {
			rc = GB_EDBGONE;
		} else {
			if (has_nuclei) {
				rc = st_grid_load_nuclei(db, nuclei, n);
				if (rc != GB_OK)
					fprintf(stderr, "gridbroker: grid load: "
						"%s\n", st_error(db));
				else
					printf("loaded %zu nuclei from %s\n",
					       n, argv[0]);
			}
			const struct grid_part *p = grid_parts;
			for (; rc == GB_OK && p < grid_parts + NPARTS; p++)
				if (p->has(root) &&
				    load_part(p, db, root, argv[0], now) != 0)
					rc = GB_EINVAL;
			st_close(db);
		}
	}
	arena_free(&a);
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
static const struct cli_cmd_entry grid_cmds[] = {
	{"load", "FILE.json", "load a grid file: nuclei, storages, replicas (task brokerage); queues, sw, links, fileReplicas (job brokerage); analysis (owners, shares, task classes); groups, shareCorrections, cpuSegments (DIRAC task queues)", 1, cmd_grid_load, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_grid = {.name = "grid", .subs = grid_cmds};
