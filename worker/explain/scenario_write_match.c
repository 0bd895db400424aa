/*
** scenario_write_match.c — match scenarios written from a worker's task
** queue index (scw_match, declared in scenario_write.h): the inverse of
** scenario_match.c's and dirac_json.c's parsers.
**
** The index is the source because it is what a pilot was matched against
** (tqindex.h): its views give each TQ's interned definition, CPU segment,
** levels and the priority the leader last computed, tqi_name the strings
** and tqi_level_ids every waiting job. Written back, a TQ's cpuTime is its
** segment (the raw CPU time of its jobs is gone once TQ-02 has mapped it,
** and a segment maps to itself), its sets are sorted by name (the parser
** sorts them anyway), and its "priority" is the index's, so replaying the
** match needs no recomputation at another moment.
**
** The configuration is written in one shape whatever the file it came
** from had: every group, "shareCorrections" with "enabled" and
** WMSHistory listed to start (so enabled alone decides, as in pr_config),
** MaxGlobalCorrectionFactor rather than DIRAC code's other name.
*/
#include "explain/scenario_write.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "report/record.h"
#include "gb_error.h"
#include "taskqueue.h"

#define SCW_CORRECTOR "WMSHistory"

/* The flat records of match scenarios, rows in the parsers' order. */
enum {
	GROUP, /* struct pr_group: "groups" */
	SLICE, /* struct pr_slice: a time slice of an instance */
	PILOT, /* struct cdt_pilot: "pilot" */
};

#define GR struct pr_group
#define SL struct pr_slice
#define P struct cdt_pilot
static const struct scw_fld fields[] = {
	SCW_F(GROUP, "name", SCW_K_STR, GR, name),
	SCW_F(GROUP, "share", SCW_K_NUM, GR, share),
	SCW_F(GROUP, "jobSharing", SCW_K_BOOL, GR, job_sharing),
	SCW_F(SLICE, "TimeSpan", SCW_K_LLONG, SL, timespan),
	SCW_F(SLICE, "Weight", SCW_K_NUM, SL, weight),
	SCW_F(SLICE, "MaxCorrection", SCW_K_NUM, SL, max_correction),
	SCW_F(PILOT, "pilotID", SCW_K_STR, P, pilot_id),
	SCW_F(PILOT, "setup", SCW_K_STR, P, d.setup),
	SCW_F(PILOT, "cpuTime", SCW_K_LLONG, P, d.cpu_time),
	SCW_END,
};
#undef GR
#undef SL
#undef P

/* ---- configuration ------------------------------------------------------- */

/* An instance's scalar options; a slice of one of these names would be
** read as the option. */
static int is_option(const char *s)
{
	return strcmp(s, "Group") == 0 ||
	       strcmp(s, "MaxGlobalCorrectionFactor") == 0 ||
	       strcmp(s, "MaxGlobalCorrection") == 0;
}

/* The options, then the slices in order, each under its name. */
static json_t *instance_json(const struct pr_instance *in)
{
	json_t *o = json_object();
	int bad = o == NULL || in->nslices > PR_MAX_SLICES;
	if (in->group)
		bad = bad || ju_set(o, "Group", json_string(in->group));
	bad = bad || ju_set(o, "MaxGlobalCorrectionFactor",
			    scw_num(in->max_global));
	for (size_t k = 0; !bad && k < in->nslices; k++) {
		const struct pr_slice *s = &in->slices[k];
		bad = s->name == NULL || is_option(s->name) ||
		      ju_set(o, s->name, scw_object(fields, SLICE, s, 0));
	}
	size_t n = in->nslices + 1 + (in->group != NULL);
	return scw_done(o, bad || json_object_size(o) != n);
}

/* "WMSHistory": the instances by name, each name once. */
static json_t *instances_json(const struct pr_config *cfg)
{
	json_t *o = json_object();
	int bad = o == NULL || (cfg->ninst && cfg->inst == NULL);
	for (size_t i = 0; !bad && i < cfg->ninst; i++)
		bad = cfg->inst[i].name == NULL ||
		      ju_set(o, cfg->inst[i].name,
			     instance_json(&cfg->inst[i]));
	return scw_done(o, bad || json_object_size(o) != cfg->ninst);
}

static json_t *corrections_json(const struct pr_config *cfg)
{
	static const char *const start[] = {SCW_CORRECTOR};
	json_t *o = json_object();
	int bad = o == NULL;
	bad = bad || ju_set(o, "enabled", json_boolean(cfg->corrections));
	bad = bad || ju_set(o, "ShareCorrectorsToStart", scw_strings(start, 1));
	bad = bad || ju_set(o, SCW_CORRECTOR, instances_json(cfg));
	return scw_done(o, bad);
}

static json_t *segments_json(const long long *seg, size_t nseg)
{
	json_t *a = json_array();
	int bad = a == NULL;
	for (size_t i = 0; !bad && i < nseg; i++)
		bad = ju_push(a, json_integer(seg[i]));
	return scw_done(a, bad);
}

/* ---- task queues --------------------------------------------------------- */

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A requirement set's names, sorted as the parser leaves them. */
static json_t *set_json(const struct tqi_index *x, const struct tq_idset *s)
{
	const char **v = malloc((s->n ? s->n : 1) * sizeof(*v));
	int bad = v == NULL;
	for (size_t k = 0; !bad && k < s->n; k++)
		bad = (v[k] = tqi_name(x, s->v[k])) == NULL;
	if (!bad && s->n > 1)
		qsort(v, s->n, sizeof(*v), name_cmp);
	json_t *a = bad ? NULL : scw_strings(v, s->n);
	free(v);
	return a;
}

