/*
** scenario_match.c — DIRAC match scenarios: parsing, scm_run (the path
** `explain` matches a pilot by), the result as JSON and the table of every
** task queue (declared in scenario_match.h). The pilot's own verdict is
** its decision record's, printed by report/render.h.
**
** Why scm_run goes through the index rather than building tq_view arrays
** itself: the index is what the worker matches against (tqindex.h), and
** the point of `explain` is that what an operator sees is what the fleet
** does. Interning, the per-priority job levels, the tq_id order of the
** views, the UserPriority sums that feed pr_recompute: all of it is the
** worker's code, so a bug there shows here too instead of being papered
** over by a second implementation.
**
** What is added on top is only presentation: the names of the values a
** filter compared (the engine's reasons carry interned ids, not names, so
** the TQ-10 reply stays allocation-free), and the corrector's per-slice
** corrections, recomputed with pr_correct on the same entities and usage
** pr_recompute uses (groups with waiting jobs between groups, owners with
** waiting jobs inside a group; pr_usage over each slice's window), since
** pr_recompute reports only each TQ's final factors.
*/
#include "explain/scenario_match.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "base/jsonutil.h"
#include "report/record.h"
#include "rng.h"
#include "model/decide.h"
#include "model/tqindex.h"
#include "report/render.h"

#define SCM_LIST_SHOW 4  /* set values named in a reason */
#define SCM_OWNER_W 14   /* owner column of the table */

/* ---- parsing ----------------------------------------------------------- */

int scm_is_match_scenario(json_t *root)
{
	return json_is_object(root) &&
	       json_object_get(root, "taskQueues") != NULL;
}

struct job_rec {
	long long job_id;
	long prio;
};
static const struct ju_fld job_flds[] = {
	JU_TEXT("description"),
	JU_LLNG("jobID", struct job_rec, job_id, JU_F_REQ, 1),
	JU_LNG("userPriority", struct job_rec, prio, TQ_MIN_PRIORITY,
	       TQ_MAX_PRIORITY, 1),
	JU_FLD_END,
};

static int job_item(const struct ju_ctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	(void)key;
	struct job_rec r = {0, 1};
	int rc = ju_parse_record(c, v, path, job_flds, NULL, &r);
	*(struct scm_job *)elem = (struct scm_job){r.job_id, (int)r.prio};
	return rc;
}

