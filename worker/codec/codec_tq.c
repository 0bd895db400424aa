/*
** codec_tq.c — the DIRAC-side messages in msgpack: job.submit, pilot.match,
** its reply, the pilot.matched / pilot.nomatch events and job.status.
**
** Every message is a field table walked by codec.c's cod_decode_fields(),
** so these get the checks and the error wording of task.broker and
** job.broker for free (types before values, unknown keys ignored, a key
** twice refused, nil = absent for optional fields, paths such as
** "jobs[3].sites[0]"). What is particular to task queues lives in the
** COD_F_CUSTOM rows: the requirement sets, UserPriority (an int), the
** status and outcome words, the TQ-10 counts.
**
** The requirement sets are normalised here, once, with the engine's
** tq_strset_normalise: the TQ-01 signature and the store's requirement
** rows both need sorted, unique values, and a producer that repeats a site
** means the same job as one that does not, so repeats are dropped rather
** than refused. A jobID twice in one submission is refused (GB_EDUP): the
** second copy would either be silently lost or inserted twice.
**
** A reply and an event item are one table (the event item is the reply
** without "counts"), so a consumer reads the same fields in both. The
** rules that tie fields together (outcome and code agree, the job's
** fields exactly when matched, counts that add up, ownerDN only with
** ownerGroup) are checked after the table, in one function each shared by
** the decoder and the encoder: what we send always decodes, and the
** encoder reports GB_EINVAL instead of producing a message a consumer
** would refuse.
*/
#include "codec/codec_tq.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gb_error.h"

/* pilot.match, job.status and a reply hold a few dozen values; the cap
** leaves room for fields producers add before workers know them. */
#define CDT_SMALL_VALUES 65536
/* TQ-10 counts are numbers of task queues: LHCb runs about 500. The bound
** keeps their sums far from overflow. */
#define CDT_MAX_COUNT 1000000000LL

/* ---- shared pieces -------------------------------------------------------- */

/* An integer in [spec->imin, spec->imax] stored as an int (the table
** walker only knows long and long long). */
static int get_int(const msgpack_object *o, const char *field,
		   const struct cod_field *spec, void *base, struct arena *a,
		   struct cod_error *err)
{
	(void)a;
	long long v = 0;
	int rc = cod_get_int(o, field, spec->imin, spec->imax, &v, err);
	if (rc != GB_OK)
		return rc;
	*(int *)(void *)((char *)base + spec->off) = (int)v;
	return GB_OK;
}

/* Join a map's path and a key, as cod_decode_fields names its fields. */
static void join(char *dst, size_t len, const char *path, const char *key)
{
	cod_path_join(dst, len, path, key);
}

/* A packed string when `s` is not NULL (the caller counted the key). */
static int pack_opt(msgpack_packer *pk, const char *k, const char *s)
{
	return s ? cod_pack_kstr(pk, k, s) : 0;
}

/* ---- job.submit ----------------------------------------------------------- */

/*
** TQ-03: an array of at most CDT_MAX_SET non-empty strings, normalised
** (sorted, unique) into the struct tq_strset at spec->off. [] is no
** requirement, as absent and nil are.
*/
static int get_set(const msgpack_object *o, const char *field,
		   const struct cod_field *spec, void *base, struct arena *a,
		   struct cod_error *err)
{
	const char **v = NULL;
	size_t n = 0;
	int rc = cod_get_strs(o, field, CDT_MAX_SET, NULL, a, &v, &n, err);
	if (rc != GB_OK)
		return rc;
	if (n > 0)
		tq_strset_normalise(v, &n);
	*(struct tq_strset *)(void *)((char *)base + spec->off) =
		(struct tq_strset){v, n};
	return GB_OK;
}

#define JOB(m) offsetof(struct cdt_job, m)
#define SET_ROW(key, f)                                                    \
	{key, COD_F_CUSTOM, 0, 0, 0, 0, 0, JOB(set[f]), get_set}

