/*
** scenario_write.c — the pieces every scenario writer shares (the table
** writer, numbers, times, ages, params, the head), and the writers of task
** and timeout scenarios (declared in scenario_write.h). Job and analysis
** scenarios are scenario_write_jobs.c's, match scenarios
** scenario_write_match.c's.
**
** Why tables: a parser reads a flat record from a table of rows (key,
** kind, where the value goes); the writer describes the same records with
** rows of its own (record, key, kind, where the value comes from), so a
** field is one line here as it is one line there, and a field the writer
** forgets shows up in the round-trip test (tests/unit/explain/
** test_scenario_write.c) as a key of a sample file missing from the
** written one. Each file keeps the rows of all its records in one table,
** tagged by record, rather than a table per record: one list to read per
** format, not a dozen small ones with the same frame.
**
** Numbers: a double goes out as an integer when that reads back to the
** same double (so counts read as counts in a dump), else as a real, which
** jansson prints with 17 significant digits, enough for every double to
** come back bit for bit.
*/
#include "explain/scenario_write.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/jsonutil.h"
#include "base/timefmt.h"
#include "codec/codec_tq.h"
#include "gb_error.h"

/* SCW_K_ENUM reads an int from enum members. */
_Static_assert(sizeof(enum tb_bare) == sizeof(int), "enum size");
_Static_assert(sizeof(enum tb_fullchain) == sizeof(int), "enum size");

#define SCW_EXACT_INT 9007199254740992.0 /* 2^53 */

/* ---- the shared pieces --------------------------------------------------- */

json_t *scw_num(double x)
{
	if (!isfinite(x))
		return NULL;
	if (x == trunc(x) && fabs(x) < SCW_EXACT_INT && !(x == 0 && signbit(x)))
		return json_integer((json_int_t)x);
	return json_real(x);
}

json_t *scw_time(long long t)
{
	char buf[32];
	if (t <= 0 || t > CDT_MAX_TIME || tf_format(t, buf, sizeof(buf)) != 0)
		return NULL;
	return json_string(buf);
}

json_t *scw_age(long long now, long long t)
{
	if (t <= 0)
		return NULL;
	return json_integer(t >= now ? 0 : now - t);
}

json_t *scw_done(json_t *o, int bad)
{
	if (!bad)
		return o;
	json_decref(o);
	return NULL;
}

json_t *scw_strings(const char *const *v, size_t n)
{
	json_t *a = json_array();
	int bad = a == NULL || (n && v == NULL);
	for (size_t i = 0; !bad && i < n; i++)
		bad = v[i] == NULL || ju_push(a, json_string(v[i]));
	return scw_done(a, bad);
}

/* One row's value; *omit set (and NULL returned) when the row is left
** out, else NULL means the value cannot be written. */
static json_t *fld_json(const struct scw_fld *d, const char *base,
			long long now, int *omit)
{
	const char *p = base + d->off;
	double x;
	long l;
	long long ll;
	int i;
	const char *s;
	const char *const *list;
	size_t n;
	*omit = 0;
	switch ((enum scw_kind)d->kind) {
	case SCW_K_NUM:
	case SCW_K_NUMNULL:
		memcpy(&x, p, sizeof(x));
		*omit = d->kind == SCW_K_NUMNULL && isnan(x);
		return *omit ? NULL : scw_num(x);
	case SCW_K_LONG:
		memcpy(&l, p, sizeof(l));
		return json_integer(l);
	case SCW_K_LLONG:
		memcpy(&ll, p, sizeof(ll));
		return json_integer(ll);
	case SCW_K_BOOL:
		memcpy(&i, p, sizeof(i));
		return json_boolean(i != 0);
	case SCW_K_STR:
		memcpy(&s, p, sizeof(s));
		*omit = s == NULL;
		return s ? json_string(s) : NULL;
	case SCW_K_LIST:
		memcpy(&list, p, sizeof(list));
		memcpy(&n, base + d->off2, sizeof(n));
		*omit = n == 0;
		return n ? scw_strings(list, n) : NULL;
	case SCW_K_ENUM:
		memcpy(&i, p, sizeof(i));
		if (i < 0 || (size_t)i >= d->nwords)
			return NULL;
		*omit = d->words[i] == NULL;
		return *omit ? NULL : json_string(d->words[i]);
	case SCW_K_TIME:
	case SCW_K_AGE:
		memcpy(&ll, p, sizeof(ll));
		*omit = ll == 0;
		if (*omit)
			return NULL;
		return d->kind == SCW_K_TIME ? scw_time(ll) : scw_age(now, ll);
	}
	return NULL;
}