/* "jobsByPriority": {"1": 300, "5": 20}; ids id x SCM_GEN_BASE + 1, ... in
** ascending priority, whatever order the keys are written in. */
static int parse_by_priority(const struct ju_ctx *c, json_t *v,
			     const char *path, struct scm_tq *t)
{
	int rc = ju_want_object(c, v, path);
	if (rc != GB_OK)
		return rc;
	long long count[TQ_MAX_PRIORITY + 1] = {0}, total = 0;
	const char *key;
	json_t *x;
	json_object_foreach(v, key, x) {
		char f[JU_PATH];
		ju_path_qkey(f, sizeof(f), path, key);
		char *end = NULL;
		long p = strtol(key, &end, 10);
		if (key[0] < '0' || key[0] > '9' || *end != '\0' ||
		    p < TQ_MIN_PRIORITY || p > TQ_MAX_PRIORITY)
			return ju_fail(c, GB_ERANGE, f,
				       "expected a UserPriority %d..%d as the "
				       "key",
				       TQ_MIN_PRIORITY, TQ_MAX_PRIORITY);
		if (!json_is_integer(x))
			return ju_fail(c, GB_ETYPE, f,
				       "expected integer, got %s",
				       ju_type_name(x));
		long long n = json_integer_value(x);
		if (n < 0 || n >= SCM_GEN_BASE - total)
			return ju_fail(c, GB_ERANGE, f,
				       "expected a job count in [0, %lld], "
				       "got %lld",
				       SCM_GEN_BASE - 1 - total, n);
		count[p] = n;
		total += n;
	}
	t->njobs = (size_t)total;
	if (total == 0)
		return GB_OK;
	t->jobs = ju_alloc_n(c, t->njobs, sizeof(*t->jobs));
	if (t->jobs == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	long long k = 0;
	for (int p = TQ_MIN_PRIORITY; p <= TQ_MAX_PRIORITY; p++)
		for (long long i = 0; i < count[p]; i++, k++)
			t->jobs[k] = (struct scm_job){
				t->tq_id * SCM_GEN_BASE + k + 1, p};
	return GB_OK;
}

struct tq_head {
	long long id;
	const char *description;
	double priority; /* NAN when absent or null */
};
static const struct ju_fld tq_flds[] = {
	JU_F("id", JU_K_LLONG, JU_F_REQ, struct tq_head, id, 1,
	     (double)SCM_MAX_TQ_ID, 0),
	JU_STR("description", struct tq_head, description, 0, NULL),
	JU_NUMNULL("priority", struct tq_head, priority, 0, INFINITY),
	JU_FLD_END,
};

static int parse_tq(const struct ju_ctx *c, const struct dj_config *cfg,
		    json_t *v, const char *path, struct scm_tq *t)
{
	const char *extra[32];
	size_t ne = 0;
	for (; dj_requirement_keys[ne] && ne < sizeof(extra) / sizeof(*extra) - 3;
	     ne++)
		extra[ne] = dj_requirement_keys[ne];
	extra[ne++] = "jobs";
	extra[ne++] = "jobsByPriority";
	extra[ne] = NULL;
	struct tq_head h = {0, NULL, NAN};
	memset(t, 0, sizeof(*t));
	int rc = ju_parse_record(c, v, path, tq_flds, extra, &h);
	if (rc == GB_OK)
		rc = dj_parse_requirements(v, path, c->a, &t->def, c->err,
					   c->errlen);
	if (rc != GB_OK)
		return rc;
	t->tq_id = h.id;
	t->description = h.description;
	t->has_priority = !isnan(h.priority);
	t->priority = t->has_priority ? h.priority : 0;
	t->segment = tq_cpu_segment(t->def.cpu_time, cfg->seg, cfg->nseg);
	json_t *jobs = json_object_get(v, "jobs");
	json_t *byp = json_object_get(v, "jobsByPriority");
	char f[JU_PATH];
	if (jobs && byp) {
		ju_path_key(f, sizeof(f), path, "jobsByPriority");
		return ju_fail(c, GB_EINVAL, f,
			       "give jobs or jobsByPriority, not both");
	}
	if (byp) {
		ju_path_key(f, sizeof(f), path, "jobsByPriority");
		return parse_by_priority(c, byp, f, t);
	}
	ju_path_key(f, sizeof(f), path, "jobs");
	void *arr = NULL;
	rc = ju_parse_items(c, jobs, f, 0, SCM_GEN_BASE - 1,
			    sizeof(struct scm_job), job_item, &arr, &t->njobs);
	t->jobs = arr;
	return rc;
}

/* A job id with where it came from, for the duplicate check. */
struct job_ref {
	long long id;
	size_t tq, job;
};

static int job_ref_cmp(const void *x, const void *y)
{
	const struct job_ref *a = x, *b = y;
	if (a->id != b->id)
		return (a->id > b->id) - (a->id < b->id);
	if (a->tq != b->tq)
		return (a->tq > b->tq) - (a->tq < b->tq);
	return (a->job > b->job) - (a->job < b->job);
}

static int check_job_ids(const struct ju_ctx *c, const struct scm_scenario *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->ntqs; i++)
		n += s->tqs[i].njobs;
	if (n > SCM_MAX_JOBS)
		return ju_fail(c, GB_ETOOBIG, "taskQueues",
			       "%zu waiting jobs exceed the limit of %d", n,
			       SCM_MAX_JOBS);
	if (n < 2)
		return GB_OK;
	struct job_ref *r = malloc(n * sizeof(*r));
	if (r == NULL)
		return ju_fail(c, GB_ENOMEM, "taskQueues", "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < s->ntqs; i++)
		for (size_t j = 0; j < s->tqs[i].njobs; j++)
			r[k++] = (struct job_ref){s->tqs[i].jobs[j].job_id, i, j};
	qsort(r, n, sizeof(*r), job_ref_cmp);
	int rc = GB_OK;
	for (size_t i = 1; i < n && rc == GB_OK; i++) {
		if (r[i].id != r[i - 1].id)
			continue;
		/* a generated id has no "jobs[j]" to point at */
		char f[JU_PATH];
		snprintf(f, sizeof(f), "taskQueues[%zu]", r[i].tq);
		rc = ju_fail(c, GB_EDUP, f,
			     "job %lld is also in taskQueues[%zu] (a waiting "
			     "job is in one task queue)",
			     r[i].id, r[i - 1].tq);
	}
	free(r);
	return rc;
}

/* TQ-01: two TQs with one canonical signature would be one TQ. */
static int check_signatures(const struct ju_ctx *c,
			    const struct scm_scenario *s)
{
	if (s->ntqs < 2)
		return GB_OK;
	struct ju_nameref *refs = ju_alloc_n(c, s->ntqs, sizeof(*refs));
	if (refs == NULL)
		return ju_fail(c, GB_ENOMEM, "taskQueues", "out of memory");
	for (size_t i = 0; i < s->ntqs; i++) {
		const struct scm_tq *t = &s->tqs[i];
		struct tq_def d = {t->def.owner, t->def.owner_group,
				   t->def.setup, t->segment, {{0}}};
		size_t len = 256 + strlen(d.owner) + strlen(d.owner_group) +
			     strlen(d.setup);
		for (int f = 0; f < TQ_NFIELDS; f++) {
			d.set[f] = t->def.set[f];
			for (size_t k = 0; k < d.set[f].n; k++)
				len += strlen(d.set[f].v[k]) + 24;
		}
		char *buf = arena_alloc(c->a, len);
		size_t out = 0;
		if (buf == NULL)
			return ju_fail(c, GB_ENOMEM, "taskQueues",
				       "out of memory");
		if (tq_canon(&d, buf, len, &out) != GB_OK)
			return ju_fail(c, GB_EINVAL, "taskQueues",
				       "no signature for id %lld", t->tq_id);
		refs[i] = (struct ju_nameref){buf, i};
	}
	qsort(refs, s->ntqs, sizeof(*refs), ju_nameref_cmp);
	for (size_t i = 1; i < s->ntqs; i++) {
		if (strcmp(refs[i].name, refs[i - 1].name) != 0)
			continue;
		char f[JU_PATH];
		ju_path_idx(f, sizeof(f), "taskQueues", refs[i].idx);
		return ju_fail(c, GB_EDUP, f,
			       "same requirements and CPU segment as "
			       "taskQueues[%zu] (TQ-01: they would be one "
			       "task queue)",
			       refs[i - 1].idx);
	}
	return GB_OK;
}

/* Stored priorities are the leader's for the whole index: a file that
** gives some TQs theirs and leaves the others to a recomputation would
** mix two moments, so it is every TQ or none. */
static int check_priorities(const struct ju_ctx *c,
			    const struct scm_scenario *s)
{
	for (size_t i = 1; i < s->ntqs; i++) {
		if (s->tqs[i].has_priority == s->tqs[0].has_priority)
			continue;
		char p[JU_PATH], f[JU_PATH];
		ju_path_idx(p, sizeof(p), "taskQueues", i);
		ju_path_key(f, sizeof(f), p, "priority");
		if (s->tqs[0].has_priority)
			return ju_fail(c, GB_EMISSING, f,
				       "missing (taskQueues[0] has one: give "
				       "every task queue a priority or none)");
		return ju_fail(c, GB_EINVAL, f,
			       "taskQueues[0] has none: give every task queue "
			       "a priority or none");
	}
	return GB_OK;
}

static int parse_tqs(const struct ju_ctx *c, json_t *v, struct scm_scenario *s)
{
	static const char path[] = "taskQueues";
	if (v == NULL)
		return ju_fail(c, GB_EMISSING, path, "missing");
	int rc = ju_want_array(c, v, path, SCM_MAX_TQS);
	if (rc != GB_OK)
		return rc;
	s->ntqs = json_array_size(v);
	s->tqs = s->ntqs ? ju_alloc_n(c, s->ntqs, sizeof(*s->tqs)) : NULL;
	if (s->ntqs && s->tqs == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	struct ju_nameref *ids =
		s->ntqs ? ju_alloc_n(c, s->ntqs, sizeof(*ids)) : NULL;
	if (s->ntqs && ids == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	for (size_t i = 0; i < s->ntqs; i++) {
		char f[JU_PATH], id[24];
		ju_path_idx(f, sizeof(f), path, i);
		rc = parse_tq(c, &s->cfg, json_array_get(v, i), f, &s->tqs[i]);
		if (rc != GB_OK)
			return rc;
		snprintf(id, sizeof(id), "%lld", s->tqs[i].tq_id);
		ids[i] = (struct ju_nameref){arena_strdup(c->a, id), i};
		if (ids[i].name == NULL)
			return ju_fail(c, GB_ENOMEM, path, "out of memory");
	}
	rc = ju_dups(c, ids, s->ntqs, path, ".id", "task queue id");
	if (rc == GB_OK)
		rc = check_priorities(c, s);
	if (rc == GB_OK)
		rc = check_signatures(c, s);
	if (rc == GB_OK)
		rc = check_job_ids(c, s);
	return rc;
}

struct hist_rec {
	long long age;
	const char *group, *owner;
	double running;
};
static const struct ju_fld hist_flds[] = {
	JU_TEXT("description"),
	JU_F("age", JU_K_LLONG, JU_F_REQ, struct hist_rec, age, 0,
	     (double)CDT_MAX_TIME, 0),
	JU_STR("ownerGroup", struct hist_rec, group, JU_F_REQ | JU_F_NONEMPTY,
	       NULL),
	JU_STR("ownerDN", struct hist_rec, owner, JU_F_NONEMPTY, ""),
	JU_NUMF("running", struct hist_rec, running, JU_F_REQ, 0, INFINITY, 0),
	JU_FLD_END,
};

static int hist_item(const struct ju_ctx *c, json_t *v, const char *path,
		     const char *key, void *elem)
{
	(void)key;
	struct hist_rec h = {0, NULL, "", 0};
	int rc = ju_parse_record(c, v, path, hist_flds, NULL, &h);
	*(struct pr_sample *)elem =
		(struct pr_sample){c->now - h.age, h.group, h.owner, h.running};
	return rc;
}

static const char *const scenario_keys[] = {
	"groups", "shareCorrections", "cpuSegments", "taskQueues", "history",
	"pilot", NULL};

int scm_parse_scenario(json_t *root, struct arena *a, struct scm_scenario *out,
		       char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	int rc = ju_scenario_begin(&c, root, out, sizeof(*out));
	if (rc != GB_OK)
		return rc;
	rc = ju_scenario_head(&c, root, scenario_keys, &out->now, &out->seed);
	if (rc == GB_OK)
		rc = dj_parse_config(root, a, &out->cfg, err, errlen);
	if (rc == GB_OK)
		rc = parse_tqs(&c, json_object_get(root, "taskQueues"), out);
	c.now = out->now;
	void *h = NULL;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "history"),
				    "history", 0, SCM_MAX_HISTORY,
				    sizeof(struct pr_sample), hist_item, &h,
				    &out->nhist);
	out->hist = h;
	json_t *p = json_object_get(root, "pilot");
	if (rc == GB_OK && p == NULL)
		return ju_fail(&c, GB_EMISSING, "pilot", "missing");
	if (rc == GB_OK)
		rc = dj_parse_pilot(p, "pilot", a, &out->pilot, err, errlen);
	return rc;
}

/* ---- running ------------------------------------------------------------- */

static int tq_ptr_cmp(const void *x, const void *y)
{
	const struct scm_tq *a = *(const struct scm_tq *const *)x;
	const struct scm_tq *b = *(const struct scm_tq *const *)y;
	return (a->tq_id > b->tq_id) - (a->tq_id < b->tq_id);
}

/* "a, b, c, d, ... (+3)" of a set, "none" for an empty one. */
static void set_text(char *buf, size_t n, const struct tq_strset *s)
{
	size_t used = 0;
	buf[0] = '\0';
	if (s->n == 0)
		snprintf(buf, n, "none");
	for (size_t i = 0; i < s->n && i < SCM_LIST_SHOW && used < n; i++) {
		int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
				 s->v[i]);
		used += w > 0 ? (size_t)w : 0;
	}
	if (s->n > SCM_LIST_SHOW && used < n)
		snprintf(buf + used, n - used, ", ... (+%zu)",
			 s->n - SCM_LIST_SHOW);
}