/* In the order of schemas/messages/job.submit.md; the set keys are
** tq_field_names[] (the unit test checks that they agree). */
static const struct cod_field job_fields[] = {
	{"jobID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0, JOB(job_id), NULL},
	{"ownerDN", COD_F_STR, 1, 0, 0, 0, 1, JOB(owner), NULL},
	{"ownerGroup", COD_F_STR, 1, 0, 0, 0, 1, JOB(owner_group), NULL},
	{"setup", COD_F_STR, 1, 0, 0, 0, 1, JOB(setup), NULL},
	{"cpuTime", COD_F_LLONG, 1, 1, CDT_MAX_CPU, 0, 0, JOB(cpu_time),
	 NULL},
	{"userPriority", COD_F_CUSTOM, 0, TQ_MIN_PRIORITY, TQ_MAX_PRIORITY, 0,
	 0, JOB(user_priority), get_int},
	SET_ROW("sites", TQ_F_SITES),
	SET_ROW("bannedSites", TQ_F_BANNED_SITES),
	SET_ROW("gridCEs", TQ_F_GRID_CES),
	SET_ROW("platforms", TQ_F_PLATFORMS),
	SET_ROW("pilotTypes", TQ_F_PILOT_TYPES),
	SET_ROW("submitPools", TQ_F_SUBMIT_POOLS),
	SET_ROW("gridMiddlewares", TQ_F_GRID_MIDDLEWARES),
	SET_ROW("jobTypes", TQ_F_JOB_TYPES),
	SET_ROW("tags", TQ_F_TAGS),
};

/* Each job starts with DIRAC's default UserPriority. A jobID twice in one
** submission is refused: the second copy would either be silently lost or
** inserted twice. */
static const struct cdt_job job_init = {.user_priority = 1};
static const struct cod_maps job_maps = {
	.max = CDT_MAX_JOBS,
	.what = "job",
	.f = job_fields,
	.nf = COD_NELEM(job_fields),
	.size = sizeof(struct cdt_job),
	.init = &job_init,
	.uniq = {{"jobID", "jobID", JOB(job_id), 0}},
};

static int get_jobs(const msgpack_object *o, const char *field,
		    const struct cod_field *spec, void *base, struct arena *a,
		    struct cod_error *err)
{
	(void)spec;
	struct cdt_submit *s = base;
	void *jobs = NULL;
	int rc = cod_get_maps(o, field, &job_maps, base, a, &jobs, &s->njobs,
			      err);
	s->jobs = jobs;
	return rc;
}

static const struct cod_field submit_fields[] = {
	{"jobs", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_jobs},
};

static const struct cod_msg submit_msg = {CDT_MAX_VALUES, submit_fields,
					  COD_NELEM(submit_fields), NULL};

int cdt_decode_submit(const void *buf, size_t len, struct arena *a,
		      struct cdt_submit *out, struct cod_error *err)
{
	struct cdt_submit s = {NULL, 0};
	int rc = cod_decode_msg(buf, len, a, out, &submit_msg, &s, err);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

/* What the decoder accepts for one set or list of at most `max`
** non-empty strings: strings may repeat, the array may not be missing. */
static int strs_ok(const struct tq_strset *s, size_t max)
{
	if (s->n > max || (s->n && s->v == NULL))
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (!cod_str_ok(s->v[i], 1))
			return 0;
	return 1;
}

static int set_ok(const struct tq_strset *s)
{
	return strs_ok(s, CDT_MAX_SET);
}

static int job_ok(const struct cdt_job *j)
{
	if (j->job_id < 1 || !cod_str_ok(j->owner, 1) ||
	    !cod_str_ok(j->owner_group, 1) || !cod_str_ok(j->setup, 1) ||
	    j->cpu_time < 1 || j->cpu_time > CDT_MAX_CPU ||
	    j->user_priority < TQ_MIN_PRIORITY ||
	    j->user_priority > TQ_MAX_PRIORITY)
		return 0;
	for (int f = 0; f < TQ_NFIELDS; f++)
		if (!set_ok(&j->set[f]))
			return 0;
	return 1;
}

int cdt_encode_submit(const struct cdt_submit *s, msgpack_sbuffer *out)
{
	if (s == NULL || out == NULL || s->njobs < 1 ||
	    s->njobs > CDT_MAX_JOBS || s->jobs == NULL)
		return GB_EINVAL;
	for (size_t i = 0; i < s->njobs; i++)
		if (!job_ok(&s->jobs[i]))
			return GB_EINVAL;
	int rc = cod_ids_unique(s->jobs, s->njobs, sizeof(s->jobs[0]),
			    offsetof(struct cdt_job, job_id), 0);
	if (rc != GB_OK)
		return rc;
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, 1);
	bad |= cod_pack_str(&pk, "jobs");
	bad |= msgpack_pack_array(&pk, s->njobs);
	for (size_t i = 0; i < s->njobs && !bad; i++) {
		const struct cdt_job *j = &s->jobs[i];
		/* an empty set is no requirement: leaving it out keeps a
		** 5000-job submission well under the message size limit */
		size_t nsets = 0;
		for (int f = 0; f < TQ_NFIELDS; f++)
			nsets += j->set[f].n > 0;
		bad |= msgpack_pack_map(&pk, 6 + nsets);
		bad |= cod_pack_kint(&pk, "jobID", j->job_id);
		bad |= cod_pack_kstr(&pk, "ownerDN", j->owner);
		bad |= cod_pack_kstr(&pk, "ownerGroup", j->owner_group);
		bad |= cod_pack_kstr(&pk, "setup", j->setup);
		bad |= cod_pack_kint(&pk, "cpuTime", j->cpu_time);
		bad |= cod_pack_kint(&pk, "userPriority", j->user_priority);
		for (int f = 0; f < TQ_NFIELDS; f++) {
			if (j->set[f].n == 0)
				continue;
			/* rows 6.. of job_fields are the sets, in enum
			** tq_field order */
			bad |= cod_pack_str(&pk, job_fields[6 + f].key);
			bad |= msgpack_pack_array(&pk, j->set[f].n);
			for (size_t k = 0; k < j->set[f].n; k++)
				bad |= cod_pack_str(&pk, j->set[f].v[k]);
		}
	}
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- pilot.match ---------------------------------------------------------- */

#define PIL(m) offsetof(struct cdt_pilot, m)

/*
** A string or an array of at most TQ_MAX_PILOT_VALUES non-empty strings
** into the struct tq_strset at spec->off (order and repeats kept; the
** index sorts; ANY is folded by cdt_pilot_settle).
*/
static int get_list(const msgpack_object *o, const char *field,
		    const struct cod_field *spec, void *base, struct arena *a,
		    struct cod_error *err)
{
	struct tq_strset *out =
		(struct tq_strset *)(void *)((char *)base + spec->off);
	const char **v = NULL;
	size_t n = 0;
	int rc;
	if (o->type == MSGPACK_OBJECT_STR) {
		v = arena_alloc(a, sizeof(*v));
		if (v == NULL)
			return cod_fail(err, GB_ENOMEM, field,
					"out of decoding memory");
		rc = cod_get_str(o, field, 1, a, &v[0], err);
		n = 1;
	} else if (o->type == MSGPACK_OBJECT_ARRAY) {
		rc = cod_get_strs(o, field, TQ_MAX_PILOT_VALUES, NULL, a, &v, &n,
				  err);
	} else {
		return cod_fail(err, GB_ETYPE, field,
				"expected string or array, got %s",
				cod_type_name(o));
	}
	if (rc != GB_OK)
		return rc;
	*out = (struct tq_strset){v, n};
	return GB_OK;
}

#define LIST_ROW(key, member)                                              \
	{key, COD_F_CUSTOM, 0, 0, 0, 0, 0, PIL(member), get_list}

/* Lists may be absent, nil or []: no constraint (tags: none offered). */
static const struct cod_field pilot_fields[] = {
	{"pilotID", COD_F_STR, 1, 0, 0, 0, 1, PIL(pilot_id), NULL},
	{"setup", COD_F_STR, 1, 0, 0, 0, 1, PIL(d.setup), NULL},
	{"cpuTime", COD_F_LLONG, 1, 1, CDT_MAX_CPU, 0, 0, PIL(d.cpu_time),
	 NULL},
	LIST_ROW("site", d.want[TQ_P_SITE]),
	LIST_ROW("gridCE", d.want[TQ_P_GRID_CE]),
	LIST_ROW("platform", d.want[TQ_P_PLATFORM]),
	LIST_ROW("pilotType", d.want[TQ_P_PILOT_TYPE]),
	LIST_ROW("jobType", d.want[TQ_P_JOB_TYPE]),
	LIST_ROW("tags", d.want[TQ_P_TAG]),
	LIST_ROW("requiredTags", d.required),
	LIST_ROW("bannedSite", d.banned[TQ_P_SITE]),
	LIST_ROW("bannedGridCE", d.banned[TQ_P_GRID_CE]),
	LIST_ROW("bannedPlatform", d.banned[TQ_P_PLATFORM]),
	LIST_ROW("bannedPilotType", d.banned[TQ_P_PILOT_TYPE]),
	LIST_ROW("bannedJobType", d.banned[TQ_P_JOB_TYPE]),
	LIST_ROW("bannedTag", d.banned[TQ_P_TAG]),
	LIST_ROW("ownerGroup", d.groups),
	LIST_ROW("ownerDN", d.owners),
};

static const struct cod_msg pilot_msg = {CDT_SMALL_VALUES, pilot_fields,
					 COD_NELEM(pilot_fields), NULL};

static int str_in(const char *s, const struct tq_strset *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(s, l->v[i]) == 0)
			return 1;
	return 0;
}

static size_t list_bytes(const struct tq_strset *l)
{
	size_t b = l->n * sizeof(char *) + 16;
	for (size_t i = 0; i < l->n; i++)
		b += strlen(l->v[i]) + 1 + 16; /* the arena's alignment */
	return b;
}

size_t cdt_pilot_size(const struct cdt_pilot *p)
{
	size_t b = 64;
	const char *s[] = {p->pilot_id, p->site, p->d.setup};
	for (size_t i = 0; i < COD_NELEM(s); i++)
		b += s[i] ? strlen(s[i]) + 1 + 16 : 0;
	b += list_bytes(&p->d.required) + list_bytes(&p->d.groups) +
	     list_bytes(&p->d.owners);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		b += list_bytes(&p->d.want[f]) + list_bytes(&p->d.banned[f]);
	return b;
}

/* The rules between a pilot's fields; 0, or an error (err may be NULL). */
static int pilot_check(const struct cdt_pilot *p, struct cod_error *err)
{
	size_t size = cdt_pilot_size(p);
	if (size > CDT_MAX_PILOT_BYTES)
		return cod_fail(err, GB_ETOOBIG, "",
				"pilot description of %zu bytes exceeds the "
				"limit of %d (values and their lists)",
				size, CDT_MAX_PILOT_BYTES);
	/* TQ-04: a DN restricts a private pilot within its groups; without
	** them it could not be checked against JOB_SHARING. */
	if (p->d.owners.n > 0 && p->d.groups.n == 0)
		return cod_fail(err, GB_EMISSING, "ownerGroup",
				"required when ownerDN is given");
	/* DIRAC's "Wrong conditions": requiredTags must be among tags. */
	if (!p->d.any[TQ_P_TAG])
		for (size_t i = 0; i < p->d.required.n; i++)
			if (!str_in(p->d.required.v[i], &p->d.want[TQ_P_TAG])) {
				/* Shown sanitised: the value is the sender's
				** and goes into logs and dead-letter headers. */
				char f[40], shown[48];
				const char *v = p->d.required.v[i];
				snprintf(f, sizeof(f), "requiredTags[%zu]", i);
				cod_sanitize(shown, sizeof(shown), v, strlen(v),
					     40);
				return cod_fail(err, GB_ERANGE, f,
						"\"%s\" is not among tags "
						"(required tags must be a "
						"subset of the pilot's tags)",
						shown);
			}
	return GB_OK;
}

int cdt_pilot_settle(struct cdt_pilot *p, struct cod_error *err)
{
	if (p == NULL)
		return GB_EINVAL;
	for (int f = 0; f < TQ_NPFIELDS; f++)
		for (size_t i = 0; i < p->d.want[f].n; i++)
			if (tq_is_any(p->d.want[f].v[i])) {
				p->d.any[f] = 1;
				p->d.want[f] = (struct tq_strset){NULL, 0};
				break;
			}
	int rc = pilot_check(p, err);
	if (rc != GB_OK)
		return rc;
	p->site = p->d.want[TQ_P_SITE].n > 0 ? p->d.want[TQ_P_SITE].v[0]
					     : "ANY";
	return GB_OK;
}

int cdt_decode_pilot(const void *buf, size_t len, struct arena *a,
		     struct cdt_pilot *out, struct cod_error *err)
{
	struct cdt_pilot p;
	memset(&p, 0, sizeof(p));
	int rc = cod_decode_msg(buf, len, a, out, &pilot_msg, &p, err);
	if (rc == GB_OK)
		rc = cdt_pilot_settle(&p, err);
	if (rc != GB_OK)
		return rc;
	*out = p;
	return GB_OK;
}

static int opt_ok(const char *s)
{
	return s == NULL || cod_str_ok(s, 1);
}

static int list_ok(const struct tq_strset *l)
{
	return strs_ok(l, TQ_MAX_PILOT_VALUES);
}

/* A list as the decoder reads it back: nothing when empty and not ANY,
** "ANY", one string, or an array. */
static int list_keys(const struct tq_strset *l, int any)
{
	return any || l->n > 0;
}

static int pack_list(msgpack_packer *pk, const char *k,
		     const struct tq_strset *l, int any)
{
	if (!list_keys(l, any))
		return 0;
	if (any)
		return cod_pack_kstr(pk, k, "ANY");
	if (l->n == 1)
		return cod_pack_kstr(pk, k, l->v[0]);
	int bad = cod_pack_str(pk, k);
	bad |= msgpack_pack_array(pk, l->n);
	for (size_t i = 0; i < l->n; i++)
		bad |= cod_pack_str(pk, l->v[i]);
	return bad;
}

int cdt_encode_pilot(const struct cdt_pilot *p, msgpack_sbuffer *out)
{
	if (p == NULL || out == NULL || !cod_str_ok(p->pilot_id, 1) ||
	    !cod_str_ok(p->d.setup, 1) || p->d.cpu_time < 1 ||
	    p->d.cpu_time > CDT_MAX_CPU || !list_ok(&p->d.required) ||
	    !list_ok(&p->d.groups) || !list_ok(&p->d.owners))
		return GB_EINVAL;
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		if (!list_ok(&p->d.want[f]) || !list_ok(&p->d.banned[f]))
			return GB_EINVAL;
		/* a value "ANY" would decode as the wildcard */
		for (size_t i = 0; i < p->d.want[f].n; i++)
			if (tq_is_any(p->d.want[f].v[i]))
				return GB_EINVAL;
	}
	if (pilot_check(p, NULL) != GB_OK)
		return GB_EINVAL;
	size_t nkeys = 3 + list_keys(&p->d.required, 0) +
		       list_keys(&p->d.groups, 0) + list_keys(&p->d.owners, 0);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		nkeys += list_keys(&p->d.want[f], p->d.any[f]) +
			 list_keys(&p->d.banned[f], 0);
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, nkeys);
	bad |= cod_pack_kstr(&pk, "pilotID", p->pilot_id);
	bad |= cod_pack_kstr(&pk, "setup", p->d.setup);
	bad |= cod_pack_kint(&pk, "cpuTime", p->d.cpu_time);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		bad |= pack_list(&pk, tq_pfield_names[f], &p->d.want[f],
				 p->d.any[f]);
	bad |= pack_list(&pk, "requiredTags", &p->d.required, 0);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		bad |= pack_list(&pk, tq_pfield_ban_names[f], &p->d.banned[f],
				 0);
	bad |= pack_list(&pk, "ownerGroup", &p->d.groups, 0);
	bad |= pack_list(&pk, "ownerDN", &p->d.owners, 0);
	return bad ? GB_ENOMEM : GB_OK;
}

