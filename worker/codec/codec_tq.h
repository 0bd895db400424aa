/*
** codec_tq.h — msgpack wire format of the DIRAC side: job.submit (jobs into
** task queues), pilot.match (a pilot's resource description; an RPC), its
** reply, the pilot.matched / pilot.nomatch events, and job.status.
**
** Built on codec.h's scanner and typed field checks (cod_unpack,
** cod_decode_fields, cod_get_*), so these messages are validated exactly
** like task.broker and job.broker: types and ranges checked before use,
** unknown keys ignored, duplicate keys refused, sizes capped before
** msgpack-c allocates, memory from a capped arena, every failure named by
** its path ("jobs[3].sites[0]"). One document per message in
** schemas/messages/.
**
** Field names follow the seed (dirac-task-queue-matching): ownerDN,
** ownerGroup, setup, cpuTime, sites, bannedSites, gridCEs, platforms,
** pilotTypes, submitPools, gridMiddlewares, plus DIRAC's jobTypes and
** tags; userPriority for the job's UserPriority. A pilot gives site,
** gridCE, platform, pilotType, jobType, tags, requiredTags, the bans
** bannedSite..bannedTag, ownerGroup and ownerDN each as a string or a list
** of at most TQ_MAX_PILOT_VALUES strings.
*/
#ifndef GB_CODEC_TQ_H
#define GB_CODEC_TQ_H

#include <stddef.h>

#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "model/tqindex.h"
#include "taskqueue.h"

#define CDT_MAX_JOBS 5000     /* jobs of one job.submit */
#define CDT_MAX_SET 1000      /* values of one multi-valued requirement */
#define CDT_MAX_CPU 1000000000000LL /* cpuTime, seconds */
#define CDT_MAX_TIME 253402300799LL /* 9999-12-31T23:59:59Z, unix s */
#define CDT_MAX_ITEMS 1000    /* entries of one pilot.matched/nomatch event */
#define CDT_MAX_VALUES (1u << 22)
#define CDT_MAX_PILOT_BYTES 8192 /* a pilot's strings and lists, as copied
				    (cdt_pilot_size): what a worker holds per
				    waiting pilot.match */

/* One job of job.submit. */
struct cdt_job {
	long long job_id;    /* > 0 */
	const char *owner;   /* ownerDN, non-empty */
	const char *owner_group; /* non-empty */
	const char *setup;   /* non-empty */
	long long cpu_time;  /* seconds as submitted (1..CDT_MAX_CPU); the
				worker maps it to a segment (TQ-02) */
	int user_priority;   /* TQ_MIN_PRIORITY..TQ_MAX_PRIORITY, default 1 */
	/* TQ-03; each set sorted and unique (tq_strset_normalise applied),
	** values non-empty; absent, nil or [] = no requirement */
	struct tq_strset set[TQ_NFIELDS];
};

struct cdt_submit {
	struct cdt_job *jobs;
	size_t njobs; /* 1..CDT_MAX_JOBS, job ids unique */
};

/*
** Decode job.submit {"jobs": [job, ...]}. Required per job: jobID, ownerDN,
** ownerGroup, setup, cpuTime. Strings and arrays live in `a`. Returns 0 or
** GB_EDECODE, GB_ETYPE, GB_EMISSING, GB_ERANGE, GB_ETOOBIG, GB_EDUP (a key
** twice, a jobID twice), GB_ENOMEM, with `err` naming the field; GB_EINVAL
** on NULL arguments. *out is written only on success.
*/
int cdt_decode_submit(const void *buf, size_t len, struct arena *a,
		      struct cdt_submit *out, struct cod_error *err);

/* Encode job.submit (CLI, tests, benchmark); GB_EINVAL when a job would not
** decode (checked like the decoder). */
int cdt_encode_submit(const struct cdt_submit *s, msgpack_sbuffer *out);

/*
** A pilot's resource description (pilot.match). Lists keep the order and
** repeats given (the index sorts its ids); ANY (any case, alone or in a
** list) in site, gridCE, platform, pilotType, jobType or tags sets
** d.any[f] and leaves d.want[f] empty.
*/
struct cdt_pilot {
	const char *pilot_id;    /* pilotID, required: the pilot's reference */
	const char *site;        /* decoded: what replies and records name, the
				    first site given or "ANY" when the site
				    does not constrain; the encoder ignores it */
	struct tqi_pilot d;      /* setup (required), cpuTime (required,
				    1..CDT_MAX_CPU) and the lists */
};

/*
** Decode pilot.match; same conventions as cdt_decode_submit. Refused as
** well: a description over CDT_MAX_PILOT_BYTES (GB_ETOOBIG), an ownerDN
** without ownerGroup (GB_EMISSING on "ownerGroup"), a
** requiredTags value not among tags (GB_ERANGE on "requiredTags[i]":
** DIRAC's "Wrong conditions"; tags ANY offers every tag).
*/
int cdt_decode_pilot(const void *buf, size_t len, struct arena *a,
		     struct cdt_pilot *out, struct cod_error *err);
