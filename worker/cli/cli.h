/*
** cli.h — what the command files of the `gridbroker` tool share (cli_main.c
** holds the command table and the task-brokerage commands; cli_jobs.c the
** job-brokerage ones; cli_match.c the DIRAC task-queue ones). Not part of
** the gbworker library.
*/
#ifndef GB_CLI_H
#define GB_CLI_H

#include <jansson.h>
#include <limits.h>

#include "amqp/amqp.h"
#include "base/config.h"
#include "store/store.h"

struct cli {
	char cfg_path[PATH_MAX];
	struct gb_config cfg;
	int cfg_loaded;
};

/* Open the configured database / AMQP connection; print why not and
** return NULL on failure. */
struct st_db *cli_open_db(struct cli *cli);
struct amq_sync *cli_open_amqp(struct cli *cli);

/* A fresh request message id "<kind>-<id>-<ns time>-<pid>". */
void cli_message_id(char *buf, size_t n, const char *kind, long long id);

/* 1 when a grid file has any job-brokerage key (queues, sw, links,
** fileReplicas). */
int cli_grid_has_jobs(json_t *root);

/* Load the job-brokerage part of a grid file into `db`; the file's ages
** (lastPilotAge, lastStartAge, ...) count back from `now`, the workers'
** clock (clk_now), so that they mean the same to the brokerage whatever
** the clock's test offset. Prints a summary line; returns 0 or 1 (after
** printing why). */
int cli_grid_load_jobs(struct st_db *db, json_t *root, const char *file,
		       long long now);
/* The grid file's "analysis" section (owners, shares, task classes),
** replacing the analysis tables, stamped `now` (the workers' clock).
** Returns 0 or 1 (printed why). */
int cli_grid_load_analysis(struct st_db *db, json_t *root, const char *file,
			   long long now);

/* `gridbroker summary [--since T] [--top N] [--json]` (cli_summary.c). */
int cli_cmd_summary(struct cli *cli, int argc, char **argv);

/* `gridbroker job submit FILE.json`. */
int cli_cmd_job_submit(struct cli *cli, int argc, char **argv);

/* `explain` of a job scenario (root has "queues"): the production job
** brokerage, or the analysis one (throttle, AJ-05..AJ-28) when the task
** has taskType "anal". Returns the exit code. */
int cli_explain_jobs(json_t *root, const char *file, int as_json);

/* `explain` of a timeout scenario ("kind": "timeout"): TO-01..TO-13 per
** job and rebrokerage row. Returns the exit code. */
int cli_explain_timeout(json_t *root, const char *file, int as_json);

/* One-line summary of a jobs.assigned / jobs.pending event body. */
void cli_print_jobs_event(const char *routing_key, json_t *body);

/* ---- DIRAC task queues (cli_match.c) ----------------------------------- */

/* Load the DIRAC part of a grid file (groups, shareCorrections,
** cpuSegments; dj_has_config says whether it has one) into `db`. Prints a
** summary line; returns 0 or 1 (after printing why). */
int cli_grid_load_dirac(struct st_db *db, json_t *root, const char *file,
			long long now);

/* `gridbroker tq submit FILE.json`: job.submit requests for a job object,
** an array of them, or {"jobs": [...]}, in chunks of at most CDT_MAX_JOBS
** jobs that fit the configured message size. */
int cli_cmd_tq_submit(struct cli *cli, int argc, char **argv);

/* `gridbroker tq list [--json]`: the task queues in MariaDB. */
int cli_cmd_tq_list(struct cli *cli, int argc, char **argv);

/* `gridbroker pilot match FILE.json | --site S --setup X --cpu-time N ...`:
** one pilot.match RPC per pilot, the reply printed. */
int cli_cmd_pilot_match(struct cli *cli, int argc, char **argv);

/* `gridbroker job status JOBID STATUS [--site S] [--time T]`. */
int cli_cmd_job_status(struct cli *cli, int argc, char **argv);

/* `explain` of a match scenario (root has "taskQueues"). Returns the exit
** code. */
int cli_explain_match(json_t *root, const char *file, int as_json);

/* ---- decision records (cli_why.c) ------------------------------------ */

/* `gridbroker why task|job|pilot ID [--json] [-a|--all]`: the stored
** decision records of a task, a PanDA job or a pilot (its pilot id or
** request id), latest first. Exit 1 with "no decision recorded for ..."
** when there is none. */
int cli_cmd_why_task(struct cli *cli, int argc, char **argv);
int cli_cmd_why_job(struct cli *cli, int argc, char **argv);
int cli_cmd_why_pilot(struct cli *cli, int argc, char **argv);

#endif