static int has_str(const struct tq_strset *l, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], v) == 0)
			return 1;
	return 0;
}

/* The first value of `sub` not in `sup`, or NULL. */
static const char *first_missing(const struct tq_strset *sub,
				 const struct tq_strset *sup)
{
	for (size_t i = 0; i < sub->n; i++)
		if (!has_str(sup, sub->v[i]))
			return sub->v[i];
	return NULL;
}

/*
** The engine's reason with the names it compared (it holds ids): which
** values of the pilot met which value or set of the TQ, and for tags the
** tag that rejected it.
*/
static const char *render_detail(struct arena *a, const struct scm_tq *t,
				 const struct cdt_pilot *p, int f,
				 const struct dec_reason *rs)
{
	char text[256], set[384], mine[384], names[900];
	dec_reason_format(rs, text, sizeof(text));
	const struct tqi_pilot *d = &p->d;
	const struct tq_strset *tags = &t->def.set[TQ_F_TAGS];
	const char *miss;
	int pf = -1;
	switch ((enum tq_filter_id)f) {
	case TQ_FL_OWNER_GROUP:
		set_text(mine, sizeof(mine), &d->groups);
		snprintf(names, sizeof(names), "TQ group %s, pilot's %s",
			 t->def.owner_group, mine);
		goto done;
	case TQ_FL_OWNER_DN:
		set_text(mine, sizeof(mine), &d->owners);
		snprintf(names, sizeof(names), "TQ owner %s, pilot's %s",
			 t->def.owner, mine);
		goto done;
	case TQ_FL_SETUP:
		snprintf(names, sizeof(names), "TQ setup %s, pilot's %s",
			 t->def.setup, d->setup);
		goto done;
	case TQ_FL_CPU_TIME:
		snprintf(names, sizeof(names), "segment of cpuTime %lld s",
			 t->def.cpu_time);
		goto done;
	case TQ_FL_REQUIRED_TAG:
		miss = first_missing(&d->required, tags);
		set_text(set, sizeof(set), tags);
		snprintf(names, sizeof(names),
			 "tag %s required by the pilot; TQ tags: %s",
			 miss ? miss : "?", set);
		goto done;
	case TQ_FL_TAG:
		miss = first_missing(tags, &d->want[TQ_P_TAG]);
		set_text(mine, sizeof(mine), &d->want[TQ_P_TAG]);
		snprintf(names, sizeof(names),
			 "tag %s not offered; pilot's tags: %s",
			 miss ? miss : "?", mine);
		goto done;
	case TQ_FL_BANNED_SITE:
		set_text(mine, sizeof(mine), &d->want[TQ_P_SITE]);
		set_text(set, sizeof(set), &t->def.set[TQ_F_BANNED_SITES]);
		snprintf(names, sizeof(names),
			 "pilot's sites %s; TQ bannedSites: %s", mine, set);
		goto done;
	case TQ_FL_PILOT_TYPE:
		pf = TQ_P_PILOT_TYPE;
		break;
	case TQ_FL_SITE:
		pf = TQ_P_SITE;
		break;
	case TQ_FL_GRID_CE:
		pf = TQ_P_GRID_CE;
		break;
	case TQ_FL_PLATFORM:
		pf = TQ_P_PLATFORM;
		break;
	case TQ_FL_JOB_TYPE:
		pf = TQ_P_JOB_TYPE;
		break;
	case TQ_FL_BAN_SITE:
	case TQ_FL_BAN_GRID_CE:
	case TQ_FL_BAN_PLATFORM:
	case TQ_FL_BAN_PILOT_TYPE:
	case TQ_FL_BAN_JOB_TYPE:
	case TQ_FL_BAN_TAG:
		pf = f - TQ_FL_BAN_SITE;
		set_text(mine, sizeof(mine), &d->banned[pf]);
		set_text(set, sizeof(set), &t->def.set[tq_pfield_set[pf]]);
		snprintf(names, sizeof(names), "pilot's %s %s; TQ %s: %s",
			 tq_pfield_ban_names[pf], mine,
			 tq_field_names[tq_pfield_set[pf]], set);
		goto done;
	case TQ_NFILTERS:
		return NULL;
	}
	set_text(mine, sizeof(mine), &d->want[pf]);
	set_text(set, sizeof(set), &t->def.set[tq_pfield_set[pf]]);
	snprintf(names, sizeof(names), "pilot's %s %s; TQ %s: %s",
		 tq_pfield_names[pf], mine, tq_field_names[tq_pfield_set[pf]],
		 set);
done:;
	size_t len = strlen(text) + strlen(names) + 4;
	char *out = arena_alloc(a, len);
	if (out)
		snprintf(out, len, "%s (%s)", text, names);
	return out;
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
** The entities of instance `in`, as pr_recompute forms them: between
** groups, every group with waiting jobs (its configured share); inside a
** group, every owner of it with waiting jobs (equal shares). Sorted by
** name and unique.
*/
static int correction(const struct scm_scenario *s, struct arena *a,
		      const struct scm_result *r, const struct pr_instance *in,
		      struct scm_correction *out)
{
	memset(out, 0, sizeof(*out));
	out->inst = in;
	const struct pr_group *g = dj_group(&s->cfg.pr, in->group);
	if (in->group && g && g->job_sharing) {
		out->ignored = 1;
		return GB_OK;
	}
	const char **names = arena_alloc(a, (r->nrows + 1) * sizeof(*names));
	if (names == NULL)
		return GB_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct pr_tq *t = &r->rows[i].pr;
		if (t->njobs == 0)
			continue;
		if (in->group == NULL)
			names[n++] = t->owner_group;
		else if (strcmp(t->owner_group, in->group) == 0)
			names[n++] = t->owner;
	}
	qsort(names, n, sizeof(*names), name_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(names[u - 1], names[i]) != 0)
			names[u++] = names[i];
	if (u == 0)
		return GB_OK;
	out->ents = arena_alloc(a, u * sizeof(*out->ents));
	if (out->ents == NULL)
		return GB_ENOMEM;
	out->nents = u;
	for (size_t i = 0; i < u; i++) {
		struct pr_entity *e = &out->ents[i];
		const struct pr_group *eg = dj_group(&s->cfg.pr, names[i]);
		e->name = names[i];
		e->share = in->group ? 1.0
			   : eg      ? eg->share
				     : s->cfg.pr.default_share;
		for (size_t k = 0; k < in->nslices; k++)
			e->usage[k] = pr_usage(
				s->hist, s->nhist, s->now,
				in->slices[k].timespan,
				in->group ? in->group : names[i],
				in->group ? names[i] : NULL);
	}
	return pr_correct(in, out->ents, out->nents);
}

