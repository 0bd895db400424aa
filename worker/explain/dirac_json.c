/*
** dirac_json.c — the DIRAC configuration, jobs and pilots from JSON
** (declared in dirac_json.h).
**
** Flat records (groups, slices, jobs, pilots) are jsonutil.h tables, so a
** field's type, range and default sit in one row and the same rows give
** the allowed keys. The corrector instances are not flat: DIRAC names a
** time slice by the CS section it lives in ("WeekSlice"), so an instance
** is an object whose object-valued members are its slices and whose
** scalar members are its options. That part is parsed by hand, in the
** file's own key order (jansson keeps insertion order), so the slices are
** shown in the order the operator wrote them.
**
** DIRAC's two spellings of the instance maximum are both accepted: the
** documentation and the seed write MaxGlobalCorrectionFactor, the code
** reads MaxGlobalCorrection (reference/dirac-code-facts.md §4.1); a file
** copied from either works, and giving both is an error rather than a
** silent preference.
*/
#include "explain/dirac_json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gb_error.h"
#include "base/jsonutil.h"

/* DIRAC's defaults (BaseHistoryCorrector, WMSHistoryCorrector). */
#define DJ_DEF_TIMESPAN 604800
#define DJ_DEF_WEIGHT 1.0
#define DJ_DEF_MAXCORR 3.0
#define DJ_DEF_MAXGLOBAL 5.0
#define DJ_CORRECTOR "WMSHistory"

/* Scalars first, then the sets in enum tq_field order (checked below and
** by the unit test against tq_field_names). */
const char *const dj_requirement_keys[] = {
	"ownerDN",   "ownerGroup", "setup",      "cpuTime",
	"sites",     "bannedSites", "gridCEs",   "platforms",
	"pilotTypes", "submitPools", "gridMiddlewares", "jobTypes", "tags",
	NULL};
#define DJ_NSCALAR 4
_Static_assert(sizeof(dj_requirement_keys) / sizeof(dj_requirement_keys[0]) ==
		       DJ_NSCALAR + TQ_NFIELDS + 1,
	       "one key per requirement");

int dj_has_config(json_t *root)
{
	return json_is_object(root) &&
	       (json_object_get(root, "groups") != NULL ||
		json_object_get(root, "shareCorrections") != NULL ||
		json_object_get(root, "cpuSegments") != NULL);
}

const struct pr_group *dj_group(const struct pr_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && name && i < cfg->ngroups; i++)
		if (strcmp(cfg->groups[i].name, name) == 0)
			return &cfg->groups[i];
	return NULL;
}

/* ---- groups ------------------------------------------------------------- */

static const struct ju_fld group_flds[] = {
	JU_TEXT("description"),
	JU_STR("name", struct pr_group, name, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_NUMF("share", struct pr_group, share, JU_F_REQ | JU_F_POS, 0,
		INFINITY, 0),
	JU_BOOL("jobSharing", struct pr_group, job_sharing),
	JU_FLD_END,
};

static int group_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	(void)key;
	return ju_parse_record(c, v, path, group_flds, NULL, elem);
}

static int parse_groups(const struct ju_ctx *c, json_t *v, struct pr_config *pr)
{
	void *g = NULL;
	if (v != NULL && json_is_null(v))
		return ju_fail(c, GB_ETYPE, "groups", "expected array, got null");
	int rc = ju_parse_items(c, v, "groups", 0, DJ_MAX_GROUPS,
				sizeof(struct pr_group), group_item, &g,
				&pr->ngroups);
	pr->groups = g;
	if (rc != GB_OK || pr->ngroups == 0)
		return rc;
	struct ju_nameref *refs = ju_alloc_n(c, pr->ngroups, sizeof(*refs));
	if (refs == NULL)
		return ju_fail(c, GB_ENOMEM, "groups", "out of memory");
	for (size_t i = 0; i < pr->ngroups; i++)
		refs[i] = (struct ju_nameref){pr->groups[i].name, i};
	return ju_dups(c, refs, pr->ngroups, "groups", ".name", "group");
}

