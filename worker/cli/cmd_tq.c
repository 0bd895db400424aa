/*
** cmd_tq.c — `gridbroker tq submit|list`: the DIRAC task queues. `tq
** submit` publishes job.submit requests for a file's jobs, which the
** workers file into task queues; `tq list` shows the queues in MariaDB
** with their waiting jobs.
**
** Parsing is explain/dirac_json.c's, the wire format codec_tq.c's, the
** rows store_tq.c's; this file only wires them to files, servers and
** stdout.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "explain/scenario_match.h"
#include "gb_error.h"
#include "store/store_tq.h"

#define CLI_ARENA (256u << 20)
#define CLI_SET_SHOW 3 /* values of a requirement set `tq list` names */

/* ---- tq submit ------------------------------------------------------------ */

/*
** Publish jobs[0..n) as job.submit messages of at most CDT_MAX_JOBS jobs
** that also fit the configured message size: a chunk that encodes too
** large is split in two (jobs with long site lists make 5000 jobs exceed
** a megabyte, and the worker would dead-letter the message).
*/
static int submit_chunk(struct amq_sync *s, const struct cdt_job *jobs,
			size_t n, size_t max_bytes, size_t *messages)
{
	if (n > CDT_MAX_JOBS)
		return submit_chunk(s, jobs, CDT_MAX_JOBS, max_bytes,
				    messages) |
		       submit_chunk(s, jobs + CDT_MAX_JOBS, n - CDT_MAX_JOBS,
				    max_bytes, messages);
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	struct cdt_submit sub = {(struct cdt_job *)(uintptr_t)jobs, n};
	int rc = cdt_encode_submit(&sub, &sb);
	if (rc == GB_OK && sb.size > max_bytes && n > 1) {
		msgpack_sbuffer_destroy(&sb);
		return submit_chunk(s, jobs, n / 2, max_bytes, messages) |
		       submit_chunk(s, jobs + n / 2, n - n / 2, max_bytes,
				    messages);
	}
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "tq", jobs[0].job_id);
	if (rc == GB_OK)
		rc = cli_publish(s, "job.submit", msgid, sb.data, sb.size);
	if (rc == GB_OK) {
		printf("submitted %zu job%s (jobID %lld..%lld) in message %s\n",
		       n, n == 1 ? "" : "s", jobs[0].job_id,
		       jobs[n - 1].job_id, msgid);
		(*messages)++;
	} else {
		fprintf(stderr, "gridbroker: submit jobs %lld..%lld: %s\n",
			jobs[0].job_id, jobs[n - 1].job_id, amq_sync_why(s, rc));
	}
	msgpack_sbuffer_destroy(&sb);
	return rc == GB_OK ? 0 : 1;
}

/* A job object, an array of them, or {"jobs": [...]} (a quick-start file
** that also lists "pilots"). */
static int parse_jobs(json_t *root, struct arena *a, struct cdt_job **jobs,
		      size_t *n, char *err, size_t errlen)
{
	if (json_is_object(root) && json_object_get(root, "jobs") == NULL) {
		*jobs = arena_alloc(a, sizeof(**jobs));
		*n = 1;
		return *jobs ? dj_parse_job(root, "job", a, *jobs, err, errlen)
			     : GB_ENOMEM;
	}
	json_t *list = root;
	if (json_is_object(root)) {
		static const char *const keys[] = {"$schema", "description",
						   "jobs", "pilots", NULL};
		const char *key;
		json_t *v;
		json_object_foreach(root, key, v) {
			size_t k = 0;
			while (keys[k] && strcmp(keys[k], key) != 0)
				k++;
			if (keys[k] == NULL) {
				snprintf(err, errlen, "%s: unknown field", key);
				return GB_EINVAL;
			}
		}
		list = json_object_get(root, "jobs");
	}
	return dj_parse_jobs(list, "jobs", a, jobs, n, err, errlen);
}

/* The jobs of `file` (its JSON `root`) into an array from `a`; prints
** why not and returns 1 when they do not parse, else 0. */
static int read_jobs(json_t *root, const char *file, struct arena *a,
		     struct cdt_job **jobs, size_t *n)
{
	char err[1024] = "";
	if (parse_jobs(root, a, jobs, n, err, sizeof(err)) == GB_OK)
		return 0;
	fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	return 1;
}

static int cmd_tq_submit(struct cli *cli, int argc, char **argv)
{
	int status;
	json_t *root = cli_read_json_arg(argc, argv, &status);
	if (root == NULL)
		return status;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct cdt_job *jobs = NULL;
	size_t n = 0, messages = 0;
	int bad = read_jobs(root, argv[0], &a, &jobs, &n);
	if (!bad) {
		struct amq_sync *s = cli_open_amqp(cli);
		bad = s == NULL;
		if (s) {
			bad = submit_chunk(s, jobs, n,
					   (size_t)cli->cfg.max_message_bytes,
					   &messages);
			amq_sync_close(s);
		}
		if (!bad && messages > 1)
			printf("submitted %zu jobs in %zu messages\n", n,
			       messages);
	}
	arena_free(&a);
	json_decref(root);
	return bad;
}

/* ---- tq list ----------------------------------------------------------- */

