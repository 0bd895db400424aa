/*
** cmd_job.c — `gridbroker job submit|status`: one job, or the jobs of a
** task, sent to the workers. `job submit` publishes job.broker requests
** (PanDA job brokerage) for a file's request objects; `job status`
** reports a job's state change: a DIRAC job's (waiting .. deleted) by
** default, a PanDA job's (defined .. cancelled, started, heartbeat) with
** --panda, whose timeouts the workers watch.
**
** Parsing is explain/'s (scenario_jobs.c), the wire format codec/'s; this
** file only wires them to files, the broker and stdout.
*/
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/clock.h"
#include "base/timefmt.h"
#include "cli/cli.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "explain/scenario_jobs.h"
#include "gb_error.h"

/* ---- job submit ------------------------------------------------------- */

/* One request object, an array of them, or a job scenario (its "task"). */
static json_t *pick_requests(json_t *root)
{
	if (json_is_object(root) && json_object_get(root, "queues") &&
	    json_object_get(root, "task"))
		return json_object_get(root, "task");
	return root;
}

static int encode_request(json_t *obj, const char *path, struct arena *a,
			  msgpack_sbuffer *sb, struct cli_subject *subj,
			  char *err, size_t errlen)
{
	struct gm_request r;
	int rc = scj_parse_request(obj, path, a, 0, &r, err, errlen);
	if (rc != GB_OK)
		return rc;
	subj->id = r.t.task_id;
	snprintf(subj->what, sizeof(subj->what), "jobs of task %lld",
		 r.t.task_id);
	snprintf(subj->sent, sizeof(subj->sent), "%zu jobs of task %lld",
		 r.njobs, r.t.task_id);
	return cdj_encode_request(&r, sb);
}

static const struct cli_submit job_submit = {
	.type = "job.broker",
	.kind = "jobs",
	.many = "requests",
	.one = "request",
	.pick = pick_requests,
	.encode = encode_request,
};

static int cmd_job_submit(struct cli *cli, int argc, char **argv)
{
	return cli_submit_file(cli, argc, argv, &job_submit);
}

/* ---- job status ------------------------------------------------------------ */

/* Unix seconds, or an RFC 3339 time. */
static int parse_time(const char *s, long long *out)
{
	char *end = NULL;
	if (isdigit((unsigned char)s[0])) {
		errno = 0;
		long long t = strtoll(s, &end, 10);
		if (*end == '\0' && errno == 0) {
			*out = t;
			return t <= CDT_MAX_TIME ? GB_OK : GB_ERANGE;
		}
	}
	return tf_parse(s, out);
}

/* --time T into *out; prints why not and returns 1 when T is no time,
** else 0. */
static int time_arg(const char *word, long long *out)
{
	if (parse_time(word, out) == GB_OK)
		return 0;
	fprintf(stderr, "gridbroker: --time: expected unix seconds or an "
			"RFC 3339 time, got '%s'\n", word);
	return 1;
}

/* time_arg as a cli_opt read. */
static int read_time(const char *word, void *dst)
{
	return time_arg(word, dst);
}

/*
** The words of both `job status` forms: the options in `opts`, then
** JOBID STATUS. Sets *job_id and *status; returns 0, or the exit status
** (2 for a usage error, or an option's).
*/
static int status_words(int argc, char **argv, const struct cli_opt *opts,
			long long *job_id, const char **status)
{
	const char *pos[2];
	int n = cli_parse_opts(argc, argv, opts, pos, 2, 0);
	if (n < 0)
		return -n;
	if (n != 2)
		return 2;
	char *end = NULL;
	*job_id = strtoll(pos[0], &end, 10);
	if (*end || *job_id < 1)
		return 2;
	*status = pos[1];
	return 0;
}

/*
** Publish an encoded job.status (`enc` is the encoder's result) on `s`,
** or on a connection opened here when `s` is NULL (only once the body
** encoded), and say what happened. Closes the connection and frees `sb`.
** Returns the command's exit status.
*/
static int publish_status(struct cli *cli, struct amq_sync *s, int enc,
			  msgpack_sbuffer *sb, long long job_id,
			  const char *what, const char *word)
{
	int rc = enc;
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "status", job_id);
	if (rc == GB_OK && s == NULL) {
		s = cli_open_amqp(cli);
		if (s == NULL)
			rc = GB_EAMQPGONE;
	}
	if (rc == GB_OK)
		rc = cli_publish(s, "job.status", msgid, sb->data, sb->size);
	if (rc == GB_OK)
		printf("%s %lld -> %s (message %s)\n", what, job_id, word,
		       msgid);
	else
		fprintf(stderr, "gridbroker: job status %lld: %s\n", job_id,
			amq_sync_why(s, rc));
	if (s)
		amq_sync_close(s);
	msgpack_sbuffer_destroy(sb);
	return rc == GB_OK ? 0 : 1;
}