/* ---- corrector instances ------------------------------------------------ */

static const struct ju_fld slice_flds[] = {
	JU_F("TimeSpan", JU_K_LLONG, 0, struct pr_slice, timespan, 1,
	     (double)CDT_MAX_TIME, DJ_DEF_TIMESPAN),
	JU_NUMF("Weight", struct pr_slice, weight, JU_F_POS, 0, INFINITY,
		DJ_DEF_WEIGHT),
	JU_NUM("MaxCorrection", struct pr_slice, max_correction, 1, INFINITY,
	       DJ_DEF_MAXCORR),
	JU_FLD_END,
};

/* The instance's scalar options: a record of their own. */
struct inst_opts {
	const char *group;
	double factor, code_name;
};
static const struct ju_fld inst_flds[] = {
	JU_STR("Group", struct inst_opts, group, JU_F_NONEMPTY, NULL),
	JU_NUMNULL("MaxGlobalCorrectionFactor", struct inst_opts, factor, 1,
		   INFINITY),
	JU_NUMNULL("MaxGlobalCorrection", struct inst_opts, code_name, 1,
		   INFINITY),
	JU_FLD_END,
};

static int parse_instance(const struct ju_ctx *c, json_t *v, const char *path,
			  const char *name, struct pr_instance *in)
{
	int rc = ju_want_object(c, v, path);
	if (rc != GB_OK)
		return rc;
	memset(in, 0, sizeof(*in));
	rc = ju_str_copy(c, name, strlen(name), path, 1, &in->name);
	if (rc != GB_OK)
		return rc;
	const char *key;
	json_t *x;
	char f[JU_PATH];
	/* Options are scalars, slices are objects: anything else is a typo. */
	json_object_foreach(v, key, x) {
		int is_opt = 0;
		for (const struct ju_fld *d = inst_flds; d->key; d++)
			is_opt |= strcmp(d->key, key) == 0;
		ju_path_key(f, sizeof(f), path, key);
		if (is_opt)
			continue;
		if (!json_is_object(x))
			return ju_fail(c, GB_EINVAL, f,
				       "unknown field (a time slice is an "
				       "object, got %s)",
				       ju_type_name(x));
		if (in->nslices == PR_MAX_SLICES)
			return ju_fail(c, GB_ETOOBIG, f,
				       "more than %d time slices",
				       PR_MAX_SLICES);
		struct pr_slice *s = &in->slices[in->nslices++];
		rc = ju_parse_record(c, x, f, slice_flds, NULL, s);
		if (rc == GB_OK)
			rc = ju_str_copy(c, key, strlen(key), f, 1, &s->name);
		if (rc != GB_OK)
			return rc;
	}
	if (in->nslices == 0)
		return ju_fail(c, GB_EMISSING, path,
			       "no time slice (an object such as "
			       "\"WeekSlice\": {\"TimeSpan\": 604800, "
			       "\"Weight\": 80, \"MaxCorrection\": 2})");
	struct inst_opts o = {0};
	for (const struct ju_fld *d = inst_flds; d->key && rc == GB_OK; d++)
		rc = ju_fld_parse(c, v, path, d, &o);
	if (rc != GB_OK)
		return rc;
	if (!isnan(o.factor) && !isnan(o.code_name)) {
		ju_path_key(f, sizeof(f), path, "MaxGlobalCorrection");
		return ju_fail(c, GB_EDUP, f,
			       "give MaxGlobalCorrectionFactor or "
			       "MaxGlobalCorrection, not both");
	}
	in->group = o.group;
	in->max_global = !isnan(o.factor)      ? o.factor
			 : !isnan(o.code_name) ? o.code_name
					       : DJ_DEF_MAXGLOBAL;
	return GB_OK;
}

