/*
** codec_panda.c — the PanDA job life cycle in msgpack: job.status for PanDA
** jobs (system "panda") and the task.throttled, job.timeout and
** job.rebrokered events.
**
** job.status carries DIRAC and PanDA updates on one routing key, so the
** handler first asks cdp_status_system() which form a body is. That probe
** reads the "system" key only: every other field is the chosen decoder's
** business, and a probe that validated more would report a DIRAC problem
** with PanDA wording (or the reverse).
**
** The PanDA decoder is a field table walked by codec.c's
** cod_decode_fields(), like codec_tq.c's cdt_decode_status, so the checks
** and the error wording are the same as for every other message (types
** before values, unknown keys ignored, a key twice refused, nil = absent
** for optional fields). The status words are PanDA's, plus two the
** producers use: "started" (the pilot's word for running) and "heartbeat"
** (a sign of life without a change). "pending" is refused on purpose: it
** is gridbroker's own state for a job without a queue, which only the
** worker's reassignment may set; a producer sending it would take a job
** away from its queue without the counts and retries that go with it.
**
** The events are written only by the worker, after a decision; their
** encoders check that the pieces they need are there (GB_EINVAL) but not
** the text of names that came from our own database: refusing an event
** would roll back a decision that was already made correctly. Every event
** ends with "reasons": an array of one human-readable string that says
** the rule and its numbers, as the log line does, so an operator reading
** the event needs no second source.
*/
#include "codec/codec_panda.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gb_error.h"
#include "model/gridmodel.h"
#include "base/timefmt.h"

/* A status update holds a handful of values; the cap leaves room for the
** fields PanDA's producers add (jobMetrics, pilotID, ...). */
#define CDP_SMALL_VALUES 65536
/* jobSubStatus lands in jobs.job_sub_status, VARCHAR(64) (0005): 63
** bytes always fit, whatever the characters. */
#define CDP_MAX_SUBSTATUS 63

/* ---- which form: cdp_status_system --------------------------------------- */

static const char *const system_words[] = {"dirac", "panda", NULL};

int cdp_status_system(const void *buf, size_t len, enum cdp_system *sys,
		      struct cod_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (sys == NULL || (buf == NULL && len > 0))
		return cod_fail(err, GB_EINVAL, "", "no body or output");
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	/* no zone budget beyond the scan's: the tree is bounded by the
	** message length and CDP_SMALL_VALUES, and nothing is copied */
	int rc = cod_unpack(buf, len, COD_MAX_DEPTH, CDP_SMALL_VALUES, 0, &up,
			    err);
	if (rc != GB_OK) {
		/* The contract has one code for "not one msgpack map":
		** truncation, trailing bytes, nesting and size limits are all
		** a body that cannot be read. A real allocation failure is
		** not the message's fault and stays GB_ENOMEM. */
		if (rc != GB_ENOMEM)
			rc = GB_EDECODE;
		if (err) {
			/* keep where the scanner stopped, in the problem */
			char problem[sizeof(err->field) +
				     sizeof(err->problem) + 2];
			if (err->field[0])
				snprintf(problem, sizeof(problem), "%s: %s",
					 err->field, err->problem);
			else
				snprintf(problem, sizeof(problem), "%s",
					 err->problem);
			cod_fail(err, rc, "body", "%s", problem);
		}
		msgpack_unpacked_destroy(&up);
		return rc;
	}
	const msgpack_object *o = &up.data;
	if (o->type != MSGPACK_OBJECT_MAP) {
		rc = cod_fail(err, GB_EDECODE, "body", "expected a map, got %s",
			      cod_type_name(o));
		msgpack_unpacked_destroy(&up);
		return rc;
	}
	/* Only "system" is looked at; a linear pass is enough (no other key
	** is compared with anything), and finds the key given twice. */
	const msgpack_object *val = NULL;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		if (k->type != MSGPACK_OBJECT_STR || k->via.str.size != 6 ||
		    memcmp(k->via.str.ptr, "system", 6) != 0)
			continue;
		if (val != NULL) {
			rc = cod_fail(err, GB_EDUP, "system", "duplicate key");
			msgpack_unpacked_destroy(&up);
			return rc;
		}
		val = &o->via.map.ptr[i].val;
	}
	enum cdp_system s = CDP_SYS_DIRAC; /* absent or nil: the DIRAC form */
	if (val != NULL && val->type != MSGPACK_OBJECT_NIL) {
		int w = cod_get_word(val, "system", system_words,
				     "dirac or panda", err);
		if (w < 0) {
			msgpack_unpacked_destroy(&up);
			return w;
		}
		s = w == 1 ? CDP_SYS_PANDA : CDP_SYS_DIRAC;
	}
	msgpack_unpacked_destroy(&up);
	*sys = s;
	return GB_OK;
}