struct count_ctx {
	const struct st_tq_row *rows;
	size_t n;
	long long *jobs;
};

static int count_job(void *ud, const struct st_tq_jobrow *r)
{
	struct count_ctx *c = ud;
	size_t lo = 0, hi = c->n;
	while (lo < hi) { /* rows are ordered by tq_id */
		size_t mid = lo + (hi - lo) / 2;
		if (c->rows[mid].tq_id < r->tq_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n && c->rows[lo].tq_id == r->tq_id)
		c->jobs[lo]++;
	return 0;
}

/* "sites=LCG.CERN.cern,LCG.CNAF.it,+2 platforms=x86_64-el9" or "-". */
static void reqs_text(const struct st_tq_row *r, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int f = 0; f < TQ_NFIELDS && used < n; f++) {
		const struct tq_strset *s = &r->set[f];
		if (s->n == 0)
			continue;
		int w = snprintf(buf + used, n - used, "%s%s=", used ? " " : "",
				 tq_field_names[f]);
		used += w > 0 ? (size_t)w : 0;
		for (size_t i = 0; i < s->n && i < CLI_SET_SHOW && used < n;
		     i++) {
			w = snprintf(buf + used, n - used, "%s%s", i ? "," : "",
				     s->v[i]);
			used += w > 0 ? (size_t)w : 0;
		}
		if (s->n > CLI_SET_SHOW && used < n) {
			w = snprintf(buf + used, n - used, ",+%zu",
				     s->n - CLI_SET_SHOW);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	if (buf[0] == '\0')
		snprintf(buf, n, "-");
}

static json_t *tq_row_json(const struct st_tq_row *r, long long jobs)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:f}", "id",
			      (json_int_t)r->tq_id, "ownerDN", r->owner,
			      "ownerGroup", r->owner_group, "setup", r->setup,
			      "cpuTime", (json_int_t)r->cpu_time, "jobs",
			      (json_int_t)jobs, "priority", r->priority);
	for (int f = 0; o && f < TQ_NFIELDS; f++) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < r->set[f].n; i++)
			json_array_append_new(arr, json_string(r->set[f].v[i]));
		json_object_set_new(o, tq_field_names[f], arr ? arr : json_null());
	}
	return o;
}

/*
** The task queues in MariaDB, ordered by id, and each one's waiting jobs
** counted into (*jobs)[i]; memory from `a`. Returns GB_OK or the store's
** error (st_error).
*/
static int read_queues(struct st_db *db, struct arena *a,
		       struct st_tq_row **rows, long long **jobs, size_t *n)
{
	*rows = NULL;
	*n = 0;
	int rc = st_tq_list(db, 1, a, rows, n);
	*jobs = *n ? arena_alloc(a, *n * sizeof(**jobs)) : NULL;
	if (rc == GB_OK && *n && *jobs == NULL)
		rc = GB_ENOMEM;
	struct count_ctx cc = {*rows, *n, *jobs};
	if (rc == GB_OK && *n)
		rc = st_tq_jobs_scan(db, 0, 0, count_job, &cc);
	return rc;
}

/* The queues as a table; owners by their CN, since DNs share long
** prefixes (--json has them whole). */
static void print_queues(const struct st_tq_row *rows, const long long *jobs,
			 size_t n)
{
	printf("%6s  %-16s %-10s %-16s %7s %7s %10s  %s\n", "TQ", "OWNER",
	       "GROUP", "SETUP", "CPU", "JOBS", "PRIORITY", "REQUIREMENTS");
	char req[512];
	for (size_t i = 0; i < n; i++) {
		reqs_text(&rows[i], req, sizeof(req));
		printf("%6lld  %-16.16s %-10.10s %-16.16s %7lld %7lld "
		       "%10.6g  %s\n",
		       rows[i].tq_id, scm_short_dn(rows[i].owner),
		       rows[i].owner_group, rows[i].setup, rows[i].cpu_time,
		       jobs[i], rows[i].priority, req);
	}
	printf("%zu task queue%s\n", n, n == 1 ? "" : "s");
}

static int cmd_tq_list(struct cli *cli, int argc, char **argv)
{
	int as_json = 0;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, NULL, 0, 0);
	if (nw < 0)
		return -nw;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct st_tq_row *rows;
	long long *jobs;
	size_t n;
	int rc = read_queues(db, &a, &rows, &jobs, &n);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: tq list: %s: %s\n",
			gb_strerror(rc), st_error(db));
	} else if (as_json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < n; i++)
			json_array_append_new(arr, tq_row_json(&rows[i], jobs[i]));
		cli_print_json(arr, JSON_INDENT(2), "[]");
	} else {
		print_queues(rows, jobs, n);
	}
	arena_free(&a);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
static const struct cli_cmd_entry tq_cmds[] = {
	{"submit", "FILE.json", "publish job.submit requests for a DIRAC job object, an array of them, or {\"jobs\": [...]} (chunks of at most 5000 jobs per message)", 1, cmd_tq_submit, NULL},
	{"list", "[--json]", "list the DIRAC task queues: owner, group, setup, CPU segment, waiting jobs, priority, requirements", 1, cmd_tq_list, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_tq = {.name = "tq", .subs = tq_cmds};