static int parse_instances(const struct ju_ctx *c, json_t *v, const char *path,
			   struct pr_config *pr)
{
	pr->inst = NULL;
	pr->ninst = 0;
	if (v == NULL)
		return GB_OK;
	int rc = ju_want_object(c, v, path);
	if (rc != GB_OK)
		return rc;
	size_t n = json_object_size(v);
	if (n > PR_MAX_INSTANCES)
		return ju_fail(c, GB_ETOOBIG, path,
			       "%zu instances exceed the limit of %d", n,
			       PR_MAX_INSTANCES);
	if (n == 0)
		return GB_OK;
	struct pr_instance *in = ju_alloc_n(c, n, sizeof(*in));
	if (in == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	const char *key;
	json_t *x;
	size_t i = 0;
	char f[JU_PATH];
	json_object_foreach(v, key, x) {
		ju_path_key(f, sizeof(f), path, key);
		rc = parse_instance(c, x, f, key, &in[i]);
		if (rc != GB_OK)
			return rc;
		/* Two instances over the same entities would correct them
		** twice; DIRAC would run both, which is never what was
		** meant. */
		for (size_t k = 0; k < i; k++) {
			int same = in[k].group && in[i].group
					   ? strcmp(in[k].group, in[i].group) == 0
					   : in[k].group == in[i].group;
			if (!same)
				continue;
			if (in[i].group)
				return ju_fail(c, GB_EDUP, f,
					       "second instance for group "
					       "'%s' (also %s)",
					       in[i].group, in[k].name);
			return ju_fail(c, GB_EDUP, f,
				       "second instance between groups "
				       "(also %s)",
				       in[k].name);
		}
		i++;
	}
	pr->inst = in;
	pr->ninst = n;
	return GB_OK;
}

/* ShareCorrectorsToStart: DIRAC's CS writes a comma list as one string,
** JSON naturally an array; both name correctors, and only ours exists. */
static int parse_started(const struct ju_ctx *c, json_t *v, const char *path,
			 int *started)
{
	*started = 0;
	if (v == NULL || json_is_null(v))
		return GB_OK;
	const char *const *names = NULL;
	size_t n = 0;
	const char *one = NULL;
	int rc;
	if (json_is_string(v)) {
		rc = ju_str_value(c, v, path, 1, &one);
		names = &one;
		n = 1;
	} else {
		rc = ju_str_list(c, v, path, 16, 1, &names, &n);
	}
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		if (strcmp(names[i], DJ_CORRECTOR) == 0) {
			*started = 1;
			continue;
		}
		char f[JU_PATH];
		if (one)
			snprintf(f, sizeof(f), "%s", path);
		else
			ju_path_idx(f, sizeof(f), path, i);
		return ju_fail(c, GB_ERANGE, f,
			       "unknown corrector '%.64s' (expected \"%s\")",
			       names[i], DJ_CORRECTOR);
	}
	return rc;
}

struct corr_head {
	int enabled;
};
static const struct ju_fld corr_flds[] = {
	JU_TEXT("description"),
	JU_F("enabled", JU_K_BOOL, JU_F_REQ, struct corr_head, enabled, 0, 0,
	     0),
	JU_FLD_END,
};
static const char *const corr_extra[] = {"ShareCorrectorsToStart",
					 DJ_CORRECTOR, NULL};

static int parse_corrections(const struct ju_ctx *c, json_t *v,
			     struct dj_config *out)
{
	static const char path[] = "shareCorrections";
	if (v == NULL)
		return GB_OK;
	struct corr_head h = {0};
	int rc = ju_parse_record(c, v, path, corr_flds, corr_extra, &h);
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "ShareCorrectorsToStart");
	if (rc == GB_OK)
		rc = parse_started(c, json_object_get(v, "ShareCorrectorsToStart"),
				   f, &out->started);
	ju_path_key(f, sizeof(f), path, DJ_CORRECTOR);
	if (rc == GB_OK)
		rc = parse_instances(c, json_object_get(v, DJ_CORRECTOR), f,
				     &out->pr);
	out->pr.corrections = rc == GB_OK && h.enabled && out->started;
	return rc;
}

