/*
** cli_match.c — the DIRAC-side commands of `gridbroker`: loading groups,
** share corrections and CPU segments (`grid load`), submitting jobs into
** the task queues (`tq submit`), asking for a job as a pilot would
** (`pilot match`, an RPC), listing the task queues (`tq list`), reporting
** job state changes (`job status`) and explaining a match scenario
** offline (`explain`).
**
** Parsing and the offline match live in dirac_json.c / scenario_match.c,
** shared with the tests; the wire format is codec_tq.c's. This file only
** wires them to files, servers and stdout, so what a file says is checked
** by the same rules whether it is submitted, loaded or explained.
*/
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "base/clock.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "explain/scenario.h"
#include "explain/scenario_match.h"
#include "store/store_tq.h"
#include "base/timefmt.h"

#define CLI_ARENA (256u << 20)
#define CLI_RPC_TIMEOUT_MS 10000
#define CLI_SET_SHOW 3 /* values of a requirement set `tq list` names */

/* ---- grid load ----------------------------------------------------------- */

int cli_grid_load_dirac(struct st_db *db, json_t *root, const char *file,
			long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, CLI_ARENA);
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
	struct amq_props props = {
		.message_id = msgid,
		.type = "job.submit",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	if (rc == GB_OK)
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, "job.submit", &props,
				      sb.data, sb.size, 10000);
	if (rc == GB_OK) {
		printf("submitted %zu job%s (jobID %lld..%lld) in message %s\n",
		       n, n == 1 ? "" : "s", jobs[0].job_id,
		       jobs[n - 1].job_id, msgid);
		(*messages)++;
	} else {
		fprintf(stderr, "gridbroker: submit jobs %lld..%lld: %s\n",
			jobs[0].job_id, jobs[n - 1].job_id, gb_strerror(rc));
	}
	msgpack_sbuffer_destroy(&sb);
	return rc == GB_OK ? 0 : 1;
}