int scw_record(json_t *o, const struct scw_fld *t, int rec, const void *base,
	       long long now)
{
	int bad = o == NULL || base == NULL;
	for (const struct scw_fld *d = t; !bad && d->key; d++) {
		if (d->rec != rec)
			continue;
		int omit = 0;
		json_t *v = fld_json(d, base, now, &omit);
		if (!omit)
			bad = ju_set(o, d->key, v);
	}
	return bad ? GB_EINVAL : GB_OK;
}

json_t *scw_params(const struct prm_set *set)
{
	json_t *o = json_object();
	size_t n = set ? set->n : 0;
	int bad = o == NULL || (n && set->kv == NULL);
	/* in order: a later override of a name replaces the earlier value */
	for (size_t i = 0; !bad && i < n; i++) {
		const struct prm_kv *kv = &set->kv[i];
		bad = kv->name == NULL ||
		      ju_set(o, kv->name,
			     isnan(kv->value) ? json_null()
					      : scw_num(kv->value));
	}
	return scw_done(o, bad);
}

json_t *scw_head(long long now, unsigned long long seed)
{
	json_t *o = json_object();
	int bad = o == NULL || seed > (unsigned long long)LLONG_MAX;
	bad = bad || ju_set(o, "now", scw_time(now));
	bad = bad || ju_set(o, "seed", json_integer((json_int_t)seed));
	return scw_done(o, bad);
}

json_t *scw_objects(const struct scw_fld *t, int rec, const void *v,
		    size_t n, size_t size, long long now)
{
	json_t *a = json_array();
	int bad = a == NULL || (n && v == NULL);
	for (size_t i = 0; !bad && i < n; i++)
		bad = ju_push(a, scw_object(t, rec, (const char *)v + i * size,
					    now));
	return scw_done(a, bad);
}

json_t *scw_object(const struct scw_fld *t, int rec, const void *base,
		   long long now)
{
	json_t *o = json_object();
	return scw_done(o, o == NULL ||
				   scw_record(o, t, rec, base, now) != GB_OK);
}

/* ---- task scenarios ------------------------------------------------------ */

/* In the order of enum tb_bare and enum tb_fullchain; a normal task has
** no fullChain at all (the schema's null). */
static const char *const bare_words[] = {"", "only", "allow"};
static const char *const fullchain_words[] = {NULL, "only", "require",
					      "capable"};

/* The records of this file's scenarios, rows in the parsers' order. */
enum {
	NUCLEUS, /* struct tb_nucleus: "nuclei" (storages, local by hand) */
	STORE,   /* struct tb_storage: a nucleus's "storages" */
	LOCAL,   /* struct tb_replica: a nucleus's "local" entry */
	TASK,    /* struct tb_task: "task" (inputDatasets by hand) */
	DATASET, /* struct tb_dataset */
	TO_Q,    /* struct to_queue: a timeout scenario's queue */
	TO_J,    /* struct to_job: its job; statusSince and createdAt by
		    hand, since both must be times (an absent createdAt
		    reads as statusSince) */
};