/* Every waiting job, level by level (ascending UserPriority), each level's
** ids ascending. */
static json_t *tq_jobs_json(const struct tqi_index *x, size_t pos,
			    const struct tq_view *v)
{
	json_t *a = json_array();
	int bad = a == NULL;
	for (size_t l = 0; !bad && l < v->nlevels; l++) {
		size_t n = 0;
		const long long *ids = tqi_level_ids(x, pos, l, &n);
		bad = n != v->levels[l].njobs;
		for (size_t k = 0; !bad && k < n; k++)
			bad = ju_push(a, json_pack("{s:I, s:i}", "jobID",
						   (json_int_t)ids[k],
						   "userPriority",
						   v->levels[l].user_priority));
	}
	return scw_done(a, bad);
}

static json_t *tq_json(const struct tqi_index *x, size_t pos,
		       const struct tq_view *v, const long long *seg,
		       size_t nseg)
{
	const char *owner = tqi_name(x, v->owner);
	const char *group = tqi_name(x, v->owner_group);
	const char *setup = tqi_name(x, v->setup);
	/* cpuTime is read back through TQ-02: only a segment is itself */
	if (owner == NULL || group == NULL || setup == NULL ||
	    tq_cpu_segment(v->cpu_time, seg, nseg) != v->cpu_time ||
	    !(v->priority >= 0))
		return NULL;
	json_t *o = json_object();
	int bad = o == NULL;
	bad = bad || ju_set(o, "id", json_integer(v->tq_id));
	bad = bad || ju_set(o, "ownerDN", json_string(owner));
	bad = bad || ju_set(o, "ownerGroup", json_string(group));
	bad = bad || ju_set(o, "setup", json_string(setup));
	bad = bad || ju_set(o, "cpuTime", json_integer(v->cpu_time));
	for (int f = 0; f < TQ_NFIELDS; f++)
		if (v->set[f].n)
			bad = bad || ju_set(o, tq_field_names[f],
					    set_json(x, &v->set[f]));
	bad = bad || ju_set(o, "priority", scw_num(v->priority));
	bad = bad || ju_set(o, "jobs", tq_jobs_json(x, pos, v));
	return scw_done(o, bad);
}

static json_t *tqs_json(const struct tqi_index *x, const long long *seg,
			size_t nseg)
{
	size_t n = 0;
	const struct tq_view *views = tqi_views(x, &n);
	json_t *a = json_array();
	int bad = a == NULL;
	for (size_t i = 0; !bad && i < n; i++)
		bad = ju_push(a, tq_json(x, i, &views[i], seg, nseg));
	return scw_done(a, bad);
}

/* ---- history ------------------------------------------------------------- */

static json_t *sample_json(long long now, const struct pr_sample *s)
{
	json_t *o = json_object();
	int bad = o == NULL;
	bad = bad || ju_set(o, "age", json_integer(now - s->t));
	bad = bad || ju_set(o, "ownerGroup", json_string(s->group));
	/* "" is what the parser gives a sample without ownerDN */
	if (s->owner[0])
		bad = bad || ju_set(o, "ownerDN", json_string(s->owner));
	bad = bad || ju_set(o, "running", scw_num(s->running));
	return scw_done(o, bad);
}

/* Ages before now; samples no slice can count at now are left out (a
** sample after now, or older than the longest TimeSpan the format
** accepts). */
static json_t *history_json(long long now, const struct pr_sample *h,
			    size_t n)
{
	json_t *a = json_array();
	int bad = a == NULL || (n && h == NULL);
	for (size_t i = 0; !bad && i < n; i++) {
		const struct pr_sample *s = &h[i];
		bad = s->group == NULL || s->owner == NULL;
		if (!bad && s->t <= now && s->t >= now - CDT_MAX_TIME)
			bad = ju_push(a, sample_json(now, s));
	}
	return scw_done(a, bad);
}

/* ---- the scenario -------------------------------------------------------- */

json_t *scw_match(long long now, unsigned long long seed,
		  const struct pr_config *cfg, const long long *seg,
		  size_t nseg, const struct tqi_index *idx,
		  const struct pr_sample *hist, size_t nhist,
		  const struct cdt_pilot *p)
{
	if (cfg == NULL || idx == NULL || p == NULL || seg == NULL ||
	    !tq_segments_valid(seg, nseg) ||
	    cfg->default_share != PR_DEFAULT_SHARE || now > CDT_MAX_TIME)
		return NULL;
	json_t *root = scw_head(now, seed);
	int bad = root == NULL;
	bad = bad || ju_set(root, "groups",
			    scw_objects(fields, GROUP, cfg->groups,
					cfg->ngroups, sizeof(*cfg->groups), 0));
	bad = bad || ju_set(root, "shareCorrections", corrections_json(cfg));
	bad = bad || ju_set(root, "cpuSegments", segments_json(seg, nseg));
	bad = bad || ju_set(root, "taskQueues", tqs_json(idx, seg, nseg));
	bad = bad || ju_set(root, "history", history_json(now, hist, nhist));
	json_t *po = bad ? NULL : scw_object(fields, PILOT, p, 0);
	/* the lists as pilot.match takes them (strings or arrays, ANY) */
	if (po != NULL && rec_pilot_lists(po, &p->d, 1)) {
		json_decref(po);
		po = NULL;
	}
	bad = bad || po == NULL || ju_set(root, "pilot", po);
	return scw_done(root, bad);
}