/* ---- CPU segments (TQ-02) ---------------------------------------------- */

static int parse_segments(const struct ju_ctx *c, json_t *v,
			  struct dj_config *out)
{
	static const char path[] = "cpuSegments";
	if (v == NULL) {
		size_t n = sizeof(tq_default_segments) /
			   sizeof(tq_default_segments[0]);
		out->seg = ju_alloc_n(c, n, sizeof(*out->seg));
		if (out->seg == NULL)
			return ju_fail(c, GB_ENOMEM, path, "out of memory");
		memcpy(out->seg, tq_default_segments, sizeof(tq_default_segments));
		out->nseg = n;
		return GB_OK;
	}
	int rc = ju_want_array(c, v, path, TQ_MAX_SEGMENTS);
	if (rc != GB_OK)
		return rc;
	size_t n = json_array_size(v);
	if (n == 0)
		return ju_fail(c, GB_ERANGE, path,
			       "expected at least one segment");
	out->seg = ju_alloc_n(c, n, sizeof(*out->seg));
	if (out->seg == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char f[JU_PATH];
		ju_path_idx(f, sizeof(f), path, i);
		json_t *x = json_array_get(v, i);
		if (!json_is_integer(x))
			return ju_fail(c, GB_ETYPE, f,
				       "expected integer, got %s",
				       ju_type_name(x));
		long long s = json_integer_value(x);
		if (s < 1 || s > CDT_MAX_CPU)
			return ju_fail(c, GB_ERANGE, f,
				       "expected an integer in [1, %lld], "
				       "got %lld",
				       CDT_MAX_CPU, s);
		/* a job is rounded up to the first segment >= its time, which
		** needs the list in order */
		if (i > 0 && s <= out->seg[i - 1])
			return ju_fail(c, GB_ERANGE, f,
				       "expected more than %lld (segments "
				       "strictly increase), got %lld",
				       out->seg[i - 1], s);
		out->seg[i] = s;
	}
	out->nseg = n;
	return GB_OK;
}

int dj_parse_config(json_t *root, struct arena *a, struct dj_config *out,
		    char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	out->pr.default_share = PR_DEFAULT_SHARE;
	int rc = ju_want_object(&c, root, "");
	if (rc == GB_OK)
		rc = parse_groups(&c, json_object_get(root, "groups"), &out->pr);
	if (rc == GB_OK)
		rc = parse_corrections(
			&c, json_object_get(root, "shareCorrections"), out);
	if (rc == GB_OK)
		rc = parse_segments(&c, json_object_get(root, "cpuSegments"),
				    out);
	if (rc != GB_OK)
		return rc;
	/* The engine's own check is the last word; everything it can refuse
	** should have been named above with its path. */
	char msg[256] = "";
	if (pr_config_check(&out->pr, msg, sizeof(msg)) != GB_OK)
		return ju_fail(&c, GB_EINVAL, "", "%s", msg);
	if (!tq_segments_valid(out->seg, out->nseg))
		return ju_fail(&c, GB_EINVAL, "cpuSegments", "not usable");
	return GB_OK;
}

/* ---- requirements, jobs ---------------------------------------------- */