static int list_copy(const struct tq_strset *l, struct arena *a,
		     struct tq_strset *dst)
{
	*dst = (struct tq_strset){NULL, 0};
	if (l->n == 0)
		return GB_OK;
	const char **v = arena_alloc(a, l->n * sizeof(*v));
	if (v == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		if ((v[i] = arena_strdup(a, l->v[i])) == NULL)
			return GB_ENOMEM;
	*dst = (struct tq_strset){v, l->n};
	return GB_OK;
}

int cdt_pilot_copy(const struct cdt_pilot *p, struct arena *a,
		   struct cdt_pilot *dst)
{
	if (p == NULL || a == NULL || dst == NULL)
		return GB_EINVAL;
	struct cdt_pilot c = *p;
	int bad = (p->pilot_id && !(c.pilot_id = arena_strdup(a, p->pilot_id))) ||
		  (p->site && !(c.site = arena_strdup(a, p->site))) ||
		  (p->d.setup && !(c.d.setup = arena_strdup(a, p->d.setup)));
	bad |= list_copy(&p->d.required, a, &c.d.required) != GB_OK;
	bad |= list_copy(&p->d.groups, a, &c.d.groups) != GB_OK;
	bad |= list_copy(&p->d.owners, a, &c.d.owners) != GB_OK;
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		bad |= list_copy(&p->d.want[f], a, &c.d.want[f]) != GB_OK;
		bad |= list_copy(&p->d.banned[f], a, &c.d.banned[f]) != GB_OK;
	}
	if (bad)
		return GB_ENOMEM;
	*dst = c;
	return GB_OK;
}