#define NU struct tb_nucleus
#define ST struct tb_storage
#define TK struct tb_task
#define DS struct tb_dataset
static const struct scw_fld fields[] = {
	SCW_F(NUCLEUS, "name", SCW_K_STR, NU, name),
	SCW_F(NUCLEUS, "status", SCW_K_STR, NU, status),
	SCW_ENUM(NUCLEUS, "bareNucleus", NU, bare, bare_words),
	SCW_F(NUCLEUS, "transferBacklog", SCW_K_LONG, NU, transfer_backlog),
	SCW_F(NUCLEUS, "RW", SCW_K_NUM, NU, rw),
	SCW_F(STORE, "name", SCW_K_STR, ST, name),
	SCW_F(STORE, "spaceFree", SCW_K_NUM, ST, space_free),
	SCW_F(STORE, "spaceExpired", SCW_K_NUM, ST, space_expired),
	SCW_F(STORE, "spaceTotal", SCW_K_NUM, ST, space_total),
	SCW_F(STORE, "tape", SCW_K_BOOL, ST, tape),
	SCW_F(STORE, "blacklisted", SCW_K_BOOL, ST, blacklisted),
	SCW_F(LOCAL, "size", SCW_K_NUM, struct tb_replica, size),
	SCW_F(LOCAL, "files", SCW_K_LONG, struct tb_replica, files),
	SCW_F(TASK, "taskID", SCW_K_LLONG, TK, task_id),
	SCW_F(TASK, "gshare", SCW_K_STR, TK, gshare),
	SCW_F(TASK, "taskPriority", SCW_K_LONG, TK, priority),
	SCW_F(TASK, "ioIntensity", SCW_K_NUM, TK, io_intensity),
	SCW_F(TASK, "t1Weight", SCW_K_NUM, TK, t1_weight),
	SCW_F(TASK, "inputPreStaging", SCW_K_BOOL, TK, input_prestaging),
	SCW_F(TASK, "taskBrokerOnMaster", SCW_K_BOOL, TK, broker_on_master),
	SCW_ENUM(TASK, "fullChain", TK, full_chain, fullchain_words),
	SCW_F(TASK, "parentNucleus", SCW_K_STR, TK, parent_nucleus),
	SCW_F(TASK, "normalizedExpOutSize", SCW_K_NUM, TK, norm_exp_out_size),
	SCW_F(DATASET, "name", SCW_K_STR, DS, name),
	SCW_F(DATASET, "primary", SCW_K_BOOL, DS, primary),
	SCW_F(DATASET, "size", SCW_K_NUM, DS, size),
	SCW_F(DATASET, "files", SCW_K_LONG, DS, files),
	SCW_F(DATASET, "onTape", SCW_K_BOOL, DS, on_tape),
	SCW_F(TO_Q, "disableReassign", SCW_K_BOOL, struct to_queue,
	      disable_reassign),
	SCW_F(TO_Q, "lastStart", SCW_K_TIME, struct to_queue, last_start),
	SCW_F(TO_Q, "transtimehi", SCW_K_NUM, struct to_queue, transtimehi),
	SCW_F(TO_Q, "transtimelo", SCW_K_NUM, struct to_queue, transtimelo),
	SCW_F(TO_J, "jobID", SCW_K_LLONG, struct to_job, job_id),
	SCW_F(TO_J, "lastHeartbeat", SCW_K_TIME, struct to_job, last_heartbeat),
	SCW_END,
};
#undef NU
#undef ST
#undef TK
#undef DS

/* "local": dataset -> {size, files}, each dataset once. */
static json_t *local_json(const struct tb_nucleus *nu)
{
	json_t *o = json_object();
	int bad = o == NULL || (nu->nlocal && nu->local == NULL);
	for (size_t i = 0; !bad && i < nu->nlocal; i++) {
		const struct tb_replica *r = &nu->local[i];
		bad = r->dataset == NULL ||
		      ju_set(o, r->dataset, scw_object(fields, LOCAL, r, 0));
	}
	return scw_done(o, bad || json_object_size(o) != nu->nlocal);
}

static json_t *nucleus_json(const struct tb_nucleus *nu)
{
	json_t *o = scw_object(fields, NUCLEUS, nu, 0);
	int bad = o == NULL;
	bad = bad || ju_set(o, "storages",
			    scw_objects(fields, STORE, nu->storages,
					nu->nstorages, sizeof(*nu->storages),
					0));
	bad = bad || ju_set(o, "local", local_json(nu));
	return scw_done(o, bad);
}

static json_t *nuclei_json(const struct tb_nucleus *nuclei, size_t n)
{
	json_t *a = json_array();
	int bad = a == NULL || (n && nuclei == NULL);
	for (size_t i = 0; !bad && i < n; i++)
		bad = ju_push(a, nucleus_json(&nuclei[i]));
	return scw_done(a, bad);
}