/* One row per TQ, in the index's (tq_id) order, paired with the
** scenario's TQ and holding the index's statistics; rows in the arena. */
static int fill_rows(const struct scm_scenario *s, struct arena *a,
		     struct tqi_index *x, struct scm_result *out)
{
	size_t n = tqi_ntqs(x);
	if (n != s->ntqs)
		return GB_EINVAL; /* the index lost or invented a TQ */
	const struct scm_tq **by_id = arena_alloc(a, (n + 1) * sizeof(*by_id));
	out->rows = arena_alloc(a, (n + 1) * sizeof(*out->rows));
	struct pr_tq *st = arena_alloc(a, (n + 1) * sizeof(*st));
	if (by_id == NULL || out->rows == NULL || st == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < s->ntqs; i++)
		by_id[i] = &s->tqs[i];
	qsort(by_id, s->ntqs, sizeof(*by_id), tq_ptr_cmp);
	tqi_stats(x, st);
	for (size_t i = 0; i < n; i++) {
		if (by_id[i]->tq_id != st[i].tq_id)
			return GB_EINVAL;
		/* the scenario's strings outlive the index */
		st[i].owner = by_id[i]->def.owner;
		st[i].owner_group = by_id[i]->def.owner_group;
		out->rows[i] = (struct scm_row){.tq = by_id[i], .pr = st[i]};
	}
	out->nrows = n;
	return GB_OK;
}

