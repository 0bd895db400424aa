/*
** scenario_jobs.c — job requests and whole job scenarios from JSON, and
** scj_run, the path `explain` decides them by (declared in
** scenario_jobs.h). The grid half (software, queues, links, replicas) is in
** scenario_jobs_grid.c.
**
** Strict like scenario.c, for the same reason: these files are written by
** people, and a typo such as "ioIntensty" must not silently take a default
** and answer a different what-if. Unknown fields are errors naming the
** field; every value's type and range is checked before it is stored. The
** request is a flat record parsed from a table of jsonutil.h rows, so a
** field's range and default are read in one row, and the same rows give
** the allowed keys.
**
** Requests obey the message decoder's string limit (COD_MAX_STRING) and
** SCJ_MAX_JOBS / SCJ_MAX_INPUTS, so whatever `job submit` accepts the
** worker accepts, and a file cannot make the parser allocate without bound
** beyond the arena's cap.
*/
#include "explain/scenario_jobs.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "gb_error.h"
#include "base/jsonutil.h"
#include "rng.h"
#include "explain/scenario.h"

/* JU_K_ENUM writes an int into enum members. */
_Static_assert(sizeof(enum tb_job_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rc_kind) == sizeof(int), "enum size");

/* The target of a string parsed outside a record's struct. */
struct one_str {
	const char *s;
};


/* In the order of the enums tb_job_scope and rc_kind. */
static const char *const scope_words[] = {"satellites", "nucleus", NULL};
static const char *const kind_words[] = {"release", "nightly", NULL};

#define R struct gm_request
static const struct ju_fld request_flds[] = {
	JU_TEXT("description"),
	JU_LLNG("taskID", R, t.task_id, JU_F_REQ, 1),
	JU_STR("nucleus", R, t.nucleus, JU_F_NONEMPTY | JU_F_REQOPT, NULL),
	JU_STR("gshare", R, t.gshare, JU_F_NONEMPTY | JU_F_REQOPT, NULL),
	JU_LNG("currentPriority", R, t.priority, 0, 1e6, 0),
	JU_STR("processingType", R, t.processing_type, 0, ""),
	JU_NUM("ioIntensity", R, t.io_intensity, 0, INFINITY, 0),
	JU_NUM("diskIO", R, t.diskio, 0, INFINITY, 0),
	JU_LNG("coreCount", R, t.core_count, 1, 1e6, 1),
	JU_LNG("maxCoreCount", R, t.max_core_count, 0, 1e6, 0),
	JU_NUM("baseRamCount", R, t.base_ram, 0, INFINITY, 0),
	JU_NUM("ramCount", R, t.ram_count, 0, INFINITY, 0),
	JU_NUM("outDiskCount", R, t.out_disk_count, 0, INFINITY, 0),
	JU_NUM("workDiskCount", R, t.work_disk_count, 0, INFINITY, 0),
	JU_NUM("cpuTime", R, t.cpu_time, 0, INFINITY, 0),
	JU_NUMF("cpuEfficiency", R, t.cpu_efficiency, JU_F_POS, 0, 100, 100),
	JU_NUM("baseWalltime", R, t.base_time, 0, INFINITY, 0),
	JU_STRCHK("ipConnectivity", R, t.ip_connectivity, 0, "", ju_ipconn_ok,
		  JU_IPCONN_EXPECT),
	JU_BOOL("directAccessOnly", R, t.direct_access_only),
	JU_BOOL("useEventService", R, t.use_es),
	JU_BOOL("dynamicNEvents", R, t.dynamic_nevents),
	JU_NUM("t1Weight", R, t.t1_weight, -INFINITY, INFINITY, 0),
	JU_STR("architecture", R, architecture, 0, ""),
	JU_STR("containerName", R, need.container_name, 0, ""),
	JU_BOOL("onlyTagsForFC", R, need.only_tags_fc),
	JU_STR("swProject", R, need.sw_project, 0, ""),
	JU_STR("swVersion", R, need.sw_version, 0, ""),
	JU_ENUM("jobScope", R, t.scope, scope_words),
	JU_ENUM("swKind", R, need.kind, kind_words),
	JU_LIST("preassigned", R, t.preassigned, t.npreassigned, JU_F_NONEMPTY,
		SCJ_MAX_PREASSIGNED),
	JU_TIME("preassignSkippedSince", R, t.preassign_skipped_since, 0),
	JU_BOOL("scout", R, t.scout),
	JU_BOOL("merge", R, t.merge),
	JU_BOOL("premerged", R, t.premerged),
	JU_FLD_END,
};
#undef R
static const char *const request_extra[] = {
	"outDiskCountUnit", "jobs", "taskType", "userName", "workingGroup",
	"taskPriority", "ramCountUnit", "excludedSite", "includedSite",
	"avoidVP", NULL};

/* The analysis fields (struct gm_analysis). taskType is parsed first, since
** it decides whether nucleus and gshare are required. */
static const char *const task_types[] = {"prod", "anal", NULL};
static const char *const ram_units[] = {"MB", "MBPerCore", NULL};
#define A struct gm_analysis
static const struct ju_fld type_fld = JU_ENUM("taskType", A, is_analysis,
					      task_types);