/*
** `job status --panda JOBID STATUS`: a PanDA job.status (system "panda").
** The default time is the worker clock's now (with the configured test
** offset), since an update older than the job's last brokerage is stale.
*/
static int panda_status(struct cli *cli, int argc, char **argv)
{
	struct cdp_status st;
	memset(&st, 0, sizeof(st));
	const char *word = NULL, *when = NULL;
	int panda = 0;
	const struct cli_opt opts[] = {
		CLI_FLAG("--panda", NULL, &panda),
		CLI_WORD("--sub-status", NULL, &st.job_sub_status),
		CLI_WORD("--site", NULL, &st.site),
		CLI_WORD("--time", NULL, &when),
		CLI_OPT_END,
	};
	int status = status_words(argc, argv, opts, &st.job_id, &word);
	if (status != 0)
		return status;
	if (!strcmp(word, "heartbeat")) {
		st.heartbeat = 1;
		st.status = TO_ST_RUNNING;
	} else {
		int code = !strcmp(word, "started") ? (int)TO_ST_RUNNING
						     : to_status_parse(word);
		if (code < 0 || code == TO_ST_PENDING) {
			fprintf(stderr, "gridbroker: unknown PanDA status "
					"'%s'; one of: heartbeat started",
				word);
			for (int s = TO_ST_DEFINED; s < TO_NSTATUS; s++)
				fprintf(stderr, " %s",
					to_status_name((enum to_status)s));
			fprintf(stderr, "\n");
			return 1;
		}
		st.status = (enum to_status)code;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	if (s == NULL)
		return 1;
	clk_set_offset_file(cli->cfg.clock_offset_file);
	st.time = clk_now();
	if (when && time_arg(when, &st.time) != 0) {
		amq_sync_close(s);
		return 1;
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdp_encode_status(&st, &sb);
	return publish_status(cli, s, rc, &sb, st.job_id, "PanDA job",
			      st.heartbeat ? "heartbeat"
					   : to_status_name(st.status));
}

/* `job status JOBID STATUS`: a DIRAC job's (system "dirac"), at the time
** given or this host's now. */
static int cmd_job_status(struct cli *cli, int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--panda"))
			return panda_status(cli, argc, argv);
	struct cdt_status st = {0, CDT_ST_WAITING, (long long)time(NULL), NULL};
	const char *word = NULL;
	const struct cli_opt opts[] = {
		CLI_WORD("--site", NULL, &st.site),
		CLI_READ("--time", NULL, read_time, &st.time),
		CLI_OPT_END,
	};
	int status = status_words(argc, argv, opts, &st.job_id, &word);
	if (status != 0)
		return status;
	int code = cdt_status_parse(word);
	if (code < 0) {
		fprintf(stderr, "gridbroker: unknown status '%s'; one of:",
			word);
		for (int s = 0; s < CDT_NSTATUS; s++)
			fprintf(stderr, " %s",
				cdt_status_name((enum cdt_job_status)s));
		fprintf(stderr, "\n");
		return 1;
	}
	st.status = (enum cdt_job_status)code;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdt_encode_status(&st, &sb);
	return publish_status(cli, NULL, rc, &sb, st.job_id, "job",
			      cdt_status_name(st.status));
}

/* clang-format off */
static const struct cli_cmd_entry job_cmds[] = {
	{"submit", "FILE.json [--repeat N]", "publish job.broker requests for a job request object (a task and its jobs), an array of them, or a job scenario's task; --repeat sends each N times with the same message id (a producer's retries)", 1, cmd_job_submit, NULL},
	{"status", "JOBID STATUS [--site S] [--time T] | --panda JOBID STATUS [--sub-status S] [--time T]", "publish job.status for a DIRAC job (waiting, matched, running, stalled, completing, done, failed, killed, deleted), or with --panda for a PanDA job (defined .. cancelled, started, heartbeat); T is unix seconds or RFC 3339, default now (the worker clock's, with its test offset, for --panda)", 1, cmd_job_status, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_job = {.name = "job", .subs = job_cmds};