/* GB_EINVAL when the pilot would not decode. Lists of one value are sent
** as a string, any[f] as "ANY". */
int cdt_encode_pilot(const struct cdt_pilot *p, msgpack_sbuffer *out);

/*
** What the decoder does after reading the fields, for a pilot built
** elsewhere (a scenario file): fold ANY (any case, alone or in a list)
** into d.any[f] with an empty list, check the rules above, and set `site`.
** Returns 0 or GB_EMISSING / GB_ERANGE with `err` (may be NULL) filled.
*/
int cdt_pilot_settle(struct cdt_pilot *p, struct cod_error *err);

/* The arena bytes cdt_pilot_copy takes for p (at most CDT_MAX_PILOT_BYTES
** for a pilot the decoder accepted). */
size_t cdt_pilot_size(const struct cdt_pilot *p);

/* Copy p's strings and lists into `a` (dst's point there); GB_ENOMEM. */
int cdt_pilot_copy(const struct cdt_pilot *p, struct arena *a,
		   struct cdt_pilot *dst);

/*
** The outcome of one pilot.match: the RPC reply, and one entry of a
** pilot.matched or pilot.nomatch event.
*/
struct cdt_match {
	long long decision_id;  /* pilot_matches row id */
	const char *request_id; /* the pilot.match message id */
	const char *pilot_id;
	const char *site;
	int matched;            /* 1: job_id.. are set */
	long long job_id, tq_id;
	const char *owner, *owner_group; /* of the job (NULL when none) */
	long long tq_cpu_time;
	const char *code;       /* tq_result_code, or "claim_conflict" when
				   every pick was claimed by another worker;
				   "matched" exactly when matched */
	const char *reason;     /* tq_result_format text, also when matched;
				   non-empty, at most COD_MAX_STRING - 1
				   bytes: format into char[COD_MAX_STRING]
				   (the encoders refuse longer text) */
	/* TQ-10 counts */
	size_t considered, matched_tqs, empty;
	size_t rejected[TQ_NFILTERS]; /* keys: tq_filter(f)->name */
};

/*
** Reply map: {requestID, decision, outcome: "matched"|"nomatch", code,
** reason, pilotID, site, [jobID, tqID, ownerDN, ownerGroup, cpuTime],
** counts: {considered, matched, empty, rejected: {filter: n, ...}}}
** (rejected lists the filters with n > 0).
*/
/* GB_EINVAL when the reply would not decode: a field out of range (see
** pilot.match.reply.md), code and outcome disagreeing, a matched reply
** without its job, counts that do not add up (matched <= considered,
** empty <= matched, sum of rejected + matched <= considered). */
int cdt_encode_reply(const struct cdt_match *m, msgpack_sbuffer *out);

/* Decode a reply (CLI, tests, benchmark); strings live in `a`; job_id,
** tq_id, owner, owner_group and tq_cpu_time are 0 / NULL for a nomatch.
** Codes as for cdt_decode_submit. */
int cdt_decode_reply(const void *buf, size_t len, struct arena *a,
		     struct cdt_match *out, struct cod_error *err);

/*
** One event for a group commit: {"event": name, "count": n, "items": [map
** as in the reply, without counts]}. `event` is "pilot.matched" or
** "pilot.nomatch"; 1..CDT_MAX_ITEMS items, all matched or all not, each
** decision once, each job once. GB_EINVAL otherwise (an item the reply
** encoder would refuse included).
*/
int cdt_encode_match_event(const char *event, const struct cdt_match *items,
			   size_t n, msgpack_sbuffer *out);

/* Decode such an event (tests); items live in `a`. */
int cdt_decode_match_event(const void *buf, size_t len, struct arena *a,
			   struct cdt_match **items, size_t *n,
			   struct cod_error *err);

/* job.status values, in lifecycle order: a status never moves to a lower
** rank (stale or out-of-order updates are ignored). */
enum cdt_job_status {
	CDT_ST_WAITING = 0,
	CDT_ST_MATCHED,
	CDT_ST_RUNNING,
	CDT_ST_STALLED,
	CDT_ST_COMPLETING,
	CDT_ST_DONE,
	CDT_ST_FAILED,
	CDT_ST_KILLED,
	CDT_ST_DELETED, /* DIRAC's JobDB status of a job removed by its owner */
	CDT_NSTATUS
};

/* "waiting", "matched", "running", "stalled", "completing", "done",
** "failed", "killed", "deleted"; NULL when out of range. */
const char *cdt_status_name(enum cdt_job_status s);
/* -1 when unknown. */
int cdt_status_parse(const char *s);
/* waiting 0, matched 1, running and stalled 2, completing 3, done, failed,
** killed and deleted 4. */
int cdt_status_rank(enum cdt_job_status s);

struct cdt_status {
	long long job_id;           /* > 0 */
	enum cdt_job_status status; /* "status", one of the names above */
	long long time;             /* unix s of the change, 0..CDT_MAX_TIME */
	const char *site;           /* NULL when not given */
};

int cdt_decode_status(const void *buf, size_t len, struct arena *a,
		      struct cdt_status *out, struct cod_error *err);
int cdt_encode_status(const struct cdt_status *s, msgpack_sbuffer *out);

#endif
