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
static int grid_has_jobs(json_t *root)
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

/*
** Load the job-brokerage part of a grid file into `db`; the file's ages
** (lastPilotAge, lastStartAge, ...) count back from `now`, the workers'
** clock (clk_now), so that they mean the same to the brokerage whatever
** the clock's test offset. Prints a summary line; returns 0 or 1 (after
** printing why).
*/
static int grid_load_jobs(struct st_db *db, json_t *root, const char *file,
			  long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct gm_grid g;
	int rc = scj_parse_grid(root, &a, now, &g, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	} else {
		rc = st_jobs_grid_save(db, &g, now);
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: grid load: %s\n",
				st_error(db));
		else
			printf("loaded %zu queues, %zu links and replicas of "
			       "%zu files from %s\n",
			       g.nqueues, g.nlinks, g.nfiles, file);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

/* The grid file's "analysis" section (owners, shares, task classes),
** replacing the analysis tables, stamped `now` (the workers' clock).
** Returns 0 or 1 (printed why). */
static int grid_load_analysis(struct st_db *db, json_t *root, const char *file,
			      long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 64u << 20);
	struct gm_analysis_grid g;
	int rc = scj_parse_analysis_grid(json_object_get(root, "analysis"), &a, &g,
				     err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: analysis: %s\n", file, err);
	} else {
		rc = st_analysis_save(db, &g, now);
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: grid load: %s\n",
				st_error(db));
		else
			printf("loaded %zu analysis owners, %zu shares and %zu "
			       "task classes from %s\n",
			       g.nowners, g.nshares, g.nclasses, file);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

/* Load the DIRAC part of a grid file (groups, shareCorrections,
** cpuSegments; dj_has_config says whether it has one) into `db`. Prints a
** summary line; returns 0 or 1 (after printing why). */
static int grid_load_dirac(struct st_db *db, json_t *root, const char *file,
			   long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 256u << 20);
	struct dj_config cfg;
	int rc = dj_parse_config(root, &a, &cfg, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	} else {
		rc = st_tq_config_save(db, &cfg.pr, cfg.seg, cfg.nseg, now);
		if (rc != GB_OK) {
			fprintf(stderr, "gridbroker: grid load: %s\n",
				st_error(db));
		} else {
			size_t js = 0;
			for (size_t i = 0; i < cfg.pr.ngroups; i++)
				js += cfg.pr.groups[i].job_sharing != 0;
			printf("loaded %zu groups (%zu with JOB_SHARING), %zu "
			       "share-correction instances (corrections %s) "
			       "and %zu CPU segments from %s\n",
			       cfg.pr.ngroups, js, cfg.pr.ninst,
			       cfg.pr.corrections ? "on" : "off", cfg.nseg,
			       file);
		}
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_grid_load(struct cli *cli, int argc, char **argv)
{
	if (argc != 1)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(argv[0], err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	struct arena a;
	arena_init(&a, 256u << 20);
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	int rc = GB_OK;
	/* A grid file may hold only the job-brokerage or the DIRAC part. */
	int has_nuclei = json_object_get(root, "nuclei") != NULL;
	if (has_nuclei || (!grid_has_jobs(root) && !dj_has_config(root)))
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
			if (rc == GB_OK && grid_has_jobs(root) &&
			    grid_load_jobs(db, root, argv[0], now) != 0)
				rc = GB_EINVAL;
			if (rc == GB_OK && json_object_get(root, "analysis") &&
			    grid_load_analysis(db, root, argv[0], now) != 0)
				rc = GB_EINVAL;
			if (rc == GB_OK && dj_has_config(root) &&
			    grid_load_dirac(db, root, argv[0], now) != 0)
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