#define J struct cdt_job
static const struct ju_fld req_flds[] = {
	JU_STR("ownerDN", J, owner, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("ownerGroup", J, owner_group, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("setup", J, setup, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_F("cpuTime", JU_K_LLONG, JU_F_REQ, J, cpu_time, 1,
	     (double)CDT_MAX_CPU, 0),
	JU_FLD_END,
};
#undef J

/* Where a JU_K_LIST row writes; copied into tq_strset afterwards. */
struct set_tmp {
	const char *const *v;
	size_t n;
};

int dj_parse_requirements(json_t *obj, const char *path, struct arena *a,
			  struct cdt_job *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	int rc = ju_want_object(&c, obj, path);
	for (const struct ju_fld *d = req_flds; d->key && rc == GB_OK; d++)
		rc = ju_fld_parse(&c, obj, path, d, out);
	for (size_t f = 0; f < TQ_NFIELDS && rc == GB_OK; f++) {
		struct ju_fld d = {
			.key = tq_field_names[f],
			.kind = JU_K_LIST,
			.flags = JU_F_NONEMPTY,
			.off = offsetof(struct set_tmp, v),
			.off2 = offsetof(struct set_tmp, n),
			.max = CDT_MAX_SET,
		};
		struct set_tmp t = {NULL, 0};
		rc = ju_fld_parse(&c, obj, path, &d, &t);
		/* The array is our own arena memory; the const is only
		** ju_str_list's reading interface, and normalising sorts it
		** in place. */
		out->set[f].v = (const char **)(uintptr_t)t.v;
		out->set[f].n = t.n;
		if (rc == GB_OK && t.n > 1)
			tq_strset_normalise(out->set[f].v, &out->set[f].n);
	}
	return rc;
}

/* The job's own fields; userPriority as a long (the table's integer). */
struct job_head {
	long long job_id;
	long prio;
};
static const struct ju_fld job_flds[] = {
	JU_TEXT("description"),
	JU_LLNG("jobID", struct job_head, job_id, JU_F_REQ, 1),
	JU_LNG("userPriority", struct job_head, prio, TQ_MIN_PRIORITY,
	       TQ_MAX_PRIORITY, 1),
	JU_FLD_END,
};

int dj_parse_job(json_t *obj, const char *path, struct arena *a,
		 struct cdt_job *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	struct job_head h = {0, 1};
	int rc = ju_parse_record(&c, obj, path, job_flds, dj_requirement_keys,
				 &h);
	struct cdt_job j;
	memset(&j, 0, sizeof(j));
	if (rc == GB_OK)
		rc = dj_parse_requirements(obj, path, a, &j, err, errlen);
	if (rc != GB_OK)
		return rc;
	j.job_id = h.job_id;
	j.user_priority = (int)h.prio;
	*out = j;
	return GB_OK;
}

static int job_item(const struct ju_ctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	(void)key;
	return dj_parse_job(v, path, c->a, elem, c->err, c->errlen);
}

int dj_parse_jobs(json_t *arr, const char *path, struct arena *a,
		  struct cdt_job **out, size_t *n, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || n == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	*out = NULL;
	*n = 0;
	if (arr == NULL)
		return ju_fail(&c, GB_EMISSING, path, "missing");
	int rc = ju_want_array(&c, arr, path, DJ_MAX_JOBS);
	if (rc == GB_OK && json_array_size(arr) == 0)
		return ju_fail(&c, GB_ERANGE, path, "expected at least one job");
	void *jobs = NULL;
	size_t cnt = 0;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, arr, path, 0, DJ_MAX_JOBS,
				    sizeof(struct cdt_job), job_item, &jobs,
				    &cnt);
	if (rc != GB_OK)
		return rc;
	struct cdt_job *js = jobs;
	struct ju_nameref *ids = ju_alloc_n(&c, cnt, sizeof(*ids));
	if (ids == NULL)
		return ju_fail(&c, GB_ENOMEM, path, "out of memory");
	for (size_t i = 0; i < cnt; i++) {
		/* as text, so the duplicate check is the one for names */
		char id[24];
		snprintf(id, sizeof(id), "%lld", js[i].job_id);
		ids[i] = (struct ju_nameref){arena_strdup(a, id), i};
		if (ids[i].name == NULL)
			return ju_fail(&c, GB_ENOMEM, path, "out of memory");
	}
	rc = ju_dups(&c, ids, cnt, path, ".jobID", "jobID");
	if (rc != GB_OK)
		return rc;
	*out = js;
	*n = cnt;
	return GB_OK;
}

/* ---- pilots ------------------------------------------------------------- */

#define P struct cdt_pilot
static const struct ju_fld pilot_flds[] = {
	JU_TEXT("description"),
	JU_STR("pilotID", P, pilot_id, JU_F_NONEMPTY, NULL),
	JU_STR("setup", P, d.setup, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_F("cpuTime", JU_K_LLONG, JU_F_REQ, P, d.cpu_time, 1,
	     (double)CDT_MAX_CPU, 0),
	JU_FLD_END,
};
#undef P

/* The list keys of a pilot, as pilot.match names them. */
static const char *const pilot_list_keys[] = {
	"site",		   "gridCE",	    "platform",	      "pilotType",
	"jobType",	   "tags",	    "bannedSite",     "bannedGridCE",
	"bannedPlatform",  "bannedPilotType", "bannedJobType", "bannedTag",
	"requiredTags",	   "ownerGroup",    "ownerDN",	      NULL};

static struct tq_strset *pilot_list(struct cdt_pilot *p, size_t k)
{
	if (k < TQ_NPFIELDS)
		return &p->d.want[k];
	if (k < 2 * TQ_NPFIELDS)
		return &p->d.banned[k - TQ_NPFIELDS];
	return k == 2 * TQ_NPFIELDS	    ? &p->d.required
	       : k == 2 * TQ_NPFIELDS + 1 ? &p->d.groups
					  : &p->d.owners;
}

/* One list: absent or null (nothing), a non-empty string, or an array of
** at most TQ_MAX_PILOT_VALUES of them, as pilot.match takes it. */
static int parse_list(const struct ju_ctx *c, json_t *obj, const char *path,
		      const char *key, struct tq_strset *out)
{
	json_t *v = json_object_get(obj, key);
	*out = (struct tq_strset){NULL, 0};
	if (v == NULL || json_is_null(v))
		return GB_OK;
	struct set_tmp t = {NULL, 0};
	struct ju_fld d = {.key = key, .flags = JU_F_NONEMPTY};
	if (json_is_string(v)) {
		const char *one = NULL;
		d.kind = JU_K_STR;
		d.off = 0;
		int rc = ju_fld_parse(c, obj, path, &d, &one);
		const char **arr = ju_alloc_n(c, 1, sizeof(*arr));
		if (rc != GB_OK)
			return rc;
		if (arr == NULL)
			return ju_fail(c, GB_ENOMEM, path, "out of memory");
		arr[0] = one;
		*out = (struct tq_strset){arr, 1};
		return GB_OK;
	}
	if (!json_is_array(v)) {
		char f[JU_PATH];
		ju_path_key(f, sizeof(f), path, key);
		return ju_fail(c, GB_ETYPE, f, "expected string or array, got %s",
			       ju_type_name(v));
	}
	d.kind = JU_K_LIST;
	d.off = offsetof(struct set_tmp, v);
	d.off2 = offsetof(struct set_tmp, n);
	d.max = TQ_MAX_PILOT_VALUES;
	int rc = ju_fld_parse(c, obj, path, &d, &t);
	/* our own arena memory; the const is ju_str_list's interface */
	*out = (struct tq_strset){(const char **)(uintptr_t)t.v, t.n};
	return rc;
}

int dj_parse_pilot(json_t *obj, const char *path, struct arena *a,
		   struct cdt_pilot *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	struct cdt_pilot p;
	memset(&p, 0, sizeof(p));
	int rc = ju_parse_record(&c, obj, path, pilot_flds, pilot_list_keys,
				 &p);
	for (size_t k = 0; rc == GB_OK && pilot_list_keys[k]; k++)
		rc = parse_list(&c, obj, path, pilot_list_keys[k],
				pilot_list(&p, k));
	if (rc != GB_OK)
		return rc;
	/* The rules of pilot.match (ANY, ownerDN needs ownerGroup, required
	** tags among the tags), with the decoder's own words. */
	struct cod_error ce;
	memset(&ce, 0, sizeof(ce));
	rc = cdt_pilot_settle(&p, &ce);
	if (rc != GB_OK) {
		char f[JU_PATH];
		ju_path_key(f, sizeof(f), path, ce.field);
		return ju_fail(&c, rc, f, "%s", ce.problem);
	}
	*out = p;
	return GB_OK;
}