/* ---- the reply and its event items --------------------------------------- */

static const char *const outcome_words[] = {"matched", "nomatch", NULL};

static int get_outcome(const msgpack_object *o, const char *field,
		       const struct cod_field *spec, void *base,
		       struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	int w = cod_get_word(o, field, outcome_words, "matched or nomatch", err);
	if (w < 0)
		return w;
	((struct cdt_match *)base)->matched = w == 0;
	return GB_OK;
}

/* The TQ-10 counts as read, before they become size_t. */
struct cnt_dec {
	long long considered, matched, empty;
	long long rejected[TQ_NFILTERS];
};

#define CNT(m) offsetof(struct cnt_dec, m)
#define REJ_ROW(key, f)                                                    \
	{key, COD_F_LLONG, 0, 0, CDT_MAX_COUNT, 0, 0, CNT(rejected[f]), NULL}

/* Keys are tq_filter(f)->name (the unit test checks that they agree); a
** filter the worker does not know is ignored like any unknown key, so a
** newer worker may add one. */
static const struct cod_field rejected_fields[] = {
	REJ_ROW("pilot_type", TQ_FL_PILOT_TYPE),
	REJ_ROW("site", TQ_FL_SITE),
	REJ_ROW("grid_ce", TQ_FL_GRID_CE),
	REJ_ROW("platform", TQ_FL_PLATFORM),
	REJ_ROW("job_type", TQ_FL_JOB_TYPE),
	REJ_ROW("required_tag", TQ_FL_REQUIRED_TAG),
	REJ_ROW("owner_group", TQ_FL_OWNER_GROUP),
	REJ_ROW("owner_dn", TQ_FL_OWNER_DN),
	REJ_ROW("setup", TQ_FL_SETUP),
	REJ_ROW("cpu_time", TQ_FL_CPU_TIME),
	REJ_ROW("banned_site", TQ_FL_BANNED_SITE),
	REJ_ROW("tag", TQ_FL_TAG),
	REJ_ROW("ban_site", TQ_FL_BAN_SITE),
	REJ_ROW("ban_grid_ce", TQ_FL_BAN_GRID_CE),
	REJ_ROW("ban_platform", TQ_FL_BAN_PLATFORM),
	REJ_ROW("ban_pilot_type", TQ_FL_BAN_PILOT_TYPE),
	REJ_ROW("ban_job_type", TQ_FL_BAN_JOB_TYPE),
	REJ_ROW("ban_tag", TQ_FL_BAN_TAG),
};