static const struct ju_fld anal_flds[] = {
	JU_STR("userName", A, user, JU_F_NONEMPTY, NULL),
	JU_STR("workingGroup", A, working_group, JU_F_NONEMPTY, NULL),
	JU_LNG("taskPriority", A, task_priority, 0, 1e6, 1000),
	JU_ENUM("ramCountUnit", A, ram_per_core, ram_units),
	JU_LIST("excludedSite", A, excluded_sites, nexcluded, JU_F_NONEMPTY,
		SCJ_MAX_SITE_LIST),
	JU_LIST("includedSite", A, included_sites, nincluded, JU_F_NONEMPTY,
		SCJ_MAX_SITE_LIST),
	JU_BOOL("avoidVP", A, avoid_vp),
	JU_FLD_END,
};
#undef A

/* A site list names each site once (AJ-06 lists are sets). */
static int site_dups(const struct ju_ctx *c, const char *path,
		     const char *key, const char *const *l, size_t n)
{
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, key);
	struct ju_nameref *r = n ? ju_alloc_n(c, n, sizeof(*r)) : NULL;
	if (n && r == NULL)
		return ju_fail(c, GB_ENOMEM, f, "out of memory");
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ju_nameref){l[i], i};
	return ju_dups(c, r, n, f, "", "site");
}

/* The analysis fields of request `obj` into r->an; `c->req_opt` is then
** set for the nucleus/gshare rows (required only for a production task
** of a scenario). */
static int parse_analysis(struct ju_ctx *c, json_t *obj, const char *path,
		      struct gm_request *r)
{
	struct gm_analysis an;
	memset(&an, 0, sizeof(an));
	int rc = ju_fld_parse(c, obj, path, &type_fld, &an);
	if (rc != GB_OK || !an.is_analysis) {
		/* production: analysis keys are accepted and ignored */
		memset(&r->an, 0, sizeof(r->an));
		return rc;
	}
	for (const struct ju_fld *d = anal_flds; rc == GB_OK && d->key; d++)
		rc = ju_fld_parse(c, obj, path, d, &an);
	json_t *unit = json_object_get(obj, "ramCountUnit");
	if (rc == GB_OK && (unit == NULL || json_is_null(unit)))
		an.ram_per_core = 1; /* MBPerCore; word 0 is "MB" */
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "userName");
	if (rc == GB_OK && an.user == NULL)
		return ju_fail(c, GB_EMISSING, f,
			       "missing (required when taskType is \"anal\")");
	if (rc == GB_OK)
		rc = site_dups(c, path, "excludedSite", an.excluded_sites,
			       an.nexcluded);
	if (rc == GB_OK)
		rc = site_dups(c, path, "includedSite", an.included_sites,
			       an.nincluded);
	r->an = an;
	c->req_opt = 0; /* nucleus and gshare have defaults */
	return rc;
}

static const struct ju_fld job_flds[] = {
	JU_LLNG("jobID", struct gm_job, job_id, JU_F_REQ, 1),
	JU_LNG("nEvents", struct gm_job, nevents, 0, 1e9, 0),
	JU_FLD_END,
};
static const char *const job_extra[] = {"inputFiles", NULL};
static const struct ju_fld input_flds[] = {
	JU_STR("lfn", struct gm_input, lfn, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_NUMF("size", struct gm_input, size_mb, JU_F_REQ, 0, INFINITY, 0),
	JU_FLD_END,
};

static int input_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	(void)key;
	return ju_parse_record(c, v, path, input_flds, NULL, elem);
}

static int job_item(const struct ju_ctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	struct gm_job *j = elem;
	(void)key;
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "inputFiles");
	void *in = NULL;
	int rc = ju_parse_record(c, v, path, job_flds, job_extra, j);
	if (rc == GB_OK)
		rc = ju_parse_items(c, json_object_get(v, "inputFiles"), f, 0,
				    SCJ_MAX_INPUTS, sizeof(struct gm_input),
				    input_item, &in, &j->ninputs);
	j->inputs = in;
	struct ju_nameref refs[SCJ_MAX_INPUTS];
	for (size_t i = 0; rc == GB_OK && i < j->ninputs; i++)
		refs[i] = (struct ju_nameref){j->inputs[i].lfn, i};
	return rc == GB_OK
		       ? ju_dups(c, refs, j->ninputs, f, ".lfn", "input file")
		       : rc;
}

