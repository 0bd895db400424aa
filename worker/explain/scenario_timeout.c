/*
** scenario_timeout.c — timeout scenarios: parsing, running every job
** through the timeout rules and every rebrokerage row through TO-13, and
** the JSON of the result and the text of what only an offline run shows
** (declared in scenario_timeout.h).
**
** Why the output has both the verdict and the next check: an operator asks
** either "why was job X failed?" (the rule, the age it compared and the
** limit it passed: the job's decision record, which report/render.h
** prints) or "when will job Y be looked at?" (to_next_check, the time the
** worker's scan will find a rule due: printed here, since no record is
** made for a job no rule fires for).
**
** Parsing is strict like the other scenario files (jsonutil.h tables):
** these files are written by hand, and a typo in a status or time must be
** an error naming the field, not a default that answers another question.
*/
#include "explain/scenario_timeout.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "model/decide.h"
#include "base/jsonutil.h"
#include "explain/scenario.h"
#include "base/timefmt.h"

#define HOUR 3600.0
#define DAY 86400.0

/* ---- parsing -------------------------------------------------------------- */

static const char *const qstatus_words[] = {"online", "offline", "brokeroff",
					    "test", "standby", "paused", NULL};
#define Q struct sct_queue
static const struct ju_fld queue_flds[] = {
	JU_TEXT("description"),
	JU_WORD("status", Q, status, 0, qstatus_words),
	JU_BOOL("disableReassign", Q, q.disable_reassign),
	JU_TIME("lastStart", Q, q.last_start, 0),
	JU_NUM("transtimehi", Q, q.transtimehi, 0, INFINITY, 0),
	JU_NUM("transtimelo", Q, q.transtimelo, 0, INFINITY, 0),
	JU_STR("workflow", Q, workflow, 0, ""),
	JU_FLD_END,
};
#undef Q

/* A job as the file has it; currentPriority is an int in to_job. */
struct job_rec {
	long long job_id, task_id;
	const char *status, *queue, *sub_status, *gshare;
	long long since, created, heartbeat;
	long prio;
};
#define J struct job_rec
static const struct ju_fld job_flds[] = {
	JU_TEXT("description"),
	JU_LLNG("jobID", J, job_id, JU_F_REQ, 1),
	JU_LLNG("taskID", J, task_id, 0, 0),
	JU_STR("gshare", J, gshare, 0, ""),
	JU_STR("status", J, status, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("queue", J, queue, JU_F_NONEMPTY, NULL),
	JU_TIME("statusSince", J, since, JU_F_REQ),
	JU_TIME("createdAt", J, created, 0),
	JU_TIME("lastHeartbeat", J, heartbeat, 0),
	JU_LNG("currentPriority", J, prio, -1e6, 1e6, 0),
	JU_STR("jobSubStatus", J, sub_status, 0, ""),
	JU_FLD_END,
};
#undef J

#define RB struct sct_rebro
static const struct ju_fld rebro_flds[] = {
	JU_TEXT("description"),
	JU_STR("queue", RB, queue, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("gshare", RB, gshare, 0, ""),
	JU_NUM("nQueue", RB, in.nqueue, 0, INFINITY, 0),
	JU_NUM("nRun", RB, in.nrun, 0, INFINITY, 0),
	JU_NUM("nQueueTotal", RB, in.nqueue_total, 0, INFINITY, 0),
	JU_BOOL("hasNSlots", RB, in.has_nslots),
	JU_FLD_END,
};
#undef RB

/* The queues sorted by name, for the references of jobs and rebro rows. */
struct qindex {
	struct ju_nameref *names;
	size_t n;
};

static int queue_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	struct sct_queue *q = elem;
	memset(q, 0, sizeof(*q));
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &q->name);
	if (rc == GB_OK)
		rc = ju_parse_record(c, v, path, queue_flds, NULL, q);
	q->q.paused = rc == GB_OK && strcmp(q->status, "paused") == 0;
	return rc;
}