static int get_rejected(const msgpack_object *o, const char *field,
			const struct cod_field *spec, void *base,
			struct arena *a, struct cod_error *err)
{
	(void)spec;
	return cod_decode_fields(o, field, rejected_fields,
				 COD_NELEM(rejected_fields), base, a, err);
}

static const struct cod_field count_fields[] = {
	{"considered", COD_F_LLONG, 1, 0, CDT_MAX_COUNT, 0, 0,
	 CNT(considered), NULL},
	{"matched", COD_F_LLONG, 1, 0, CDT_MAX_COUNT, 0, 0, CNT(matched),
	 NULL},
	{"empty", COD_F_LLONG, 1, 0, CDT_MAX_COUNT, 0, 0, CNT(empty), NULL},
	{"rejected", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_rejected},
};

/*
** A task queue is counted once: rejected by its first failing filter, or
** matched (and then maybe empty). So matched <= considered, empty <=
** matched and the rejections plus the matches are at most the considered
** (equal for a fresh tq_match; all zero for a redelivered request, whose
** counts were not kept). 0, or GB_ERANGE naming the count at `path`.
*/
static int counts_check(const struct cnt_dec *c, const char *path,
			struct cod_error *err)
{
	char field[sizeof(err->field)];
	if (c->matched > c->considered) {
		join(field, sizeof(field), path, "matched");
		return cod_fail(err, GB_ERANGE, field,
				"%lld matched of %lld considered", c->matched,
				c->considered);
	}
	if (c->empty > c->matched) {
		join(field, sizeof(field), path, "empty");
		return cod_fail(err, GB_ERANGE, field,
				"%lld empty of %lld matched", c->empty,
				c->matched);
	}
	long long sum = c->matched;
	for (int f = 0; f < TQ_NFILTERS; f++)
		sum += c->rejected[f];
	if (sum > c->considered) {
		join(field, sizeof(field), path, "rejected");
		return cod_fail(err, GB_ERANGE, field,
				"%lld rejected and %lld matched exceed the "
				"%lld considered",
				sum - c->matched, c->matched, c->considered);
	}
	return GB_OK;
}

static int get_counts(const msgpack_object *o, const char *field,
		      const struct cod_field *spec, void *base,
		      struct arena *a, struct cod_error *err)
{
	(void)spec;
	struct cnt_dec c;
	memset(&c, 0, sizeof(c));
	int rc = cod_decode_fields(o, field, count_fields,
				   COD_NELEM(count_fields), &c, a, err);
	if (rc == GB_OK)
		rc = counts_check(&c, field, err);
	if (rc != GB_OK)
		return rc;
	struct cdt_match *m = base;
	m->considered = (size_t)c.considered;
	m->matched_tqs = (size_t)c.matched;
	m->empty = (size_t)c.empty;
	for (int f = 0; f < TQ_NFILTERS; f++)
		m->rejected[f] = (size_t)c.rejected[f];
	return GB_OK;
}

#define MAT(m) offsetof(struct cdt_match, m)