/* ---- job.status (PanDA) --------------------------------------------------- */

/* The accepted words and what each means; "started" and "heartbeat" are
** not to_status names, so this table (not to_status_parse) is the
** reference for the wire. */
static const struct {
	const char *word;
	enum to_status status;
	int heartbeat;
} status_map[] = {
	{"defined", TO_ST_DEFINED, 0},
	{"assigned", TO_ST_ASSIGNED, 0},
	{"activated", TO_ST_ACTIVATED, 0},
	{"throttled", TO_ST_THROTTLED, 0},
	{"sent", TO_ST_SENT, 0},
	{"starting", TO_ST_STARTING, 0},
	{"running", TO_ST_RUNNING, 0},
	{"holding", TO_ST_HOLDING, 0},
	{"transferring", TO_ST_TRANSFERRING, 0},
	{"finished", TO_ST_FINISHED, 0},
	{"failed", TO_ST_FAILED, 0},
	{"closed", TO_ST_CLOSED, 0},
	{"cancelled", TO_ST_CANCELLED, 0},
	{"started", TO_ST_RUNNING, 0}, /* the pilot's word for running */
	{"heartbeat", TO_ST_PENDING, 1}, /* status unused for a heartbeat */
};

/*
** What an unknown word is told. The fifteen words do not fit in
** cod_error.problem (160 bytes) after the quoted value, so the message
** points at the document that lists them; a word that differs only in
** case (PanDA's own API is lower case, some producers capitalise) is
** named, since that is the usual mistake.
*/
#define STATUS_EXPECTED                                                     \
	"a PanDA job status (see job.status.md), started or heartbeat"

/* The same words, for cod_get_word, in status_map's order. */
static const char *const status_words[] = {
	"defined",  "assigned", "activated",    "throttled", "sent",
	"starting", "running",  "holding",      "transferring", "finished",
	"failed",   "closed",   "cancelled",    "started",   "heartbeat",
	NULL,
};
_Static_assert(COD_NELEM(status_words) == COD_NELEM(status_map) + 1,
	       "status_words and status_map must list the same words");

static int get_status(const msgpack_object *o, const char *field,
		      const struct cod_field *spec, void *base,
		      struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	if (o->type == MSGPACK_OBJECT_STR && o->via.str.size == 7 &&
	    memcmp(o->via.str.ptr, "pending", 7) == 0)
		return cod_fail(err, GB_ERANGE, field,
				"'pending' is gridbroker's own status (a job "
				"waiting for brokerage); a producer cannot "
				"set it");
	int w = cod_get_word(o, field, status_words, STATUS_EXPECTED, err);
	if (w == GB_ERANGE) {
		size_t n = o->via.str.size;
		for (size_t i = 0; status_words[i]; i++) {
			if (strlen(status_words[i]) != n ||
			    strncasecmp(status_words[i], o->via.str.ptr, n))
				continue;
			char shown[48];
			cod_sanitize(shown, sizeof(shown), o->via.str.ptr, n,
				     40);
			return cod_fail(err, GB_ERANGE, field,
					"unknown value '%s'; expected %s "
					"(lower case)",
					shown, status_words[i]);
		}
	}
	if (w < 0)
		return w;
	struct cdp_status *s = base;
	s->status = status_map[w].status;
	s->heartbeat = status_map[w].heartbeat;
	return GB_OK;
}

static int get_system(const msgpack_object *o, const char *field,
		      const struct cod_field *spec, void *base,
		      struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)base;
	(void)a;
	static const char *const words[] = {"panda", NULL};
	int w = cod_get_word(o, field, words, "panda", err);
	return w < 0 ? w : GB_OK;
}

/* jobSubStatus: "" clears the job's value, so it may be empty, but it is
** stored in a short column. */
static int get_sub_status(const msgpack_object *o, const char *field,
			  const struct cod_field *spec, void *base,
			  struct arena *a, struct cod_error *err)
{
	(void)spec;
	if (o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size > CDP_MAX_SUBSTATUS)
		return cod_fail(err, GB_ETOOBIG, field,
				"string of %u bytes exceeds the limit of %d",
				(unsigned)o->via.str.size, CDP_MAX_SUBSTATUS);
	const char *s = NULL;
	int rc = cod_get_str(o, field, 0, a, &s, err);
	if (rc != GB_OK)
		return rc;
	((struct cdp_status *)base)->job_sub_status = s;
	return GB_OK;
}