static int job_item(const struct ju_ctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	(void)key;
	struct sct_job *j = elem;
	struct job_rec r;
	memset(&r, 0, sizeof(r));
	memset(j, 0, sizeof(*j));
	int rc = ju_parse_record(c, v, path, job_flds, NULL, &r);
	if (rc != GB_OK)
		return rc;
	int st = to_status_parse(r.status);
	if (st < 0) {
		char f[JU_PATH], list[200] = "";
		for (int i = 0; i < TO_NSTATUS; i++) {
			size_t l = strlen(list);
			snprintf(list + l, sizeof(list) - l, "%s%s",
				 i ? ", " : "",
				 to_status_name((enum to_status)i));
		}
		ju_path_key(f, sizeof(f), path, "status");
		return ju_fail(c, GB_ERANGE, f,
			       "unknown status '%.64s' (expected %s)", r.status,
			       list);
	}
	j->j = (struct to_job){
		.job_id = r.job_id,
		.status = (enum to_status)st,
		.status_since = r.since,
		.created_at = r.created ? r.created : r.since,
		.last_heartbeat = r.heartbeat,
		.current_priority = (int)r.prio,
		.workflow = "",
		.own_stageout = r.sub_status[0] != '\0',
	};
	j->queue = r.queue;
	j->task_id = r.task_id;
	j->gshare = r.gshare;
	j->sub_status = r.sub_status;
	j->qidx = -1;
	return GB_OK;
}

static int rebro_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	(void)key;
	memset(elem, 0, sizeof(struct sct_rebro));
	return ju_parse_record(c, v, path, rebro_flds, NULL, elem);
}

/* The index of queue `name`, or -1 after an error at `path`. */
static long find_queue(const struct ju_ctx *c, const struct qindex *qi,
		       const char *name, const char *path)
{
	const struct ju_nameref *r =
		qi->n ? bsearch(name, qi->names, qi->n, sizeof(*qi->names),
				ju_nameref_key_cmp)
		      : NULL;
	if (r == NULL) {
		ju_fail(c, GB_ENOTFOUND, path, "no queue \"%.64s\" in queues",
			name);
		return -1;
	}
	return (long)r->idx;
}

/* Jobs and rebro rows name queues of "queues"; jobs take their queue's
** workflow (HEARTBEAT_TIMEOUT_<workflow>, TO-09); jobIDs are unique. */
static int link_refs(const struct ju_ctx *c, struct sct_scenario *s)
{
	struct qindex qi = {NULL, s->nqueues};
	if (s->nqueues) {
		qi.names = ju_alloc_n(c, s->nqueues, sizeof(*qi.names));
		if (qi.names == NULL)
			return ju_fail(c, GB_ENOMEM, "queues", "out of memory");
		for (size_t i = 0; i < s->nqueues; i++)
			qi.names[i] =
				(struct ju_nameref){s->queues[i].name, i};
		qsort(qi.names, s->nqueues, sizeof(*qi.names), ju_nameref_cmp);
	}
	char p[JU_PATH], f[JU_PATH];
	for (size_t i = 0; i < s->njobs; i++) {
		struct sct_job *j = &s->jobs[i];
		if (j->queue == NULL)
			continue;
		ju_path_idx(p, sizeof(p), "jobs", i);
		ju_path_key(f, sizeof(f), p, "queue");
		j->qidx = find_queue(c, &qi, j->queue, f);
		if (j->qidx < 0)
			return GB_ENOTFOUND;
		j->j.workflow = s->queues[j->qidx].workflow;
	}
	for (size_t i = 0; i < s->nrebro; i++) {
		ju_path_idx(p, sizeof(p), "rebro", i);
		ju_path_key(f, sizeof(f), p, "queue");
		if (find_queue(c, &qi, s->rebro[i].queue, f) < 0)
			return GB_ENOTFOUND;
	}
	struct ju_nameref *ids =
		s->njobs ? ju_alloc_n(c, s->njobs, sizeof(*ids)) : NULL;
	if (s->njobs && ids == NULL)
		return ju_fail(c, GB_ENOMEM, "jobs", "out of memory");
	for (size_t i = 0; i < s->njobs; i++) {
		char id[24];
		snprintf(id, sizeof(id), "%lld", s->jobs[i].j.job_id);
		ids[i] = (struct ju_nameref){arena_strdup(c->a, id), i};
		if (ids[i].name == NULL)
			return ju_fail(c, GB_ENOMEM, "jobs", "out of memory");
	}
	return ju_dups(c, ids, s->njobs, "jobs", ".jobID", "jobID");
}