/* A job object, an array of them, or {"jobs": [...]} (a quick-start file
** that also lists "pilots"). */
static int read_jobs(json_t *root, struct arena *a, struct cdt_job **jobs,
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

int cli_cmd_tq_submit(struct cli *cli, int argc, char **argv)
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
	arena_init(&a, CLI_ARENA);
	struct cdt_job *jobs = NULL;
	size_t n = 0, messages = 0;
	int bad = read_jobs(root, &a, &jobs, &n, err, sizeof(err)) != GB_OK;
	if (bad) {
		fprintf(stderr, "gridbroker: %s: %s\n", argv[0], err);
	} else {
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

/* ---- pilot match ---------------------------------------------------------- */

static void print_reply(const struct cdt_pilot *p, const struct cdt_match *m)
{
	printf("pilot %s at %s: ", p->pilot_id, p->site);
	if (m->matched) {
		printf("matched job %lld from TQ %lld (owner %s, group %s, "
		       "cpu segment %lld s)",
		       m->job_id, m->tq_id, m->owner ? m->owner : "?",
		       m->owner_group ? m->owner_group : "?", m->tq_cpu_time);
	} else {
		printf("no job (%s)", m->code ? m->code : "?");
	}
	if (m->decision_id > 0)
		printf("  [decision %lld]", m->decision_id);
	printf("\n  %s\n", m->reason ? m->reason : "");
	if (m->matched)
		return;
	/* TQ-10: the per-filter counts, in the filter table's order. */
	printf("  considered %zu, matched %zu, empty %zu", m->considered,
	       m->matched_tqs, m->empty);
	int first = 1;
	for (int f = 0; f < TQ_NFILTERS; f++) {
		if (m->rejected[f] == 0)
			continue;
		const struct tq_filter_desc *d = tq_filter((enum tq_filter_id)f);
		printf("%s%s (%s) %zu", first ? "; rejected: " : ", ", d->name,
		       d->rule, m->rejected[f]);
		first = 0;
	}
	printf("\n");
}

static int match_one(struct amq_sync *s, const struct cdt_pilot *given,
		     size_t idx, int timeout_ms, int as_json)
{
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "pilot", (long long)idx + 1);
	struct cdt_pilot pilot = *given;
	const struct cdt_pilot *p = &pilot;
	if (pilot.pilot_id == NULL)
		pilot.pilot_id = msgid; /* unique, and says where it came from */
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdt_encode_pilot(p, &sb);
	/* A request still queued when we stop waiting must not take a job
	** for a pilot that has gone: it expires with our wait. */
	char ttl[24];
	snprintf(ttl, sizeof(ttl), "%d", timeout_ms);
	struct amq_props props = {
		.message_id = msgid,
		.type = "pilot.match",
		.content_type = "application/msgpack",
		.expiration = ttl,
		.persistent = 1,
	};
	struct amq_message reply;
	memset(&reply, 0, sizeof(reply));
	if (rc == GB_OK)
		rc = amq_sync_rpc(s, AMQ_EX_REQUESTS, "pilot.match", &props,
				  sb.data, sb.size, timeout_ms, &reply);
	msgpack_sbuffer_destroy(&sb);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: pilot %s: %s%s\n", p->pilot_id,
			gb_strerror(rc),
			rc == GB_ETIMEOUT ? " (is a worker running?)" : "");
		return 1;
	}
	if (as_json) {
		json_t *j = cod_to_json(reply.body, reply.len);
		char *txt = j ? json_dumps(j, JSON_COMPACT) : NULL;
		printf("%s\n", txt ? txt : "null");
		free(txt);
		json_decref(j);
		amq_message_free(&reply);
		return j ? 0 : 1;
	}
	struct arena a;
	arena_init(&a, 1u << 20);
	struct cdt_match m;
	struct cod_error cerr = {"", ""};
	rc = cdt_decode_reply(reply.body, reply.len, &a, &m, &cerr);
	if (rc == GB_OK)
		print_reply(p, &m);
	else
		fprintf(stderr, "gridbroker: pilot %s: bad reply: %s: %s\n",
			p->pilot_id, cerr.field, cerr.problem);
	arena_free(&a);
	amq_message_free(&reply);
	return rc == GB_OK ? 0 : 1;
}