static int run_index(const struct scm_scenario *s, struct arena *a,
		     struct tqi_index *x, struct scm_result *out)
{
	int rc = GB_OK;
	for (size_t i = 0; i < s->ntqs && rc == GB_OK; i++) {
		const struct scm_tq *t = &s->tqs[i];
		rc = tqi_tq_put(x, t->tq_id, t->def.owner, t->def.owner_group,
				t->def.setup, t->segment, t->def.set, 0.0);
		for (size_t j = 0; j < t->njobs && rc == GB_OK; j++)
			rc = tqi_job_add(x, t->tq_id, t->jobs[j].job_id,
					 t->jobs[j].user_priority);
	}
	if (rc == GB_OK)
		rc = fill_rows(s, a, x, out);
	if (rc != GB_OK)
		return rc;
	size_t n = out->nrows;
	/* PR-08: what the leader computes and the index then carries. */
	struct pr_tq *st = arena_alloc(a, (n + 1) * sizeof(*st));
	if (st == NULL)
		return GB_ENOMEM;
	rc = md_priorities(x, &s->cfg.pr, s->hist, s->nhist, s->now, st,
			   out->note, sizeof(out->note));
	for (size_t i = 0; i < n && rc == GB_OK; i++) {
		/* the scenario's strings outlive the index */
		st[i].owner = out->rows[i].pr.owner;
		st[i].owner_group = out->rows[i].pr.owner_group;
		/* A scenario written from a worker's index (a stored decision)
		** gives the priorities the leader had computed, which that
		** pilot was matched with; the shares above still show what a
		** recomputation now gives. */
		if (out->rows[i].tq->has_priority)
			st[i].priority = out->rows[i].tq->priority;
		out->rows[i].pr = st[i];
		rc = tqi_set_priority(x, st[i].tq_id, st[i].priority);
	}
	if (rc == GB_OK && n && out->rows[0].tq->has_priority) {
		size_t l = strlen(out->note);
		snprintf(out->note + l, sizeof(out->note) - l,
			 "%spriorities as given by the scenario",
			 l ? "; " : "");
	}
	if (rc != GB_OK)
		return rc;