struct head {
	const char *kind;
	long long now;
};
static const struct ju_fld head_flds[] = {
	JU_TEXT("$schema"),
	JU_TEXT("description"),
	JU_STR("kind", struct head, kind, JU_F_REQ, NULL),
	JU_TIME("now", struct head, now, JU_F_REQ),
	JU_FLD_END,
};
static const char *const scenario_keys[] = {"params", "queues", "jobs",
					    "rebro", NULL};

int sct_is_timeout_scenario(json_t *root)
{
	json_t *k = json_is_object(root) ? json_object_get(root, "kind") : NULL;
	return json_is_string(k) && strcmp(json_string_value(k), "timeout") == 0;
}

int sct_parse_scenario(json_t *root, struct arena *a, struct sct_scenario *out,
		       char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 1, 0};
	int rc = ju_scenario_begin(&c, root, out, sizeof(*out));
	if (rc != GB_OK)
		return rc;
	struct head h = {NULL, 0};
	rc = ju_parse_record(&c, root, "", head_flds, scenario_keys, &h);
	if (rc == GB_OK && strcmp(h.kind, "timeout") != 0)
		return ju_fail(&c, GB_ERANGE, "kind",
			       "expected \"timeout\", got '%.64s'", h.kind);
	out->now = h.now;
	struct prm_kv *kv = NULL;
	size_t nkv = 0;
	if (rc == GB_OK)
		rc = scn_parse_params(json_object_get(root, "params"), "params",
				      a, &kv, &nkv, err, errlen);
	out->params = (struct prm_set){kv, nkv};
	void *qs = NULL, *jobs = NULL, *rebro = NULL;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "queues"),
				    "queues", 1, SCT_MAX_QUEUES,
				    sizeof(struct sct_queue), queue_item, &qs,
				    &out->nqueues);
	out->queues = qs;
	if (rc == GB_OK && json_object_get(root, "jobs") == NULL)
		return ju_fail(&c, GB_EMISSING, "jobs", "missing");
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "jobs"), "jobs",
				    0, SCT_MAX_JOBS, sizeof(struct sct_job),
				    job_item, &jobs, &out->njobs);
	out->jobs = jobs;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "rebro"), "rebro",
				    0, SCT_MAX_REBRO, sizeof(struct sct_rebro),
				    rebro_item, &rebro, &out->nrebro);
	out->rebro = rebro;
	if (rc == GB_OK)
		rc = link_refs(&c, out);
	return rc;
}

/* ---- running -------------------------------------------------------------- */

int sct_run(const struct sct_scenario *s, struct arena *a,
	    struct sct_result *out)
{
	if (s == NULL || a == NULL || out == NULL ||
	    (s->njobs && s->jobs == NULL) || (s->nrebro && s->rebro == NULL))
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->jobs = arena_alloc(a, (s->njobs ? s->njobs : 1) *
					   sizeof(*out->jobs));
	out->rebro = arena_alloc(a, (s->nrebro ? s->nrebro : 1) *
					    sizeof(*out->rebro));
	if (out->jobs == NULL || out->rebro == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < s->njobs; i++) {
		const struct sct_job *j = &s->jobs[i];
		const struct to_queue *q =
			j->qidx >= 0 ? &s->queues[j->qidx].q : NULL;
		struct sct_job_result *r = &out->jobs[i];
		memset(r, 0, sizeof(*r));
		struct md_timeout m;
		int rc = md_timeout(&j->j, q, &s->params, s->now, &m);
		if (rc != GB_OK)
			return rc;
		r->fired = m.fired;
		r->v = m.v;
		r->exempt = m.exempt;
		r->has_next = m.has_next;
		r->next_at = m.next_at;
	}
	for (size_t i = 0; i < s->nrebro; i++) {
		const struct sct_rebro *b = &s->rebro[i];
		int rc = to_fast_rebro(&b->in, &s->params, b->gshare,
				       &out->rebro[i]);
		if (rc != GB_OK)
			return rc;
	}
	return GB_OK;
}