/* The reply's fields in the order of pilot.match.reply.md. An event item
** is the same map without "counts", the last row. */
static const struct cod_field reply_fields[] = {
	{"requestID", COD_F_STR, 1, 0, 0, 0, 1, MAT(request_id), NULL},
	{"decision", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0, MAT(decision_id),
	 NULL},
	{"outcome", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_outcome},
	{"code", COD_F_STR, 1, 0, 0, 0, 1, MAT(code), NULL},
	{"reason", COD_F_STR, 1, 0, 0, 0, 1, MAT(reason), NULL},
	{"pilotID", COD_F_STR, 1, 0, 0, 0, 1, MAT(pilot_id), NULL},
	{"site", COD_F_STR, 1, 0, 0, 0, 1, MAT(site), NULL},
	{"jobID", COD_F_LLONG, 0, 1, LLONG_MAX, 0, 0, MAT(job_id), NULL},
	{"tqID", COD_F_LLONG, 0, 1, LLONG_MAX, 0, 0, MAT(tq_id), NULL},
	{"ownerDN", COD_F_STR, 0, 0, 0, 0, 1, MAT(owner), NULL},
	{"ownerGroup", COD_F_STR, 0, 0, 0, 0, 1, MAT(owner_group), NULL},
	{"cpuTime", COD_F_LLONG, 0, 1, LLONG_MAX, 0, 0, MAT(tq_cpu_time),
	 NULL},
	{"counts", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_counts},
};

#define NITEM_FIELDS (COD_NELEM(reply_fields) - 1)

/*
** The rules between a match's fields: code "matched" exactly when the
** outcome is matched; the job's five fields exactly when matched (they
** are optional rows, so 0 / NULL means absent: a present value is >= 1 or
** non-empty). 0, or an error naming the field at `path`.
*/
static int match_check(const struct cdt_match *m, const char *path,
		       struct cod_error *err)
{
	char field[sizeof(err->field)];
	int code_matched = strcmp(m->code, "matched") == 0;
	if (code_matched != m->matched) {
		join(field, sizeof(field), path, "code");
		return cod_fail(err, GB_ERANGE, field,
				m->matched ? "expected \"matched\" with "
					     "outcome matched"
					   : "\"matched\" needs outcome matched");
	}
	const struct {
		const char *key;
		int present;
	} job[] = {
		{"jobID", m->job_id != 0},
		{"tqID", m->tq_id != 0},
		{"ownerDN", m->owner != NULL},
		{"ownerGroup", m->owner_group != NULL},
		{"cpuTime", m->tq_cpu_time != 0},
	};
	for (size_t i = 0; i < COD_NELEM(job); i++) {
		if (job[i].present == m->matched)
			continue;
		join(field, sizeof(field), path, job[i].key);
		return m->matched ? cod_fail(err, GB_EMISSING, field,
					     "required with outcome matched")
				  : cod_fail(err, GB_ERANGE, field,
					     "only with outcome matched");
	}
	return GB_OK;
}

static const struct cod_msg reply_msg = {CDT_SMALL_VALUES, reply_fields,
					 COD_NELEM(reply_fields), NULL};

int cdt_decode_reply(const void *buf, size_t len, struct arena *a,
		     struct cdt_match *out, struct cod_error *err)
{
	struct cdt_match m;
	memset(&m, 0, sizeof(m));
	int rc = cod_decode_msg(buf, len, a, out, &reply_msg, &m, err);
	if (rc == GB_OK)
		rc = match_check(&m, "", err);
	if (rc == GB_OK)
		*out = m;
	return rc;
}

/* What the item decoder accepts: the table's ranges, then match_check. */
static int match_ok(const struct cdt_match *m)
{
	if (m == NULL || m->decision_id < 1 || !cod_str_ok(m->request_id, 1) ||
	    (m->matched != 0 && m->matched != 1) || !cod_str_ok(m->code, 1) ||
	    !cod_str_ok(m->reason, 1) || !cod_str_ok(m->pilot_id, 1) ||
	    !cod_str_ok(m->site, 1))
		return 0;
	if (m->matched && (m->job_id < 1 || m->tq_id < 1 ||
			   !cod_str_ok(m->owner, 1) ||
			   !cod_str_ok(m->owner_group, 1) ||
			   m->tq_cpu_time < 1))
		return 0;
	/* a not-matched item sends none of the job's fields, whatever they
	** hold; match_check only sees what would be sent */
	struct cdt_match sent = *m;
	if (!m->matched) {
		sent.job_id = sent.tq_id = sent.tq_cpu_time = 0;
		sent.owner = sent.owner_group = NULL;
	}
	return match_check(&sent, "", NULL) == GB_OK;
}

/* The counts as the decoder would read them, or 0 when one is beyond
** CDT_MAX_COUNT. */
static int counts_of(const struct cdt_match *m, struct cnt_dec *c)
{
	size_t v[3 + TQ_NFILTERS] = {m->considered, m->matched_tqs, m->empty};
	memcpy(v + 3, m->rejected, sizeof(m->rejected));
	for (size_t i = 0; i < COD_NELEM(v); i++)
		if (v[i] > (size_t)CDT_MAX_COUNT)
			return 0;
	c->considered = (long long)m->considered;
	c->matched = (long long)m->matched_tqs;
	c->empty = (long long)m->empty;
	for (int f = 0; f < TQ_NFILTERS; f++)
		c->rejected[f] = (long long)m->rejected[f];
	return 1;
}