#define STA(m) offsetof(struct cdp_status, m)

/* In the order of schemas/messages/job.status.md, "PanDA jobs". */
static const struct cod_field status_fields[] = {
	{"system", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_system},
	{"jobID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0, STA(job_id), NULL},
	{"status", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_status},
	{"time", COD_F_LLONG, 1, 0, CDP_MAX_TIME, 0, 0, STA(time), NULL},
	{"jobSubStatus", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_sub_status},
	{"computingSite", COD_F_STR, 0, 0, 0, 0, 1, STA(site), NULL},
};

static const struct cod_msg status_msg = {CDP_SMALL_VALUES, status_fields,
					  COD_NELEM(status_fields), NULL};

int cdp_decode_status(const void *buf, size_t len, struct arena *a,
		      struct cdp_status *out, struct cod_error *err)
{
	struct cdp_status s;
	memset(&s, 0, sizeof(s));
	int rc = cod_decode_msg(buf, len, a, out, &status_msg, &s, err);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

/* What the decoder would accept for an optional string. */
static int sub_status_ok(const char *s)
{
	return s == NULL ||
	       (cod_str_ok(s, 0) && strlen(s) <= CDP_MAX_SUBSTATUS);
}

int cdp_encode_status(const struct cdp_status *s, msgpack_sbuffer *out)
{
	if (s == NULL || out == NULL || s->job_id < 1 || s->time < 0 ||
	    s->time > CDP_MAX_TIME || !sub_status_ok(s->job_sub_status) ||
	    (s->site != NULL && !cod_str_ok(s->site, 1)))
		return GB_EINVAL;
	const char *word = "heartbeat";
	if (!s->heartbeat) {
		if (s->status == TO_ST_PENDING)
			return GB_EINVAL;
		word = to_status_name(s->status);
		if (word == NULL)
			return GB_EINVAL;
	}
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	size_t nkeys = 4 + (s->job_sub_status != NULL) + (s->site != NULL);
	int bad = msgpack_pack_map(&pk, nkeys);
	bad |= cod_pack_kstr(&pk, "system", "panda");
	bad |= cod_pack_kint(&pk, "jobID", s->job_id);
	bad |= cod_pack_kstr(&pk, "status", word);
	bad |= cod_pack_kint(&pk, "time", s->time);
	if (s->job_sub_status)
		bad |= cod_pack_kstr(&pk, "jobSubStatus", s->job_sub_status);
	if (s->site)
		bad |= cod_pack_kstr(&pk, "computingSite", s->site);
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- events: shared pieces ------------------------------------------------ */

/*
** A number for a reason string: whole numbers exactly ("172801", not
** "1.72801e+05"), others with six significant digits.
*/
static void fmt_num(char *dst, size_t n, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 1e15)
		snprintf(dst, n, "%.0f", v);
	else
		snprintf(dst, n, "%.6g", v);
}

/* A finite number, or nil (a limit that is not set is NAN or infinite). */
static int pack_kdbl_or_nil(msgpack_packer *pk, const char *k, double v)
{
	if (isfinite(v))
		return cod_pack_kdbl(pk, k, v);
	return cod_pack_str(pk, k) | msgpack_pack_nil(pk);
}

/* "reasons": [text]. */
static int pack_reason(msgpack_packer *pk, const char *text)
{
	int bad = cod_pack_str(pk, "reasons");
	bad |= msgpack_pack_array(pk, 1);
	bad |= cod_pack_str(pk, text);
	return bad;
}

/* A unix time as RFC 3339 text, the form of every event's decidedAt. */
static int pack_ktime(msgpack_packer *pk, const char *k, long long t)
{
	char text[40];
	if (tf_format(t, text, sizeof(text)) != GB_OK)
		return 1;
	return cod_pack_kstr(pk, k, text);
}

static int time_ok(long long t)
{
	char text[40];
	return t >= 0 && tf_format(t, text, sizeof(text)) == GB_OK;
}

/* ---- task.throttled ------------------------------------------------------- */

/* The throttle's reason as the log line says it: the rule, what was
** compared, the numbers. */
static void throttle_reason(char *dst, size_t n, const struct an_throttle *th)
{
	char v[32], l[32];
	fmt_num(v, sizeof(v), th->value);
	fmt_num(l, sizeof(l), th->limit);
	if (strcmp(th->code, "quota") == 0)
		snprintf(dst, n, "%s: global disk quota exceeded", th->rule);
	else if (strncmp(th->code, "share_", 6) == 0)
		snprintf(dst, n,
			 "%s: %s: share usage %s %% of target > %s %%",
			 th->rule, th->code, v, l);
	else
		snprintf(dst, n, "%s: %s %s > %s", th->rule, th->code, v, l);
}

int cdp_encode_throttled(const struct cdp_throttled_event *e,
			 msgpack_sbuffer *out)
{
	if (e == NULL || out == NULL || e->gshare == NULL || e->user == NULL ||
	    e->load == NULL || e->th == NULL || !e->th->throttled ||
	    e->th->rule == NULL || e->th->code == NULL ||
	    gm_task_class_name(e->task_class) == NULL ||
	    !time_ok(e->decided_at) || !time_ok(e->retry_at))
		return GB_EINVAL;
	const struct an_user_load *u = e->load;
	const struct an_throttle *th = e->th;
	char reason[COD_MAX_STRING];
	throttle_reason(reason, sizeof(reason), th);

	msgpack_packer pk;
	int bad = cod_pack_event_start(&pk, out, 24, "task.throttled",
				       e->decision_id, e->request_id);
	bad |= cod_pack_kint(&pk, "taskID", e->task_id);
	bad |= cod_pack_kstr(&pk, "gshare", e->gshare);
	bad |= cod_pack_kstr(&pk, "userName", e->user);
	bad |= cod_pack_kstr(&pk, "workingGroup", e->working_group);
	bad |= cod_pack_kstr(&pk, "countsOf",
			     u->working_group ? "workingGroup" : "user");
	bad |= cod_pack_kstr(&pk, "taskClass",
			     gm_task_class_name(e->task_class));
	bad |= cod_pack_kstr(&pk, "rule", th->rule);
	bad |= cod_pack_kstr(&pk, "code", th->code);
	bad |= pack_kdbl_or_nil(&pk, "value", th->value);
	bad |= pack_kdbl_or_nil(&pk, "limit", th->limit);
	bad |= cod_pack_kdbl(&pk, "runningJobs", u->running_jobs);
	bad |= cod_pack_kdbl(&pk, "queuedJobs", u->queued_jobs);
	bad |= cod_pack_kdbl(&pk, "runningCores", u->running_cores);
	bad |= cod_pack_kdbl(&pk, "queuedCores", u->queued_cores);
	bad |= cod_pack_kbool(&pk, "quotaExceeded", u->quota_exceeded);
	/* AJ-04 reads the share only for User Analysis: elsewhere its usage
	** and target were not looked at, and nil says so */
	bad |= pack_kdbl_or_nil(&pk, "shareUsage",
				u->user_analysis ? u->share_usage : NAN);
	bad |= pack_kdbl_or_nil(&pk, "shareTarget",
				u->user_analysis ? u->share_target : NAN);
	bad |= cod_pack_kdbl(&pk, "hiSiteSlots", u->hi_site_slots);
	bad |= pack_ktime(&pk, "decidedAt", e->decided_at);
	bad |= pack_ktime(&pk, "retryAt", e->retry_at);
	bad |= pack_reason(&pk, reason);
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- job.timeout ---------------------------------------------------------- */

int cdp_encode_timeout(const struct cdp_timeout_event *e,
		       msgpack_sbuffer *out)
{
	if (e == NULL || out == NULL || e->gshare == NULL || e->v == NULL ||
	    e->v->rule == NULL || e->v->what == NULL ||
	    e->v->action == TO_ACT_NONE ||
	    to_action_name(e->v->action) == NULL ||
	    to_status_name(e->status) == NULL || e->new_status == NULL ||
	    !time_ok(e->decided_at))
		return GB_EINVAL;
	const struct to_verdict *v = e->v;
	char age[32], limit[32], reason[COD_MAX_STRING];
	fmt_num(age, sizeof(age), v->age_s);
	fmt_num(limit, sizeof(limit), v->limit_s);
	/* "TO-05: activated or starting for 172801 s > 172800 s" */
	snprintf(reason, sizeof(reason), "%s: %s %s s > %s s", v->rule,
		 v->what, age, limit);

	msgpack_packer pk;
	int bad = cod_pack_event_start(&pk, out, 17, "job.timeout",
				       e->decision_id, e->request_id);
	bad |= cod_pack_kint(&pk, "jobID", e->job_id);
	bad |= cod_pack_kint(&pk, "taskID", e->task_id);
	bad |= cod_pack_kstr(&pk, "queue", e->queue);
	bad |= cod_pack_kstr(&pk, "gshare", e->gshare);
	bad |= cod_pack_kstr(&pk, "status", to_status_name(e->status));
	bad |= cod_pack_kstr(&pk, "rule", v->rule);
	bad |= cod_pack_kstr(&pk, "what", v->what);
	bad |= pack_kdbl_or_nil(&pk, "age", v->age_s);
	bad |= pack_kdbl_or_nil(&pk, "limit", v->limit_s);
	bad |= cod_pack_kstr(&pk, "action", to_action_name(v->action));
	bad |= cod_pack_kstr(&pk, "newStatus", e->new_status);
	bad |= cod_pack_kint(&pk, "attempt", e->attempt);
	bad |= pack_ktime(&pk, "decidedAt", e->decided_at);
	bad |= pack_reason(&pk, reason);
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- job.rebrokered ------------------------------------------------------- */

/* The TO-13 numbers: why this queue had too many queued jobs. */
static int pack_fast_rebro(msgpack_packer *pk, const struct to_rebro_in *in,
			   const struct to_rebro_out *o)
{
	int bad = cod_pack_str(pk, "fastRebro");
	bad |= msgpack_pack_map(pk, 7);
	bad |= cod_pack_kdbl(pk, "nQueue", in->nqueue);
	bad |= cod_pack_kdbl(pk, "nRun", in->nrun);
	bad |= cod_pack_kdbl(pk, "nQueueTotal", in->nqueue_total);
	bad |= pack_kdbl_or_nil(pk, "ratioLimit", o->ratio_limit);
	bad |= pack_kdbl_or_nil(pk, "fracLimit", o->frac_limit);
	bad |= pack_kdbl_or_nil(pk, "nQueueLimit", o->nqueue_limit);
	bad |= cod_pack_kint(pk, "excess", o->excess);
	return bad;
}

static void rebro_reason(char *dst, size_t n,
			 const struct cdp_rebrokered_event *e)
{
	const char *from = e->from_queue ? e->from_queue : "no queue";
	if (e->rebro_in == NULL) {
		snprintf(dst, n,
			 "%s: job %lld back to the brokerage from %s "
			 "(attempt %d)",
			 e->rule, e->job_id, from, e->attempt);
		return;
	}
	char q[32], ratio[32], frac[32], lim[32];
	fmt_num(q, sizeof(q), e->rebro_in->nqueue);
	fmt_num(ratio, sizeof(ratio), e->rebro_out->ratio_limit);
	fmt_num(frac, sizeof(frac), e->rebro_out->frac_limit);
	fmt_num(lim, sizeof(lim), e->rebro_out->nqueue_limit);
	snprintf(dst, n,
		 "%s: %s queued at %s > ratio limit %s, fraction limit %s "
		 "and nQueue limit %s; %lld excess jobs rebrokered",
		 e->rule, q, from, ratio, frac, lim, e->rebro_out->excess);
}

int cdp_encode_rebrokered(const struct cdp_rebrokered_event *e,
			  msgpack_sbuffer *out)
{
	if (e == NULL || out == NULL || e->gshare == NULL || e->rule == NULL ||
	    (e->rebro_in == NULL) != (e->rebro_out == NULL) ||
	    !time_ok(e->decided_at))
		return GB_EINVAL;
	char reason[COD_MAX_STRING];
	rebro_reason(reason, sizeof(reason), e);

	msgpack_packer pk;
	int bad = cod_pack_event_start(&pk, out, 13, "job.rebrokered",
				       e->decision_id, e->request_id);
	bad |= cod_pack_kint(&pk, "jobID", e->job_id);
	bad |= cod_pack_kint(&pk, "taskID", e->task_id);
	bad |= cod_pack_kstr(&pk, "fromQueue", e->from_queue);
	bad |= cod_pack_kstr(&pk, "gshare", e->gshare);
	bad |= cod_pack_kstr(&pk, "rule", e->rule);
	bad |= cod_pack_kint(&pk, "attempt", e->attempt);
	bad |= cod_pack_kstr(&pk, "jobRequestId", e->job_request_id);
	bad |= pack_ktime(&pk, "decidedAt", e->decided_at);
	if (e->rebro_in)
		bad |= pack_fast_rebro(&pk, e->rebro_in, e->rebro_out);
	else
		bad |= cod_pack_str(&pk, "fastRebro") | msgpack_pack_nil(&pk);
	bad |= pack_reason(&pk, reason);
	return bad ? GB_ENOMEM : GB_OK;
}