/* The pilots of a file: one object, an array, or {"pilots": [...]}. */
static int read_pilots(const char *file, struct arena *a,
		       struct cdt_pilot **out, size_t *n)
{
	char err[1024] = "";
	json_t *root = scn_read_file(file, err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	json_t *list = json_is_object(root) && json_object_get(root, "pilots")
			       ? json_object_get(root, "pilots")
			       : root;
	int one = !json_is_array(list);
	size_t cnt = one ? 1 : json_array_size(list);
	int rc = GB_OK;
	if (cnt == 0 || cnt > DJ_MAX_PILOTS) {
		snprintf(err, sizeof(err), "pilots: expected 1 to %d pilots",
			 DJ_MAX_PILOTS);
		rc = GB_ERANGE;
	} else if ((*out = arena_alloc(a, cnt * sizeof(**out))) == NULL) {
		snprintf(err, sizeof(err), "pilots: out of memory");
		rc = GB_ENOMEM;
	}
	for (size_t i = 0; rc == GB_OK && i < cnt; i++) {
		char path[48];
		if (one)
			snprintf(path, sizeof(path), "pilot");
		else
			snprintf(path, sizeof(path), "pilots[%zu]", i);
		rc = dj_parse_pilot(one ? list : json_array_get(list, i), path,
				    a, &(*out)[i], err, sizeof(err));
	}
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	*n = rc == GB_OK ? cnt : 0;
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

int cli_cmd_pilot_match(struct cli *cli, int argc, char **argv)
{
	struct cdt_pilot one = {0};
	const char *file = NULL;
	int as_json = 0, flags = 0;
	long timeout_ms = CLI_RPC_TIMEOUT_MS;
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **dst = !strcmp(o, "--site")         ? &one.site
				   : !strcmp(o, "--setup")      ? &one.setup
				   : !strcmp(o, "--platform")   ? &one.platform
				   : !strcmp(o, "--grid-ce")    ? &one.grid_ce
				   : !strcmp(o, "--pilot-type") ? &one.pilot_type
				   : !strcmp(o, "--owner-group")
					   ? &one.owner_group
				   : !strcmp(o, "--owner-dn") ? &one.owner
				   : !strcmp(o, "--pilot-id") ? &one.pilot_id
							      : NULL;
		char *end = NULL;
		if (dst && v && *v) {
			*dst = v;
			flags++;
			i++;
		} else if (!strcmp(o, "--cpu-time") && v) {
			one.cpu_time = strtoll(v, &end, 10);
			if (*end || one.cpu_time < 1 || one.cpu_time > CDT_MAX_CPU)
				return 2;
			flags++;
			i++;
		} else if (!strcmp(o, "--timeout-ms") && v) {
			timeout_ms = strtol(v, &end, 10);
			if (*end || timeout_ms < 1 || timeout_ms > 3600000)
				return 2;
			i++;
		} else if (!strcmp(o, "--json")) {
			as_json = 1;
		} else if (o[0] != '-' && file == NULL) {
			file = o;
		} else {
			return 2;
		}
	}
	/* A file, or a description on the command line; not both. */
	if ((file != NULL) == (flags > 0))
		return 2;
	if (!file && (!one.site || !one.setup || !one.cpu_time ||
		      (one.owner && !one.owner_group)))
		return 2;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct cdt_pilot *pilots = &one;
	size_t n = 1;
	if (file && read_pilots(file, &a, &pilots, &n) != 0) {
		arena_free(&a);
		return 1;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = s == NULL;
	for (size_t i = 0; s && i < n; i++)
		bad |= match_one(s, &pilots[i], i, (int)timeout_ms, as_json);
	if (s)
		amq_sync_close(s);
	arena_free(&a);
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

int cli_cmd_tq_list(struct cli *cli, int argc, char **argv)
{
	int as_json = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") != 0)
			return 2;
		as_json = 1;
	}
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct st_tq_row *rows = NULL;
	size_t n = 0;
	int rc = st_tq_list(db, 1, &a, &rows, &n);
	long long *jobs = n ? arena_alloc(&a, n * sizeof(*jobs)) : NULL;
	if (rc == GB_OK && n && jobs == NULL)
		rc = GB_ENOMEM;
	struct count_ctx cc = {rows, n, jobs};
	if (rc == GB_OK && n)
		rc = st_tq_jobs_scan(db, 0, 0, count_job, &cc);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: tq list: %s: %s\n",
			gb_strerror(rc), st_error(db));
	} else if (as_json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < n; i++)
			json_array_append_new(arr, tq_row_json(&rows[i], jobs[i]));
		char *txt = arr ? json_dumps(arr, JSON_INDENT(2)) : NULL;
		printf("%s\n", txt ? txt : "[]");
		free(txt);
		json_decref(arr);
	} else {
		/* owners by their CN: DNs share long prefixes; --json has
		** them whole */
		printf("%6s  %-16s %-10s %-16s %7s %7s %10s  %s\n", "TQ",
		       "OWNER", "GROUP", "SETUP", "CPU", "JOBS", "PRIORITY",
		       "REQUIREMENTS");
		char req[512];
		for (size_t i = 0; i < n; i++) {
			reqs_text(&rows[i], req, sizeof(req));
			printf("%6lld  %-16.16s %-10.10s %-16.16s %7lld %7lld "
			       "%10.6g  %s\n",
			       rows[i].tq_id, scm_short_dn(rows[i].owner),
			       rows[i].owner_group, rows[i].setup,
			       rows[i].cpu_time, jobs[i], rows[i].priority,
			       req);
		}
		printf("%zu task queue%s\n", n, n == 1 ? "" : "s");
	}
	arena_free(&a);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
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
	struct amq_props props = {
		.message_id = msgid,
		.type = "job.status",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	if (rc == GB_OK && s == NULL) {
		s = cli_open_amqp(cli);
		if (s == NULL)
			rc = GB_EAMQPGONE;
	}
	if (rc == GB_OK)
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, "job.status", &props,
				      sb->data, sb->size, 10000);
	if (rc == GB_OK)
		printf("%s %lld -> %s (message %s)\n", what, job_id, word,
		       msgid);
	else
		fprintf(stderr, "gridbroker: job status %lld: %s\n", job_id,
			gb_strerror(rc));
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
	const char *pos[2] = {NULL, NULL}, *when = NULL;
	int npos = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--panda")) {
			continue;
		} else if (!strcmp(argv[i], "--sub-status") && i + 1 < argc) {
			st.job_sub_status = argv[++i];
		} else if (!strcmp(argv[i], "--site") && i + 1 < argc) {
			st.site = argv[++i];
		} else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
			when = argv[++i];
		} else if (argv[i][0] != '-' && npos < 2) {
			pos[npos++] = argv[i];
		} else {
			return 2;
		}
	}
	if (npos != 2)
		return 2;
	char *end = NULL;
	st.job_id = strtoll(pos[0], &end, 10);
	if (*end || st.job_id < 1)
		return 2;
	if (!strcmp(pos[1], "heartbeat")) {
		st.heartbeat = 1;
		st.status = TO_ST_RUNNING;
	} else {
		int code = !strcmp(pos[1], "started") ? (int)TO_ST_RUNNING
						       : to_status_parse(pos[1]);
		if (code < 0 || code == TO_ST_PENDING) {
			fprintf(stderr, "gridbroker: unknown PanDA status "
					"'%s'; one of: heartbeat started",
				pos[1]);
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
	if (when && parse_time(when, &st.time) != GB_OK) {
		fprintf(stderr, "gridbroker: --time: expected unix seconds or "
				"an RFC 3339 time, got '%s'\n", when);
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

int cli_cmd_job_status(struct cli *cli, int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--panda"))
			return panda_status(cli, argc, argv);
	struct cdt_status st = {0, CDT_ST_WAITING, (long long)time(NULL), NULL};
	const char *pos[2] = {NULL, NULL};
	int npos = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--site") && i + 1 < argc) {
			st.site = argv[++i];
		} else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
			if (parse_time(argv[++i], &st.time) != GB_OK) {
				fprintf(stderr, "gridbroker: --time: expected "
						"unix seconds or an RFC 3339 "
						"time, got '%s'\n",
					argv[i]);
				return 1;
			}
		} else if (argv[i][0] != '-' && npos < 2) {
			pos[npos++] = argv[i];
		} else {
			return 2;
		}
	}
	if (npos != 2)
		return 2;
	char *end = NULL;
	st.job_id = strtoll(pos[0], &end, 10);
	if (*end || st.job_id < 1)
		return 2;
	int code = cdt_status_parse(pos[1]);
	if (code < 0) {
		fprintf(stderr, "gridbroker: unknown status '%s'; one of:",
			pos[1]);
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

/* ---- explain ---------------------------------------------------------------- */

int cli_explain_match(json_t *root, const char *file, int as_json)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 1024u << 20);
	struct scm_scenario sc;
	struct scm_result res;
	int rc = scm_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = scm_run(&sc, &a, &res);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	} else if (as_json) {
		json_t *j = scm_result_json(&sc, &res);
		char *txt = j ? json_dumps(j, JSON_INDENT(2) |
						      JSON_REAL_PRECISION(10))
			      : NULL;
		printf("%s\n", txt ? txt : "{}");
		free(txt);
		json_decref(j);
	} else {
		scm_print(stdout, &sc, &res);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}