	const struct cdt_pilot *p = &s->pilot;
	const struct md_pilot mp = scm_md_pilot(p);
	size_t nv = 0;
	const struct tq_view *views = tqi_views(x, &nv);
	double *weights = arena_alloc(a, (nv + 1) * sizeof(*weights));
	uint8_t *verdict = arena_alloc(a, nv + 1);
	if (weights == NULL || verdict == NULL)
		return GB_ENOMEM;
	if (nv != n)
		return GB_EINVAL;
	struct md_match m;
	rc = md_match_pilot(x, &s->cfg.pr, &mp, (uint64_t)s->seed, weights,
			    verdict, &m);
	if (rc != GB_OK)
		return rc;
	out->m = m;
	/* m's owner names are the index's, which scm_run frees: point them
	** at the scenario's strings of the same TQ */
	if (m.result.chosen >= 0 && (size_t)m.result.chosen < n) {
		out->m.owner = out->rows[m.result.chosen].tq->def.owner;
		out->m.owner_group =
			out->rows[m.result.chosen].tq->def.owner_group;
	}
	out->match = m.result;
	out->job_sharing = m.job_sharing;
	for (size_t i = 0; i < n; i++) {
		struct scm_row *row = &out->rows[i];
		row->verdict = verdict[i];
		if (row->verdict >= TQ_NFILTERS)
			continue;
		tq_reason(&views[i], &m.res, (enum tq_filter_id)row->verdict,
			  &row->reason);
		row->detail =
			render_detail(a, row->tq, p, row->verdict, &row->reason);
		if (row->detail == NULL)
			return GB_ENOMEM;
	}
	out->chosen = m.result.chosen;
	out->job_id = m.job_id;
	out->job_priority = m.user_priority;
	snprintf(out->outcome, sizeof(out->outcome), "%s", m.reason);
	return GB_OK;
}

struct md_pilot scm_md_pilot(const struct cdt_pilot *p)
{
	return (struct md_pilot){.site = p->site, .d = p->d};
}