/* 1..SCJ_MAX_JOBS jobs with distinct jobIDs. */
static int parse_jobs(const struct ju_ctx *c, json_t *arr, const char *f,
		      struct gm_request *r)
{
	void *jobs = NULL;
	if (arr == NULL)
		return ju_fail(c, GB_EMISSING, f, "missing");
	if (json_is_array(arr) && json_array_size(arr) == 0)
		return ju_fail(c, GB_ERANGE, f, "expected at least one job");
	int rc = ju_parse_items(c, arr, f, 0, SCJ_MAX_JOBS,
				sizeof(struct gm_job), job_item, &jobs,
				&r->njobs);
	r->jobs = jobs;
	size_t n = rc == GB_OK ? r->njobs : 0;
	if (rc == GB_OK && json_is_null(arr))
		return ju_fail(c, GB_ETYPE, f, "expected array, got null");
	struct ju_nameref *ids = n ? ju_alloc_n(c, n, sizeof(*ids)) : NULL;
	if (n && ids == NULL)
		return ju_fail(c, GB_ENOMEM, f, "out of memory");
	for (size_t i = 0; i < n; i++) {
		/* as text, so the duplicate check is the one for names */
		char id[24];
		snprintf(id, sizeof(id), "%lld", r->jobs[i].job_id);
		ids[i] = (struct ju_nameref){arena_strdup(c->a, id), i};
		if (ids[i].name == NULL)
			return ju_fail(c, GB_ENOMEM, f, "out of memory");
	}
	return rc == GB_OK ? ju_dups(c, ids, n, f, ".jobID", "jobID") : rc;
}

int scj_parse_request(json_t *obj, const char *path, struct arena *a,
		      int scenario, struct gm_request *out, char *err,
		      size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, scenario, 0};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (obj == NULL)
		return ju_fail(&c, GB_EMISSING, path, "missing");
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "architecture");
	int rc = json_is_object(obj) ? parse_analysis(&c, obj, path, &r) : GB_OK;
	if (rc == GB_OK)
		rc = ju_parse_record(&c, obj, path, request_flds, request_extra,
				     &r);
	if (rc == GB_OK && r.an.is_analysis && r.t.nucleus == NULL)
		r.t.nucleus = "";
	if (rc == GB_OK && r.an.is_analysis && r.t.gshare == NULL)
		r.t.gshare = "User Analysis";
	if (rc == GB_OK && rc_parse_arch(r.architecture, &r.need.arch) != 0)
		return ju_fail(
			&c, GB_ERANGE, f,
			"expected sw_platform<@base_platform><#cpu_spec>"
			"<&gpu_spec>, each separator once and each piece "
			"under %d bytes, got '%s'",
			RC_SPEC_MAX, r.architecture);
	/* kB, MB or GB per event, or a ratio to the input (PJ-17). */
	static const struct ju_fld unit_fld =
		JU_STR("outDiskCountUnit", struct one_str, s, 0, "");
	struct one_str unit = {""};
	if (rc == GB_OK)
		rc = ju_fld_parse(&c, obj, path, &unit_fld, &unit);
	r.t.out_disk_unit = jb_out_unit_parse(rc == GB_OK ? unit.s : "");
	ju_path_key(f, sizeof(f), path, "jobs");
	if (rc == GB_OK)
		rc = parse_jobs(&c, json_object_get(obj, "jobs"), f, &r);
	if (rc == GB_OK)
		*out = r;
	return rc;
}

/* ---- whole scenario ------------------------------------------------------- */

/* Besides $schema, description, now and seed (read by a table). */
static const char *const scenario_keys[] = {
	"params", "queues", "sw", "links", "fileReplicas", "task", NULL};

int scj_is_job_scenario(json_t *root)
{
	if (!json_is_object(root) || json_object_get(root, "queues") == NULL ||
	    json_object_get(root, "kind") != NULL)
		return 0;
	json_t *tt = json_object_get(json_object_get(root, "task"), "taskType");
	return !(json_is_string(tt) &&
		 strcmp(json_string_value(tt), "anal") == 0);
}

int scj_parse_scenario(json_t *root, struct arena *a, struct scj_scenario *out,
		       char *err, size_t errlen)
{
	return scj_parse_scenario_opts(root, a, NULL, out, err, errlen);
}

int scj_parse_scenario_opts(json_t *root, struct arena *a,
			    const struct scj_opts *o, struct scj_scenario *out,
			    char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 1, 0};
	int rc = ju_scenario_begin(&c, root, out, sizeof(*out));
	if (rc != GB_OK)
		return rc;
	rc = ju_scenario_head(&c, root, scenario_keys, &out->now, &out->seed);
	struct prm_kv *kv = NULL;
	size_t nkv = 0;
	if (rc == GB_OK)
		rc = scn_parse_params(json_object_get(root, "params"), "params",
				      a, &kv, &nkv, err, errlen);
	out->params = (struct prm_set){kv, nkv};
	if (rc == GB_OK && json_object_get(root, "queues") == NULL)
		return ju_fail(&c, GB_EMISSING, "queues", "missing");
	if (rc == GB_OK)
		rc = scj_parse_grid_opts(root, a, out->now, o, &out->grid,
					 err, errlen);
	if (rc == GB_OK)
		rc = scj_parse_request(json_object_get(root, "task"), "task", a,
				       1, &out->req, err, errlen);
	return rc;
}

/* ---- deciding ------------------------------------------------------------- */

int scj_run(const struct scj_scenario *s, struct arena *a,
	    struct md_jobs *out)
{
	if (s == NULL)
		return GB_EINVAL;
	return md_decide_jobs(&s->grid, &s->req, &s->params, s->now, s->seed,
			      a, out);
}