/* One reply map, or an event item when `c` is NULL. */
static int pack_match(msgpack_packer *pk, const struct cdt_match *m,
		      const struct cnt_dec *c)
{
	size_t nkeys = 7 + (m->matched ? 5 : 0) + (c != NULL);
	int bad = msgpack_pack_map(pk, nkeys);
	bad |= cod_pack_kstr(pk, "requestID", m->request_id);
	bad |= cod_pack_kint(pk, "decision", m->decision_id);
	bad |= cod_pack_kstr(pk, "outcome", outcome_words[m->matched ? 0 : 1]);
	bad |= cod_pack_kstr(pk, "code", m->code);
	bad |= cod_pack_kstr(pk, "reason", m->reason);
	bad |= cod_pack_kstr(pk, "pilotID", m->pilot_id);
	bad |= cod_pack_kstr(pk, "site", m->site);
	if (m->matched) {
		bad |= cod_pack_kint(pk, "jobID", m->job_id);
		bad |= cod_pack_kint(pk, "tqID", m->tq_id);
		bad |= cod_pack_kstr(pk, "ownerDN", m->owner);
		bad |= cod_pack_kstr(pk, "ownerGroup", m->owner_group);
		bad |= cod_pack_kint(pk, "cpuTime", m->tq_cpu_time);
	}
	if (c == NULL)
		return bad;
	size_t nrej = 0;
	for (int f = 0; f < TQ_NFILTERS; f++)
		nrej += c->rejected[f] > 0;
	bad |= cod_pack_str(pk, "counts");
	bad |= msgpack_pack_map(pk, 4);
	bad |= cod_pack_kint(pk, "considered", c->considered);
	bad |= cod_pack_kint(pk, "matched", c->matched);
	bad |= cod_pack_kint(pk, "empty", c->empty);
	bad |= cod_pack_str(pk, "rejected");
	bad |= msgpack_pack_map(pk, nrej);
	for (int f = 0; f < TQ_NFILTERS; f++)
		if (c->rejected[f] > 0)
			bad |= cod_pack_kint(pk, tq_filter(f)->name,
					     c->rejected[f]);
	return bad;
}

int cdt_encode_reply(const struct cdt_match *m, msgpack_sbuffer *out)
{
	struct cnt_dec c;
	if (out == NULL || !match_ok(m) || !counts_of(m, &c) ||
	    counts_check(&c, "", NULL) != GB_OK)
		return GB_EINVAL;
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	return pack_match(&pk, m, &c) ? GB_ENOMEM : GB_OK;
}

/* ---- pilot.matched / pilot.nomatch ---------------------------------------- */

static const char *const event_words[] = {"pilot.matched", "pilot.nomatch",
					  NULL};

/* An event as decoded. */
struct ev_dec {
	int matched; /* 1: pilot.matched */
	long long count;
	struct cdt_match *items;
	size_t n;
};

static int get_event(const msgpack_object *o, const char *field,
		     const struct cod_field *spec, void *base, struct arena *a,
		     struct cod_error *err)
{
	(void)spec;
	(void)a;
	int w = cod_get_word(o, field, event_words,
			 "pilot.matched or pilot.nomatch", err);
	if (w < 0)
		return w;
	((struct ev_dec *)base)->matched = w == 0;
	return GB_OK;
}

/* An item decoded: its own rules, and the outcome of its event ("event"
** is decoded before "items", table order). */
static int item_check(const void *elem, const char *path, void *base,
		      struct cod_error *err)
{
	const struct cdt_match *m = elem;
	const struct ev_dec *ev = base;
	int rc = match_check(m, path, err);
	if (rc != GB_OK || m->matched == ev->matched)
		return rc;
	char field[sizeof(err->field)];
	join(field, sizeof(field), path, "outcome");
	return cod_fail(err, GB_ERANGE, field, "%s in a %s event",
			outcome_words[m->matched ? 0 : 1],
			event_words[ev->matched ? 0 : 1]);
}

/*
** The items: each a reply map without counts, all of the event's outcome,
** each decision once, and a job in at most one item (TQ-09: two would
** mean a job given to two pilots; only matched items have a jobID).
*/
static const struct cod_maps item_maps = {
	.max = CDT_MAX_ITEMS,
	.what = "item",
	.f = reply_fields,
	.nf = NITEM_FIELDS,
	.size = sizeof(struct cdt_match),
	.check = item_check,
	.uniq = {{"decision", "decision", MAT(decision_id), 0},
		 {"jobID", "jobID", MAT(job_id), 0}},
};

static int get_items(const msgpack_object *o, const char *field,
		     const struct cod_field *spec, void *base,
		     struct arena *a, struct cod_error *err)
{
	(void)spec;
	struct ev_dec *ev = base;
	void *items = NULL;
	int rc = cod_get_maps(o, field, &item_maps, base, a, &items, &ev->n,
			      err);
	ev->items = items;
	return rc;
}

#define EVD(m) offsetof(struct ev_dec, m)

static const struct cod_field event_fields[] = {
	{"event", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_event},
	{"count", COD_F_LLONG, 1, 1, CDT_MAX_ITEMS, 0, 0, EVD(count), NULL},
	{"items", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_items},
};

static const struct cod_msg event_msg = {CDT_MAX_VALUES, event_fields,
					 COD_NELEM(event_fields), NULL};