static json_t *task_json(const struct tb_task *t)
{
	json_t *o = scw_object(fields, TASK, t, 0);
	int bad = o == NULL ||
		  ju_set(o, "inputDatasets",
			 scw_objects(fields, DATASET, t->datasets, t->ndatasets,
				     sizeof(*t->datasets), 0));
	return scw_done(o, bad);
}

json_t *scw_task(long long now, uint64_t seed, const struct prm_set *params,
		 const struct tb_nucleus *nuclei, size_t n,
		 const struct tb_task *task)
{
	json_t *root = task ? scw_head(now, seed) : NULL;
	int bad = root == NULL;
	bad = bad || ju_set(root, "params", scw_params(params));
	bad = bad || ju_set(root, "nuclei", nuclei_json(nuclei, n));
	bad = bad || ju_set(root, "task", task_json(task));
	return scw_done(root, bad);
}

/* ---- timeout scenarios --------------------------------------------------- */

/* The queue object of a timeout scenario: its row and the job's
** workflow (the parser hands a queue's workflow to its jobs). */
static json_t *tqueue_json(const struct to_queue *q, const char *workflow)
{
	json_t *o = scw_object(fields, TO_Q, q, 0);
	int bad = o == NULL;
	if (q->paused)
		bad = bad || ju_set(o, "status", json_string("paused"));
	if (workflow && workflow[0])
		bad = bad || ju_set(o, "workflow", json_string(workflow));
	return scw_done(o, bad);
}

static json_t *tjob_json(const struct to_job *j, long long task_id,
			 const char *gshare, const char *queue_name,
			 const char *sub)
{
	json_t *o = scw_object(fields, TO_J, j, 0);
	const char *st = to_status_name(j->status);
	int bad = o == NULL || st == NULL;
	if (task_id)
		bad = bad || ju_set(o, "taskID", json_integer(task_id));
	if (gshare && gshare[0])
		bad = bad || ju_set(o, "gshare", json_string(gshare));
	bad = bad || ju_set(o, "status", json_string(st));
	if (queue_name)
		bad = bad || ju_set(o, "queue", json_string(queue_name));
	bad = bad || ju_set(o, "statusSince", scw_time(j->status_since));
	bad = bad || ju_set(o, "createdAt", scw_time(j->created_at));
	bad = bad || ju_set(o, "currentPriority",
			    json_integer(j->current_priority));
	if (sub)
		bad = bad || ju_set(o, "jobSubStatus", json_string(sub));
	return scw_done(o, bad);
}

/* "queues": the job's queue row under its name, or none. */
static json_t *tqueues_json(const char *name, const struct to_queue *q,
			    const char *workflow)
{
	json_t *o = json_object();
	int bad = o == NULL;
	if (q)
		bad = bad || ju_set(o, name, tqueue_json(q, workflow));
	return scw_done(o, bad);
}

/* "jobs": the one job. */
static json_t *tjobs_json(const struct to_job *j, long long task_id,
			  const char *gshare, const char *queue_name,
			  const char *sub)
{
	json_t *a = json_array();
	return scw_done(a, a == NULL ||
				   ju_push(a, tjob_json(j, task_id, gshare,
							queue_name, sub)));
}

json_t *scw_timeout(long long now, const struct prm_set *params,
		    const struct to_job *j, long long task_id,
		    const char *gshare, const char *queue_name,
		    const struct to_queue *q, const char *sub_status)
{
	if (j == NULL || (q && queue_name == NULL) || task_id < 0)
		return NULL;
	const char *wf = j->workflow && j->workflow[0] ? j->workflow : NULL;
	const char *sub = sub_status ? sub_status
			  : j->own_stageout ? SCW_OWN_STAGEOUT
					    : NULL;
	int own = sub != NULL && sub[0] != '\0';
	if ((wf && q == NULL) || own != (j->own_stageout != 0))
		return NULL;
	json_t *root = json_object();
	int bad = root == NULL;
	bad = bad || ju_set(root, "kind", json_string("timeout"));
	bad = bad || ju_set(root, "now", scw_time(now));
	bad = bad || ju_set(root, "params", scw_params(params));
	bad = bad || ju_set(root, "queues", tqueues_json(queue_name, q, wf));
	bad = bad || ju_set(root, "jobs",
			    tjobs_json(j, task_id, gshare, q ? queue_name : NULL,
				       sub));
	return scw_done(root, bad);
}