/* ---- output --------------------------------------------------------------- */

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jtime(long long t)
{
	char buf[32];
	return tf_format(t, buf, sizeof(buf)) == GB_OK ? ju_str(buf)
						       : json_null();
}

static json_t *job_json(const struct sct_scenario *s, const struct sct_job *j,
			const struct sct_job_result *r)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int f = r->fired;
	int bad = ju_set(o, "jobID", json_integer(j->j.job_id));
	bad |= ju_set(o, "status", ju_str(to_status_name(j->j.status)));
	bad |= ju_set(o, "queue", ju_str(j->queue));
	bad |= ju_set(o, "rule", f ? ju_str(r->v.rule) : json_null());
	bad |= ju_set(o, "what", f ? ju_str(r->v.what) : json_null());
	bad |= ju_set(o, "action", ju_str(to_action_name(r->v.action)));
	bad |= ju_set(o, "ageSeconds", f ? jnum(r->v.age_s) : json_null());
	bad |= ju_set(o, "limitSeconds", f ? jnum(r->v.limit_s) : json_null());
	bad |= ju_set(o, "ageHours", f ? jnum(r->v.age_s / HOUR) : json_null());
	bad |= ju_set(o, "limitHours",
		      f ? jnum(r->v.limit_s / HOUR) : json_null());
	bad |= ju_set(o, "ageDays", f ? jnum(r->v.age_s / DAY) : json_null());
	bad |= ju_set(o, "limitDays", f ? jnum(r->v.limit_s / DAY) : json_null());
	char ex[48];
	snprintf(ex, sizeof(ex), "TO-12: %s", r->exempt ? r->exempt : "");
	bad |= ju_set(o, "exempt", r->exempt ? ju_str(ex) : json_null());
	bad |= ju_set(o, "nextCheck",
		      r->has_next ? jtime(r->next_at) : json_null());
	bad |= ju_set(o, "nextCheckIn",
		      r->has_next ? json_integer(r->next_at - s->now)
				  : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *rebro_json(const struct sct_rebro *b,
			  const struct to_rebro_out *r)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "queue", ju_str(b->queue));
	bad |= ju_set(o, "gshare", ju_str(b->gshare));
	bad |= ju_set(o, "nQueue", jnum(b->in.nqueue));
	bad |= ju_set(o, "nRun", jnum(b->in.nrun));
	bad |= ju_set(o, "nQueueTotal", jnum(b->in.nqueue_total));
	bad |= ju_set(o, "hasNSlots", json_boolean(b->in.has_nslots));
	bad |= ju_set(o, "triggered", json_boolean(r->triggered));
	bad |= ju_set(o, "excess", json_integer(r->excess));
	bad |= ju_set(o, "ratioLimit", jnum(r->ratio_limit));
	bad |= ju_set(o, "fracLimit", jnum(r->frac_limit));
	bad |= ju_set(o, "nQueueLimit", jnum(r->nqueue_limit));
	bad |= ju_set(o, "code", r->code ? ju_str(r->code) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *sct_result_json(const struct sct_scenario *s,
			const struct sct_result *r)
{
	if (s == NULL || r == NULL || (s->njobs && r->jobs == NULL) ||
	    (s->nrebro && r->rebro == NULL))
		return NULL;
	json_t *root = json_object(), *jobs = json_array(),
	       *rebro = json_array();
	int bad = !root || !jobs || !rebro;
	for (size_t i = 0; !bad && i < s->njobs; i++)
		bad |= ju_push(jobs, job_json(s, &s->jobs[i], &r->jobs[i]));
	for (size_t i = 0; !bad && i < s->nrebro; i++)
		bad |= ju_push(rebro, rebro_json(&s->rebro[i], &r->rebro[i]));
	if (bad) {
		json_decref(root);
		json_decref(jobs);
		json_decref(rebro);
		return NULL;
	}
	bad |= ju_set(root, "now", jtime(s->now));
	bad |= ju_set(root, "jobs", jobs);
	bad |= ju_set(root, "rebro", rebro);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* A job no rule fires for: when one next can, or that TO-12 holds it. */
static void waiting_line(FILE *out, const struct sct_scenario *s, size_t i,
			 const struct sct_job_result *r)
{
	const struct sct_job *j = &s->jobs[i];
	fprintf(out, "%-12lld %-12s %-16.40s ", j->j.job_id,
		to_status_name(j->j.status), j->queue ? j->queue : "-");
	if (r->exempt)
		fprintf(out, "exempt (TO-12: %s); ", r->exempt);
	char when[32];
	if (r->has_next && r->exempt && r->next_at <= s->now &&
	    tf_format(r->next_at, when, sizeof(when)) == GB_OK)
		fprintf(out, "a rule has been due since %s, were the queue "
			     "not exempt\n",
			when);
	else if (r->has_next &&
		 tf_format(r->next_at, when, sizeof(when)) == GB_OK)
		fprintf(out, "next check %s (in %lld s)\n", when,
			r->next_at - s->now);
	else
		fprintf(out, "no rule can fire in this status\n");
}

static void rebro_line(FILE *out, const struct sct_rebro *b,
		       const struct to_rebro_out *r)
{
	fprintf(out, "%-16.40s %-16.40s nQueue %g, nRun %g, total %g%s: ",
		b->queue, b->gshare[0] ? b->gshare : "(none)", b->in.nqueue,
		b->in.nrun, b->in.nqueue_total,
		b->in.has_nslots ? ", nSlots set" : "");
	if (r->triggered)
		fprintf(out, "TO-13 triggered, rebroker %lld job%s (", r->excess,
			r->excess == 1 ? "" : "s");
	else
		fprintf(out, "TO-13 not triggered [%s] (",
			r->code ? r->code : "?");
	fprintf(out, "ratio limit %g, frac limit %g, ", r->ratio_limit,
		r->frac_limit);
	if (isnan(r->nqueue_limit))
		fprintf(out, "FAST_REBRO_THRESHOLD_NQUEUE_%s unset: never",
			b->gshare);
	else
		fprintf(out, "nQueue limit %g", r->nqueue_limit);
	fprintf(out, "%s)\n", b->in.has_nslots ? "; a queue with nSlots: never"
					       : "");
}

void sct_print_offline(FILE *out, const struct sct_scenario *s,
		       const struct sct_result *r)
{
	if (out == NULL || s == NULL || r == NULL ||
	    (s->njobs && r->jobs == NULL) || (s->nrebro && r->rebro == NULL))
		return;
	size_t fired = 0, exempt = 0;
	for (size_t i = 0; i < s->njobs; i++) {
		fired += (size_t)r->jobs[i].fired;
		exempt += r->jobs[i].exempt != NULL;
	}
	char now[32] = "?";
	tf_format(s->now, now, sizeof(now));
	fprintf(out, "-- at %s no rule fires for %zu of %zu job%s --\n", now,
		s->njobs - fired, s->njobs, s->njobs == 1 ? "" : "s");
	if (fired < s->njobs)
		fprintf(out, "%-12s %-12s %-16s %s\n", "JOBID", "STATUS",
			"QUEUE", "NEXT CHECK");
	for (size_t i = 0; i < s->njobs; i++)
		if (!r->jobs[i].fired)
			waiting_line(out, s, i, &r->jobs[i]);
	if (s->nrebro)
		fprintf(out, "-- fast rebrokerage (TO-13) per queue and gshare "
			     "--\n");
	size_t trig = 0;
	for (size_t i = 0; i < s->nrebro; i++) {
		rebro_line(out, &s->rebro[i], &r->rebro[i]);
		trig += (size_t)r->rebro[i].triggered;
	}
	fprintf(out, "summary: %zu of %zu job%s timed out, %zu exempt "
		     "(TO-12); %zu of %zu rebrokerage row%s triggered\n",
		fired, s->njobs, s->njobs == 1 ? "" : "s", exempt, trig,
		s->nrebro, s->nrebro == 1 ? "" : "s");
}