int cdt_decode_match_event(const void *buf, size_t len, struct arena *a,
			   struct cdt_match **items, size_t *n,
			   struct cod_error *err)
{
	struct ev_dec ev;
	memset(&ev, 0, sizeof(ev));
	int rc = cod_decode_msg(buf, len, a, n ? (void *)items : NULL,
				&event_msg, &ev, err);
	if (rc == GB_OK && (size_t)ev.count != ev.n)
		rc = cod_fail(err, GB_ERANGE, "count",
			      "%lld, but items has %zu", ev.count, ev.n);
	if (rc != GB_OK)
		return rc;
	*items = ev.items;
	*n = ev.n;
	return GB_OK;
}

int cdt_encode_match_event(const char *event, const struct cdt_match *items,
			   size_t n, msgpack_sbuffer *out)
{
	if (event == NULL || out == NULL || items == NULL || n < 1 ||
	    n > CDT_MAX_ITEMS)
		return GB_EINVAL;
	int matched;
	if (strcmp(event, event_words[0]) == 0)
		matched = 1;
	else if (strcmp(event, event_words[1]) == 0)
		matched = 0;
	else
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!match_ok(&items[i]) || items[i].matched != matched)
			return GB_EINVAL;
	int rc = cod_ids_unique(items, n, sizeof(items[0]), MAT(decision_id),
				0);
	if (rc == GB_OK && matched)
		rc = cod_ids_unique(items, n, sizeof(items[0]), MAT(job_id), 1);
	if (rc != GB_OK)
		return rc;
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, 3);
	bad |= cod_pack_kstr(&pk, "event", event);
	bad |= cod_pack_kint(&pk, "count", (long long)n);
	bad |= cod_pack_str(&pk, "items");
	bad |= msgpack_pack_array(&pk, n);
	for (size_t i = 0; i < n && !bad; i++)
		bad |= pack_match(&pk, &items[i], NULL);
	return bad ? GB_ENOMEM : GB_OK;
}

/* ---- job.status ----------------------------------------------------------- */

static const char *const status_words[CDT_NSTATUS + 1] = {
	[CDT_ST_WAITING] = "waiting",	[CDT_ST_MATCHED] = "matched",
	[CDT_ST_RUNNING] = "running",	[CDT_ST_STALLED] = "stalled",
	[CDT_ST_COMPLETING] = "completing", [CDT_ST_DONE] = "done",
	[CDT_ST_FAILED] = "failed",	[CDT_ST_KILLED] = "killed",
	[CDT_ST_DELETED] = "deleted",	[CDT_NSTATUS] = NULL,
};

const char *cdt_status_name(enum cdt_job_status s)
{
	return (unsigned)s < CDT_NSTATUS ? status_words[s] : NULL;
}

int cdt_status_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int i = 0; i < CDT_NSTATUS; i++)
		if (strcmp(s, status_words[i]) == 0)
			return i;
	return -1;
}

int cdt_status_rank(enum cdt_job_status s)
{
	/* stalled is a running job that stopped sending heartbeats: it may
	** run again, so it shares running's rank; the four ends share the
	** last, so a late "done" does not overwrite a "killed" */
	static const int rank[CDT_NSTATUS] = {
		[CDT_ST_WAITING] = 0,	 [CDT_ST_MATCHED] = 1,
		[CDT_ST_RUNNING] = 2,	 [CDT_ST_STALLED] = 2,
		[CDT_ST_COMPLETING] = 3, [CDT_ST_DONE] = 4,
		[CDT_ST_FAILED] = 4,	 [CDT_ST_KILLED] = 4,
		[CDT_ST_DELETED] = 4,
	};
	return (unsigned)s < CDT_NSTATUS ? rank[s] : -1;
}

static int get_status(const msgpack_object *o, const char *field,
		      const struct cod_field *spec, void *base,
		      struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	int w = cod_get_word(o, field, status_words,
			 "waiting, matched, running, stalled, completing, "
			 "done, failed, killed or deleted",
			 err);
	if (w < 0)
		return w;
	((struct cdt_status *)base)->status = (enum cdt_job_status)w;
	return GB_OK;
}

#define STA(m) offsetof(struct cdt_status, m)

static const struct cod_field status_fields[] = {
	{"jobID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0, STA(job_id), NULL},
	{"status", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_status},
	{"time", COD_F_LLONG, 1, 0, CDT_MAX_TIME, 0, 0, STA(time), NULL},
	{"site", COD_F_STR, 0, 0, 0, 0, 1, STA(site), NULL},
};

static const struct cod_msg status_msg = {CDT_SMALL_VALUES, status_fields,
					  COD_NELEM(status_fields), NULL};

int cdt_decode_status(const void *buf, size_t len, struct arena *a,
		      struct cdt_status *out, struct cod_error *err)
{
	struct cdt_status s;
	memset(&s, 0, sizeof(s));
	int rc = cod_decode_msg(buf, len, a, out, &status_msg, &s, err);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

int cdt_encode_status(const struct cdt_status *s, msgpack_sbuffer *out)
{
	if (s == NULL || out == NULL || s->job_id < 1 ||
	    cdt_status_name(s->status) == NULL || s->time < 0 ||
	    s->time > CDT_MAX_TIME || !opt_ok(s->site))
		return GB_EINVAL;
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, 3 + (s->site != NULL));
	bad |= cod_pack_kint(&pk, "jobID", s->job_id);
	bad |= cod_pack_kstr(&pk, "status", cdt_status_name(s->status));
	bad |= cod_pack_kint(&pk, "time", s->time);
	bad |= pack_opt(&pk, "site", s->site);
	return bad ? GB_ENOMEM : GB_OK;
}