int scm_run(const struct scm_scenario *s, struct arena *a,
	    struct scm_result *out)
{
	if (s == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->chosen = -1;
	struct tqi_index *x = tqi_new();
	if (x == NULL)
		return GB_ENOMEM;
	int rc = run_index(s, a, x, out);
	tqi_free(x);
	if (rc != GB_OK || !s->cfg.pr.corrections || s->cfg.pr.ninst == 0)
		return rc;
	out->corr = arena_alloc(a, s->cfg.pr.ninst * sizeof(*out->corr));
	if (out->corr == NULL)
		return GB_ENOMEM;
	out->ncorr = s->cfg.pr.ninst;
	for (size_t i = 0; i < out->ncorr && rc == GB_OK; i++)
		rc = correction(s, a, out, &s->cfg.pr.inst[i], &out->corr[i]);
	return rc;
}

const char *scm_verdict_text(int verdict, char *buf, size_t n)
{
	const struct tq_filter_desc *f = tq_filter((enum tq_filter_id)verdict);
	switch (verdict) {
	case TQ_V_CHOSEN:
		snprintf(buf, n, "chosen");
		break;
	case TQ_V_ENTRANT:
		snprintf(buf, n, "lottery entrant");
		break;
	case TQ_V_LOWER_CPU:
		snprintf(buf, n, "lower CPU time");
		break;
	case TQ_V_EMPTY:
		snprintf(buf, n, "empty");
		break;
	default:
		snprintf(buf, n, "rejected by %s", f ? f->name : "?");
	}
	return buf;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *pilot_json(const struct cdt_pilot *p, int job_sharing)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "pilotID", ju_str(p->pilot_id));
	bad |= ju_set(o, "setup", ju_str(p->d.setup));
	bad |= ju_set(o, "cpuTime", json_integer(p->d.cpu_time));
	bad |= rec_pilot_lists(o, &p->d, 0);
	bad |= ju_set(o, "jobSharing", json_boolean(job_sharing));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *row_json(const struct scm_row *w)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	const struct scm_tq *t = w->tq;
	const struct pr_tq *p = &w->pr;
	char vt[64];
	int rej = w->verdict < TQ_NFILTERS;
	int bad = ju_set(o, "id", json_integer(t->tq_id));
	bad |= ju_set(o, "description", ju_str(t->description));
	bad |= ju_set(o, "ownerDN", ju_str(t->def.owner));
	bad |= ju_set(o, "ownerGroup", ju_str(t->def.owner_group));
	bad |= ju_set(o, "setup", ju_str(t->def.setup));
	bad |= ju_set(o, "cpuTime", json_integer(t->def.cpu_time));
	bad |= ju_set(o, "cpuSegment", json_integer(t->segment));
	bad |= ju_set(o, "jobs", json_integer(p->njobs));
	bad |= ju_set(o, "groupShare", num_or_null(p->group_share));
	bad |= ju_set(o, "groupCorrection", num_or_null(p->group_corr));
	bad |= ju_set(o, "userCorrection", num_or_null(p->user_corr));
	bad |= ju_set(o, "entityShare", num_or_null(p->entity_share));
	bad |= ju_set(o, "j", num_or_null(p->j));
	bad |= ju_set(o, "priority", num_or_null(p->priority));
	bad |= ju_set(o, "verdict",
		      ju_str(scm_verdict_text(w->verdict, vt, sizeof(vt))));
	bad |= ju_set(o, "filter", ju_str(rej ? w->reason.code : NULL));
	bad |= ju_set(o, "rule", ju_str(rej ? w->reason.rule : NULL));
	bad |= ju_set(o, "detail", ju_str(rej ? w->detail : NULL));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *instance_json(const struct scm_correction *c)
{
	const struct pr_instance *in = c->inst;
	json_t *o = json_object(), *sl = json_array(), *en = json_array();
	int bad = o == NULL || sl == NULL || en == NULL;
	for (size_t k = 0; !bad && k < in->nslices; k++) {
		const struct pr_slice *s = &in->slices[k];
		json_t *x = json_object();
		bad |= x == NULL;
		if (x) {
			bad |= ju_set(x, "name", ju_str(s->name));
			bad |= ju_set(x, "timeSpan", json_integer(s->timespan));
			bad |= ju_set(x, "weight", json_real(s->weight));
			bad |= ju_set(x, "maxCorrection",
				      json_real(s->max_correction));
		}
		bad |= ju_push(sl, x);
	}
	for (size_t i = 0; !bad && i < c->nents; i++) {
		const struct pr_entity *e = &c->ents[i];
		json_t *x = json_object(), *u = json_array(), *sc = json_array();
		bad |= x == NULL || u == NULL || sc == NULL;
		for (size_t k = 0; !bad && k < in->nslices; k++) {
			bad |= ju_push(u, json_real(e->usage[k]));
			bad |= ju_push(sc, num_or_null(e->slice_corr[k]));
		}
		if (x) {
			bad |= ju_set(x, "name", ju_str(e->name));
			bad |= ju_set(x, "share", json_real(e->share));
			bad |= ju_set(x, "usage", u);
			bad |= ju_set(x, "sliceCorrections", sc);
			bad |= ju_set(x, "correction",
				      num_or_null(e->correction));
		} else {
			json_decref(u);
			json_decref(sc);
		}
		bad |= ju_push(en, x);
	}
	if (bad) {
		json_decref(o);
		json_decref(sl);
		json_decref(en);
		return NULL;
	}
	bad |= ju_set(o, "name", ju_str(in->name));
	bad |= ju_set(o, "group", ju_str(in->group));
	bad |= ju_set(o, "maxGlobalCorrection", json_real(in->max_global));
	bad |= ju_set(o, "ignored", json_boolean(c->ignored));
	bad |= ju_set(o, "slices", sl);
	bad |= ju_set(o, "entities", en);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *counts_json(const struct tq_result *m)
{
	json_t *o = json_object(), *rej = json_object();
	int bad = o == NULL || rej == NULL;
	for (int f = 0; !bad && f < TQ_NFILTERS; f++)
		if (m->rejected[f] > 0)
			bad |= ju_set(rej, tq_filter((enum tq_filter_id)f)->name,
				      json_integer((json_int_t)m->rejected[f]));
	if (bad) {
		json_decref(o);
		json_decref(rej);
		return NULL;
	}
	bad |= ju_set(o, "considered", json_integer((json_int_t)m->in));
	bad |= ju_set(o, "matched", json_integer((json_int_t)m->matched));
	bad |= ju_set(o, "empty", json_integer((json_int_t)m->empty));
	bad |= ju_set(o, "entrants", json_integer((json_int_t)m->entrants));
	bad |= ju_set(o, "topCpuTime", json_integer(m->top_cpu));
	bad |= ju_set(o, "lotteryTotal", json_real(m->lottery_total));
	bad |= ju_set(o, "rejected", rej);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *job_json(const struct scm_result *r)
{
	if (r->chosen < 0 || (size_t)r->chosen >= r->nrows)
		return json_null();
	const struct scm_tq *t = r->rows[r->chosen].tq;
	return json_pack("{s:I, s:I, s:i, s:s, s:s}", "jobID",
			 (json_int_t)r->job_id, "tqID", (json_int_t)t->tq_id,
			 "userPriority", r->job_priority, "ownerDN",
			 t->def.owner, "ownerGroup", t->def.owner_group);
}

json_t *scm_result_json(const struct scm_scenario *s,
			const struct scm_result *r)
{
	if (s == NULL || r == NULL)
		return NULL;
	json_t *o = json_object(), *tqs = json_array(), *insts = json_array();
	json_t *corr = json_object();
	int bad = o == NULL || tqs == NULL || insts == NULL || corr == NULL;
	for (size_t i = 0; !bad && i < r->nrows; i++)
		bad |= ju_push(tqs, row_json(&r->rows[i]));
	for (size_t i = 0; !bad && i < r->ncorr; i++)
		bad |= ju_push(insts, instance_json(&r->corr[i]));
	if (bad) {
		json_decref(o);
		json_decref(tqs);
		json_decref(insts);
		json_decref(corr);
		return NULL;
	}
	bad |= ju_set(corr, "enabled", json_boolean(s->cfg.pr.corrections));
	bad |= ju_set(corr, "note", ju_str(r->note[0] ? r->note : NULL));
	bad |= ju_set(corr, "instances", insts);
	bad |= ju_set(o, "pilot", pilot_json(&s->pilot, r->job_sharing));
	bad |= ju_set(o, "outcome",
		      json_string(r->chosen >= 0 ? "matched" : "nomatch"));
	bad |= ju_set(o, "code", ju_str(tq_result_code(&r->match)));
	bad |= ju_set(o, "reason", ju_str(r->outcome));
	bad |= ju_set(o, "job", job_json(r));
	bad |= ju_set(o, "counts", counts_json(&r->match));
	bad |= ju_set(o, "taskQueues", tqs);
	bad |= ju_set(o, "corrections", corr);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- table -------------------------------------------------------------- */

const char *scm_short_dn(const char *dn)
{
	return rn_short_dn(dn);
}

static void print_corrections(FILE *out, const struct scm_scenario *s,
			      const struct scm_result *r)
{
	if (!s->cfg.pr.corrections) {
		fprintf(out, "-- share corrections: off%s --\n",
			s->cfg.started || s->cfg.pr.ninst == 0
				? ""
				: " (WMSHistory not started)");
		return;
	}
	for (size_t i = 0; i < r->ncorr; i++) {
		const struct scm_correction *c = &r->corr[i];
		const struct pr_instance *in = c->inst;
		fprintf(out, "-- %s: WMSHistory %s%s, MaxGlobalCorrectionFactor "
			     "%g --\n",
			in->name, in->group ? "inside group " : "between groups",
			in->group ? in->group : "", in->max_global);
		if (c->ignored) {
			fprintf(out, "   ignored: %s has JOB_SHARING (PR-07)\n",
				in->group);
			continue;
		}
		for (size_t k = 0; k < in->nslices; k++)
			fprintf(out, "   slice %-12s TimeSpan %lld s, Weight %g, "
				     "MaxCorrection %g\n",
				in->slices[k].name, in->slices[k].timespan,
				in->slices[k].weight,
				in->slices[k].max_correction);
		if (c->nents == 0)
			fprintf(out, "   no entity with waiting jobs\n");
		for (size_t e = 0; e < c->nents; e++) {
			const struct pr_entity *x = &c->ents[e];
			fprintf(out, "   %-14.14s share %-8g", scm_short_dn(x->name),
				x->share);
			/* usage -> the slice's clamped expected/actual ratio;
			** a slice without any history is left out (PR-05) */
			for (size_t k = 0; k < in->nslices; k++) {
				if (isfinite(x->slice_corr[k]))
					fprintf(out, "  %s: usage %g -> %.4g",
						in->slices[k].name,
						x->usage[k], x->slice_corr[k]);
				else
					fprintf(out, "  %s: usage %g, skipped",
						in->slices[k].name,
						x->usage[k]);
			}
			fprintf(out, "  => correction %.4g\n", x->correction);
		}
	}
}

void scm_print_queues(FILE *out, const struct scm_scenario *s,
		      const struct scm_result *r)
{
	if (out == NULL || s == NULL || r == NULL)
		return;
	fprintf(out, "  %6s %-*s %-10s %7s %6s %8s %6s %6s %9s %7s %9s  %s\n",
		"TQ", SCM_OWNER_W, "OWNER", "GROUP", "CPU", "JOBS", "GSHARE",
		"GCORR", "UCORR", "ENTITY", "J", "PRIORITY", "VERDICT");
	char vt[64];
	for (size_t i = 0; i < r->nrows; i++) {
		const struct scm_row *w = &r->rows[i];
		const struct pr_tq *t = &w->pr;
		fprintf(out,
			"%c %6lld %-*.*s %-10.10s %7lld %6lld %8.6g %6.4g "
			"%6.4g %9.6g %7.4g %9.6g  %s\n",
			w->verdict == TQ_V_CHOSEN ? '*' : ' ', w->tq->tq_id,
			SCM_OWNER_W, SCM_OWNER_W, scm_short_dn(t->owner),
			t->owner_group, w->tq->segment, t->njobs,
			t->group_share, t->group_corr, t->user_corr,
			t->entity_share, t->j, t->priority,
			scm_verdict_text(w->verdict, vt, sizeof(vt)));
		if (w->detail)
			fprintf(out, "         %s %s: %s\n", w->reason.rule,
				w->reason.code, w->detail);
	}
	print_corrections(out, s, r);
	if (r->note[0])
		fprintf(out, "note: %s\n", r->note);
}
