/*
** codec_jobs.c — job.broker requests and jobs.* events in msgpack.
**
** The request is one field table walked by codec.c's cod_decode_fields(),
** so it gets the task.broker checks and error wording for free; what is
** specific to jobs lives in the COD_F_CUSTOM rows below: the enum words
** (jobScope, swKind), the fields checked against a grammar (ipConnectivity,
** architecture, cpuEfficiency's half-open range), the pre-assigned names
** and the nested jobs[].inputFiles[] arrays.
**
** The table decodes into a struct req_dec that wraps the gm_request with
** the one thing gridmodel.h has no field for: whether jobScope was sent
** (the worker otherwise takes the FC-06 scope from the task record).
**
** Duplicates that would silently change a decision are refused with the
** path of the second occurrence: a jobID twice would be placed twice, an
** lfn twice in one job would count its size twice (PJ-17), a pre-assigned
** queue twice is a producer bug. Finding them (codec.c's cod_get_maps and
** cod_get_strs) sorts (value, index) pairs, O(n log n), never n^2: a
** request may hold 10000 jobs.
**
** The encoder checks everything the decoder checks first, so a request
** `gridbroker job submit` sends is never dead-lettered for its form.
**
** Analysis requests (taskType "anal") add the owner and the analysis
** brokerage's task fields (struct gm_analysis), a second table read from the
** same map only for them: a production request's copies of those keys
** are ignored like unknown keys, as the JSON request parser ignores them.
*/
#include "codec/codec_jobs.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gb_error.h"
#include "swcheck.h"
#include "base/timefmt.h"

/* ---- decoding ----------------------------------------------------------- */

/* The request as decoded, plus what gm_request cannot hold. */
struct req_dec {
	struct gm_request r;
	int has_scope;
};

/* jobScope: FC-06's two scopes. "nucleus-only" is the word task.assigned
** uses, so a producer may forward it as it came. */
static int get_scope(const msgpack_object *o, const char *field,
		     const struct cod_field *spec, void *base, struct arena *a,
		     struct cod_error *err)
{
	(void)spec;
	(void)a;
	static const char *const words[] = {"satellites", "nucleus",
					    "nucleus-only", NULL};
	int w = cod_get_word(o, field, words, "satellites or nucleus", err);
	if (w < 0)
		return w;
	struct req_dec *d = base;
	d->r.t.scope = w == 0 ? TB_SCOPE_SATELLITES : TB_SCOPE_NUCLEUS_ONLY;
	d->has_scope = 1;
	return GB_OK;
}

/* swKind: which cvmfs tag RC-06 asks for. */
static int get_kind(const msgpack_object *o, const char *field,
		    const struct cod_field *spec, void *base, struct arena *a,
		    struct cod_error *err)
{
	(void)spec;
	(void)a;
	static const char *const words[] = {"release", "nightly", NULL};
	int w = cod_get_word(o, field, words, "release or nightly", err);
	if (w < 0)
		return w;
	struct req_dec *d = base;
	d->r.need.kind = w == 0 ? RC_RELEASE : RC_NIGHTLY;
	return GB_OK;
}

/* outDiskCountUnit: kB, MB or GB per event, else a fraction of the input
** size (PJ-17); the engine reads the word (jb_out_unit_parse). */
static int get_out_unit(const msgpack_object *o, const char *field,
			const struct cod_field *spec, void *base,
			struct arena *a, struct cod_error *err)
{
	(void)spec;
	const char *unit = NULL;
	int rc = cod_get_str(o, field, 0, a, &unit, err);
	if (rc != GB_OK)
		return rc;
	((struct req_dec *)base)->r.t.out_disk_unit =
		jb_out_unit_parse(unit);
	return GB_OK;
}

/* The engine divides by cpuEfficiency (PJ-21): a percentage in (0, 100]. */
static int efficiency_ok(double v)
{
	return isfinite(v) && v > 0 && v <= 100;
}

static int get_efficiency(const msgpack_object *o, const char *field,
			  const struct cod_field *spec, void *base,
			  struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	double v = 0;
	int rc = cod_get_num(o, field, -INFINITY, &v, err);
	if (rc != GB_OK)
		return rc;
	if (!efficiency_ok(v))
		return cod_fail(err, GB_ERANGE, field,
				"expected a number in (0, 100], got %g", v);
	((struct req_dec *)base)->r.t.cpu_efficiency = v;
	return GB_OK;
}

/*
** PJ-22: "" or a connectivity word (full, http, none), optionally followed
** by "#IPv4" or "#IPv6". Case-insensitive, as the engine compares them and
** as the JSON request parser (scenario_jobs.c) accepts them, so whatever
** `job submit` reads can be sent.
*/
static int ipconn_ok(const char *s)
{
	static const char *const conns[] = {"full", "http", "none"};
	if (s[0] == '\0')
		return 1;
	const char *hash = strchr(s, '#');
	size_t n = hash ? (size_t)(hash - s) : strlen(s);
	int conn = 0;
	for (size_t i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
		conn |= n == 4 && strncasecmp(conns[i], s, n) == 0;
	return conn && (hash == NULL || strcasecmp(hash, "#IPv4") == 0 ||
			strcasecmp(hash, "#IPv6") == 0);
}

static int get_ipconn(const msgpack_object *o, const char *field,
		      const struct cod_field *spec, void *base,
		      struct arena *a, struct cod_error *err)
{
	(void)spec;
	const char *s = NULL;
	int rc = cod_get_str(o, field, 0, a, &s, err);
	if (rc != GB_OK)
		return rc;
	if (!ipconn_ok(s)) {
		char shown[48];
		cod_sanitize(shown, sizeof(shown), s, strlen(s), 40);
		return cod_fail(err, GB_ERANGE, field,
				"unknown value '%s'; expected full, http or "
				"none, optionally with #IPv4 or #IPv6",
				shown);
	}
	((struct req_dec *)base)->r.t.ip_connectivity = s;
	return GB_OK;
}

/* RC-02: refused here, with its path, rather than by gm_resolve later as
** an "inconsistent" request. */
static int get_arch(const msgpack_object *o, const char *field,
		    const struct cod_field *spec, void *base, struct arena *a,
		    struct cod_error *err)
{
	(void)spec;
	const char *s = NULL;
	int rc = cod_get_str(o, field, 0, a, &s, err);
	if (rc != GB_OK)
		return rc;
	struct rc_arch arch;
	if (rc_parse_arch(s, &arch) != GB_OK)
		return cod_fail(err, GB_ERANGE, field,
				"not an RC-02 architecture: a piece longer "
				"than %d bytes or a separator (@ # &) twice",
				RC_SPEC_MAX - 1);
	((struct req_dec *)base)->r.architecture = s;
	return GB_OK;
}

static int get_preassigned(const msgpack_object *o, const char *field,
			   const struct cod_field *spec, void *base,
			   struct arena *a, struct cod_error *err)
{
	(void)spec;
	const char **names = NULL;
	size_t n = 0;
	int rc = cod_get_strs(o, field, CDJ_MAX_PREASSIGNED, "queue", a,
			      &names, &n, err);
	if (rc != GB_OK || n == 0)
		return rc;
	struct req_dec *d = base;
	d->r.t.preassigned = names;
	d->r.t.npreassigned = n;
	return GB_OK;
}

/* ---- the analysis fields (taskType "anal", AJ-01..AJ-28) -------------- */

/* taskType: which brokerage decides the jobs. Only PanDA's two words: a
** guessed brokerage would place the jobs by the wrong rules for good. */
static int get_task_type(const msgpack_object *o, const char *field,
			 const struct cod_field *spec, void *base,
			 struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	static const char *const words[] = {"prod", "anal", NULL};
	int w = cod_get_word(o, field, words, "prod or anal", err);
	if (w < 0)
		return w;
	((struct req_dec *)base)->r.an.is_analysis = w == 1;
	return GB_OK;
}

/* ramCountUnit: AJ-13 reads ramCount per core or for the whole job. */
static int get_ram_unit(const msgpack_object *o, const char *field,
			const struct cod_field *spec, void *base,
			struct arena *a, struct cod_error *err)
{
	(void)spec;
	(void)a;
	static const char *const words[] = {"MBPerCore", "MB", NULL};
	int w = cod_get_word(o, field, words, "MBPerCore or MB", err);
	if (w < 0)
		return w;
	((struct req_dec *)base)->r.an.ram_per_core = w == 0;
	return GB_OK;
}

/*
** excludedSite / includedSite (AJ-06): up to CDJ_MAX_SITES non-empty
** names, each once. A name twice is refused with the path of the second
** copy, like a pre-assigned queue twice: harmless for the filter, but a
** producer bug worth seeing. spec->off says which of the two lists the
** row fills.
*/
static int get_sites(const msgpack_object *o, const char *field,
		     const struct cod_field *spec, void *base,
		     struct arena *a, struct cod_error *err)
{
	struct req_dec *d = base;
	int excluded =
		spec->off == offsetof(struct req_dec, r.an.excluded_sites);
	const char **names = NULL;
	size_t n = 0;
	int rc = cod_get_strs(o, field, CDJ_MAX_SITES, "site", a, &names, &n,
			      err);
	if (rc != GB_OK)
		return rc;
	if (excluded) {
		d->r.an.excluded_sites = names;
		d->r.an.nexcluded = n;
	} else {
		d->r.an.included_sites = names;
		d->r.an.nincluded = n;
	}
	return GB_OK;
}

static const struct cod_field file_fields[] = {
	{"lfn", COD_F_STR, 1, 0, 0, 0, 1, offsetof(struct gm_input, lfn), NULL},
	{"size", COD_F_NUM, 1, 0, 0, 0, 0, offsetof(struct gm_input, size_mb),
	 NULL},
};

/* An lfn twice in one job would count its size twice (PJ-17). */
static const struct cod_maps file_maps = {
	.max = CDJ_MAX_FILES,
	.f = file_fields,
	.nf = COD_NELEM(file_fields),
	.size = sizeof(struct gm_input),
	.uniq = {{"lfn", "file", offsetof(struct gm_input, lfn), 1}},
};

static int get_files(const msgpack_object *o, const char *field,
		     const struct cod_field *spec, void *base, struct arena *a,
		     struct cod_error *err)
{
	(void)spec;
	struct gm_job *j = base;
	void *in = NULL;
	int rc = cod_get_maps(o, field, &file_maps, base, a, &in, &j->ninputs,
			      err);
	j->inputs = in;
	return rc;
}

static const struct cod_field job_fields[] = {
	{"jobID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0,
	 offsetof(struct gm_job, job_id), NULL},
	{"nEvents", COD_F_LONG, 0, 0, CDJ_MAX_EVENTS, 0, 0,
	 offsetof(struct gm_job, nevents), NULL},
	{"inputFiles", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_files},
};

/* A jobID twice would be placed twice. */
static const struct cod_maps job_maps = {
	.max = CDJ_MAX_JOBS,
	.what = "job",
	.f = job_fields,
	.nf = COD_NELEM(job_fields),
	.size = sizeof(struct gm_job),
	.uniq = {{"jobID", "jobID", offsetof(struct gm_job, job_id), 0}},
};

static int get_jobs(const msgpack_object *o, const char *field,
		    const struct cod_field *spec, void *base, struct arena *a,
		    struct cod_error *err)
{
	(void)spec;
	struct req_dec *d = base;
	void *jobs = NULL;
	int rc = cod_get_maps(o, field, &job_maps, base, a, &jobs, &d->r.njobs,
			      err);
	d->r.jobs = jobs;
	return rc;
}

#define RQ(m) offsetof(struct req_dec, r.m)

/* In the order of the message contract (schemas/messages/job.broker.md);
** the first problem in this order is the one reported. Required-ness,
** ranges and defaults are those of the JSON request (scenario_jobs.c), so
** `explain` and the worker accept the same requests. */
static const struct cod_field req_fields[] = {
	{"taskID", COD_F_LLONG, 1, 1, LLONG_MAX, 0, 0, RQ(t.task_id), NULL},
	{"nucleus", COD_F_STR, 0, 0, 0, 0, 1, RQ(t.nucleus), NULL},
	{"gshare", COD_F_STR, 0, 0, 0, 0, 1, RQ(t.gshare), NULL},
	{"jobScope", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_scope},
	{"currentPriority", COD_F_LONG, 0, 0, 1000000, 0, 0, RQ(t.priority),
	 NULL},
	{"processingType", COD_F_STR, 0, 0, 0, 0, 0, RQ(t.processing_type),
	 NULL},
	{"ioIntensity", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.io_intensity), NULL},
	{"diskIO", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.diskio), NULL},
	{"coreCount", COD_F_LONG, 0, 1, CDJ_MAX_CORES, 0, 0, RQ(t.core_count),
	 NULL},
	{"maxCoreCount", COD_F_LONG, 0, 0, CDJ_MAX_CORES, 0, 0,
	 RQ(t.max_core_count), NULL},
	{"baseRamCount", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.base_ram), NULL},
	{"ramCount", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.ram_count), NULL},
	{"outDiskCount", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.out_disk_count),
	 NULL},
	{"outDiskCountUnit", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_out_unit},
	{"workDiskCount", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.work_disk_count),
	 NULL},
	{"cpuTime", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.cpu_time), NULL},
	{"cpuEfficiency", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_efficiency},
	{"baseWalltime", COD_F_NUM, 0, 0, 0, 0, 0, RQ(t.base_time), NULL},
	{"ipConnectivity", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_ipconn},
	{"directAccessOnly", COD_F_BOOL, 0, 0, 0, 0, 0,
	 RQ(t.direct_access_only), NULL},
	{"useEventService", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(t.use_es), NULL},
	{"dynamicNEvents", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(t.dynamic_nevents),
	 NULL},
	{"t1Weight", COD_F_NUM, 0, 0, 0, -INFINITY, 0, RQ(t.t1_weight), NULL},
	{"architecture", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_arch},
	{"containerName", COD_F_STR, 0, 0, 0, 0, 0, RQ(need.container_name),
	 NULL},
	{"onlyTagsForFC", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(need.only_tags_fc),
	 NULL},
	{"swProject", COD_F_STR, 0, 0, 0, 0, 0, RQ(need.sw_project), NULL},
	{"swVersion", COD_F_STR, 0, 0, 0, 0, 0, RQ(need.sw_version), NULL},
	{"swKind", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_kind},
	{"preassigned", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_preassigned},
	{"preassignSkippedSince", COD_F_LLONG, 0, 0, CDJ_MAX_TIME, 0, 0,
	 RQ(t.preassign_skipped_since), NULL},
	{"scout", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(t.scout), NULL},
	{"merge", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(t.merge), NULL},
	{"premerged", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(t.premerged), NULL},
	/* "anal" adds the rows of analysis_fields; see cdj_decode_request */
	{"taskType", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_task_type},
	{"jobs", COD_F_CUSTOM, 1, 0, 0, 0, 0, 0, get_jobs},
};

#define NREQ_FIELDS COD_NELEM(req_fields)

/*
** The fields of an analysis request (taskType "anal"), read from the same
** root map after req_fields. A production request's copies of these keys
** are ignored like unknown keys, as the JSON request parser
** (scenario_jobs.c) ignores them, so `explain` and the worker accept the
** same production requests. userName is required, which the table cannot
** say since it depends on taskType: cdj_decode_request checks it.
*/
static const struct cod_field analysis_fields[] = {
	{"userName", COD_F_STR, 0, 0, 0, 0, 1, RQ(an.user), NULL},
	{"workingGroup", COD_F_STR, 0, 0, 0, 0, 1, RQ(an.working_group),
	 NULL},
	{"taskPriority", COD_F_LONG, 0, 0, CDJ_MAX_TASK_PRIORITY, 0, 0,
	 RQ(an.task_priority), NULL},
	{"ramCountUnit", COD_F_CUSTOM, 0, 0, 0, 0, 0, 0, get_ram_unit},
	{"excludedSite", COD_F_CUSTOM, 0, 0, 0, 0, 0, RQ(an.excluded_sites),
	 get_sites},
	{"includedSite", COD_F_CUSTOM, 0, 0, 0, 0, 0, RQ(an.included_sites),
	 get_sites},
	{"avoidVP", COD_F_BOOL, 0, 0, 0, 0, 0, RQ(an.avoid_vp), NULL},
};

#define NANALYSIS_FIELDS COD_NELEM(analysis_fields)

/* A production request's analysis part, and the start of an analysis
** one: zero but for the two defaults. */
static void analysis_defaults(struct gm_analysis *an)
{
	memset(an, 0, sizeof(*an));
	an->task_priority = CDJ_DEFAULT_TASK_PRIORITY;
	an->ram_per_core = 1;
}

/* The defaults of absent or nil fields (everything else is zero). */
static void req_defaults(struct req_dec *d)
{
	memset(d, 0, sizeof(*d));
	d->r.t.scope = TB_SCOPE_SATELLITES;
	d->r.t.processing_type = "";
	d->r.t.core_count = 1;
	d->r.t.cpu_efficiency = 100;
	d->r.t.ip_connectivity = "";
	d->r.architecture = "";
	d->r.need.container_name = "";
	d->r.need.sw_project = "";
	d->r.need.sw_version = "";
	d->r.need.kind = RC_RELEASE;
	analysis_defaults(&d->r.an);
}

/* The analysis rows, read from the root map after req_fields (whose key
** rules were checked then) only for an analysis request. */
static int decode_analysis(const msgpack_object *root, void *base,
			   struct arena *a, struct cod_error *err)
{
	struct req_dec *d = base;
	if (!d->r.an.is_analysis)
		return GB_OK;
	return cod_decode_fields(root, "", analysis_fields, NANALYSIS_FIELDS,
				 base, a, err);
}

static const struct cod_msg req_msg = {CDJ_MAX_VALUES, req_fields,
				       NREQ_FIELDS, decode_analysis};

int cdj_decode_request(const void *buf, size_t len, struct arena *a,
		       struct gm_request *out, struct cdj_extra *extra,
		       struct cod_error *err)
{
	struct req_dec d;
	req_defaults(&d);
	int rc = cod_decode_msg(buf, len, a, out, &req_msg, &d, err);
	if (rc != GB_OK)
		return rc;
	if (d.r.an.is_analysis && d.r.an.user == NULL)
		return cod_fail(err, GB_EMISSING, "userName",
				"required when taskType is anal");
	*out = d.r;
	if (extra)
		extra->has_scope = d.has_scope;
	return GB_OK;
}

/* ---- request encoding ------------------------------------------------ */

/* An optional string field: NULL is sent as "" (what the decoder gives). */
static const char *opt(const char *s)
{
	return s ? s : "";
}

static int nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

static int job_encodable(const struct gm_job *j)
{
	if (j->job_id < 1 || j->nevents < 0 || j->nevents > CDJ_MAX_EVENTS ||
	    j->ninputs > CDJ_MAX_FILES ||
	    (j->ninputs && j->inputs == NULL))
		return GB_EINVAL;
	const char *lfns[CDJ_MAX_FILES];
	for (size_t i = 0; i < j->ninputs; i++) {
		if (!cod_str_ok(j->inputs[i].lfn, 1) ||
		    !nonneg(j->inputs[i].size_mb))
			return GB_EINVAL;
		lfns[i] = j->inputs[i].lfn;
	}
	return cod_strs_unique(lfns, j->ninputs);
}

/* One site list of an analysis request, as get_sites would accept it. */
static int sites_encodable(const char *const *v, size_t n)
{
	if (n > CDJ_MAX_SITES || (n && v == NULL))
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!cod_str_ok(v[i], 1))
			return GB_EINVAL;
	return cod_strs_unique(v, n);
}

/* The analysis fields of an analysis request, as the decoder checks
** them; a production request's are not sent, so not checked. */
static int analysis_encodable(const struct gm_analysis *an)
{
	if (!an->is_analysis)
		return GB_OK;
	if (!cod_str_ok(an->user, 1) ||
	    (an->working_group && !cod_str_ok(an->working_group, 1)) ||
	    an->task_priority < 0 ||
	    an->task_priority > CDJ_MAX_TASK_PRIORITY ||
	    (an->ram_per_core != 0 && an->ram_per_core != 1))
		return GB_EINVAL;
	int rc = sites_encodable(an->excluded_sites, an->nexcluded);
	if (rc == GB_OK)
		rc = sites_encodable(an->included_sites, an->nincluded);
	return rc;
}

static int pack_sites(msgpack_packer *pk, const char *key,
		      const char *const *v, size_t n)
{
	int bad = cod_pack_str(pk, key);
	bad |= msgpack_pack_array(pk, n);
	for (size_t i = 0; i < n; i++)
		bad |= cod_pack_str(pk, v[i]);
	return bad;
}

/* taskType, and for an analysis request every analysis field. */
static int pack_analysis(msgpack_packer *pk, const struct gm_analysis *an)
{
	int bad = cod_pack_kstr(pk, "taskType",
				an->is_analysis ? "anal" : "prod");
	if (!an->is_analysis)
		return bad;
	bad |= cod_pack_kstr(pk, "userName", an->user);
	bad |= cod_pack_kstr(pk, "workingGroup", an->working_group);
	bad |= cod_pack_kint(pk, "taskPriority", an->task_priority);
	bad |= cod_pack_kstr(pk, "ramCountUnit",
			     an->ram_per_core ? "MBPerCore" : "MB");
	bad |= pack_sites(pk, "excludedSite", an->excluded_sites,
			  an->nexcluded);
	bad |= pack_sites(pk, "includedSite", an->included_sites,
			  an->nincluded);
	bad |= cod_pack_kbool(pk, "avoidVP", an->avoid_vp);
	return bad;
}

/* Everything cdj_decode_request would refuse, refused before encoding:
** 0, GB_EINVAL, or GB_ENOMEM when the duplicate check cannot allocate. */
static int request_encodable(const struct gm_request *r)
{
	const struct jb_task *t = &r->t;
	const struct rc_need *nd = &r->need;
	struct rc_arch arch;
	/* An analysis task has no nucleus; "" (what the JSON request and
	** explain use for it) is not sent. */
	int no_nucleus = r->an.is_analysis && t->nucleus && !t->nucleus[0];
	if (t->task_id < 1 ||
	    (t->nucleus && !no_nucleus && !cod_str_ok(t->nucleus, 1)) ||
	    (t->gshare && !cod_str_ok(t->gshare, 1)) ||
	    (unsigned)t->scope > TB_SCOPE_NUCLEUS_ONLY ||
	    t->priority < 0 || t->priority > 1000000 ||
	    !cod_str_ok(opt(t->processing_type), 0) ||
	    !nonneg(t->io_intensity) || !nonneg(t->diskio) ||
	    t->core_count < 1 || t->core_count > CDJ_MAX_CORES ||
	    t->max_core_count < 0 || t->max_core_count > CDJ_MAX_CORES ||
	    !nonneg(t->base_ram) || !nonneg(t->ram_count) ||
	    !nonneg(t->out_disk_count) || !nonneg(t->work_disk_count) ||
	    !nonneg(t->cpu_time) || !efficiency_ok(t->cpu_efficiency) ||
	    !nonneg(t->base_time) ||
	    !cod_str_ok(opt(t->ip_connectivity), 0) ||
	    !ipconn_ok(opt(t->ip_connectivity)) || !isfinite(t->t1_weight) ||
	    !cod_str_ok(opt(r->architecture), 0) ||
	    rc_parse_arch(opt(r->architecture), &arch) != GB_OK ||
	    !cod_str_ok(opt(nd->container_name), 0) ||
	    !cod_str_ok(opt(nd->sw_project), 0) ||
	    !cod_str_ok(opt(nd->sw_version), 0) ||
	    (unsigned)nd->kind > RC_NIGHTLY ||
	    t->npreassigned > CDJ_MAX_PREASSIGNED ||
	    (t->npreassigned && t->preassigned == NULL) ||
	    t->preassign_skipped_since < 0 ||
	    t->preassign_skipped_since > CDJ_MAX_TIME || r->njobs < 1 ||
	    r->njobs > CDJ_MAX_JOBS || r->jobs == NULL)
		return GB_EINVAL;
	for (size_t i = 0; i < t->npreassigned; i++)
		if (!cod_str_ok(t->preassigned[i], 1))
			return GB_EINVAL;
	int rc = cod_strs_unique(t->preassigned, t->npreassigned);
	if (rc == GB_OK)
		rc = analysis_encodable(&r->an);
	for (size_t i = 0; rc == GB_OK && i < r->njobs; i++)
		rc = job_encodable(&r->jobs[i]);
	if (rc != GB_OK)
		return rc;
	return cod_ids_unique(r->jobs, r->njobs, sizeof(r->jobs[0]),
			      offsetof(struct gm_job, job_id), 0);
}

int cdj_encode_request_ext(const struct gm_request *r,
			   const struct cdj_extra *extra, msgpack_sbuffer *out)
{
	if (r == NULL || out == NULL)
		return GB_EINVAL;
	int rc = request_encodable(r);
	if (rc != GB_OK)
		return rc;
	const struct jb_task *t = &r->t;
	const struct rc_need *nd = &r->need;
	int scope = extra && extra->has_scope;
	/* every row of req_fields, less the keys left out */
	const char *nucleus =
		(r->an.is_analysis && t->nucleus && !t->nucleus[0]) ? NULL
								    : t->nucleus;
	size_t nkeys = NREQ_FIELDS - !nucleus - !t->gshare - !scope +
		       (r->an.is_analysis ? NANALYSIS_FIELDS : 0);
	msgpack_packer pk;
	msgpack_packer_init(&pk, out, msgpack_sbuffer_write);
	int bad = msgpack_pack_map(&pk, nkeys);
	bad |= cod_pack_kint(&pk, "taskID", t->task_id);
	if (nucleus)
		bad |= cod_pack_kstr(&pk, "nucleus", nucleus);
	if (t->gshare)
		bad |= cod_pack_kstr(&pk, "gshare", t->gshare);
	if (scope)
		bad |= cod_pack_kstr(&pk, "jobScope",
				     t->scope == TB_SCOPE_NUCLEUS_ONLY
					     ? "nucleus"
					     : "satellites");
	bad |= cod_pack_kint(&pk, "currentPriority", t->priority);
	bad |= cod_pack_kstr(&pk, "processingType", opt(t->processing_type));
	bad |= cod_pack_kdbl(&pk, "ioIntensity", t->io_intensity);
	bad |= cod_pack_kdbl(&pk, "diskIO", t->diskio);
	bad |= cod_pack_kint(&pk, "coreCount", t->core_count);
	bad |= cod_pack_kint(&pk, "maxCoreCount", t->max_core_count);
	bad |= cod_pack_kdbl(&pk, "baseRamCount", t->base_ram);
	bad |= cod_pack_kdbl(&pk, "ramCount", t->ram_count);
	bad |= cod_pack_kdbl(&pk, "outDiskCount", t->out_disk_count);
	bad |= cod_pack_kstr(&pk, "outDiskCountUnit",
			     jb_out_unit_name(t->out_disk_unit));
	bad |= cod_pack_kdbl(&pk, "workDiskCount", t->work_disk_count);
	bad |= cod_pack_kdbl(&pk, "cpuTime", t->cpu_time);
	bad |= cod_pack_kdbl(&pk, "cpuEfficiency", t->cpu_efficiency);
	bad |= cod_pack_kdbl(&pk, "baseWalltime", t->base_time);
	bad |= cod_pack_kstr(&pk, "ipConnectivity", opt(t->ip_connectivity));
	bad |= cod_pack_kbool(&pk, "directAccessOnly", t->direct_access_only);
	bad |= cod_pack_kbool(&pk, "useEventService", t->use_es);
	bad |= cod_pack_kbool(&pk, "dynamicNEvents", t->dynamic_nevents);
	bad |= cod_pack_kdbl(&pk, "t1Weight", t->t1_weight);
	bad |= cod_pack_kstr(&pk, "architecture", opt(r->architecture));
	bad |= cod_pack_kstr(&pk, "containerName", opt(nd->container_name));
	bad |= cod_pack_kbool(&pk, "onlyTagsForFC", nd->only_tags_fc);
	bad |= cod_pack_kstr(&pk, "swProject", opt(nd->sw_project));
	bad |= cod_pack_kstr(&pk, "swVersion", opt(nd->sw_version));
	bad |= cod_pack_kstr(&pk, "swKind",
			     nd->kind == RC_NIGHTLY ? "nightly" : "release");
	bad |= cod_pack_str(&pk, "preassigned");
	bad |= msgpack_pack_array(&pk, t->npreassigned);
	for (size_t i = 0; i < t->npreassigned; i++)
		bad |= cod_pack_str(&pk, t->preassigned[i]);
	bad |= cod_pack_str(&pk, "preassignSkippedSince");
	bad |= t->preassign_skipped_since
		       ? msgpack_pack_long_long(&pk, t->preassign_skipped_since)
		       : msgpack_pack_nil(&pk);
	bad |= cod_pack_kbool(&pk, "scout", t->scout);
	bad |= cod_pack_kbool(&pk, "merge", t->merge);
	bad |= cod_pack_kbool(&pk, "premerged", t->premerged);
	bad |= pack_analysis(&pk, &r->an);
	bad |= cod_pack_str(&pk, "jobs");
	bad |= msgpack_pack_array(&pk, r->njobs);
	for (size_t i = 0; i < r->njobs && !bad; i++) {
		const struct gm_job *j = &r->jobs[i];
		bad |= msgpack_pack_map(&pk, 3);
		bad |= cod_pack_kint(&pk, "jobID", j->job_id);
		bad |= cod_pack_kint(&pk, "nEvents", j->nevents);
		bad |= cod_pack_str(&pk, "inputFiles");
		bad |= msgpack_pack_array(&pk, j->ninputs);
		for (size_t k = 0; k < j->ninputs; k++) {
			bad |= msgpack_pack_map(&pk, 2);
			bad |= cod_pack_kstr(&pk, "lfn", j->inputs[k].lfn);
			bad |= cod_pack_kdbl(&pk, "size", j->inputs[k].size_mb);
		}
	}
	return bad ? GB_ENOMEM : GB_OK;
}

int cdj_encode_request(const struct gm_request *r, msgpack_sbuffer *out)
{
	if (r == NULL)
		return GB_EINVAL;
	struct cdj_extra extra = {
		.has_scope = r->t.scope == TB_SCOPE_NUCLEUS_ONLY,
	};
	return cdj_encode_request_ext(r, &extra, out);
}

/* ---- events ------------------------------------------------------------ */

/* The plan must only name best queues, with a placed status. */
static int plan_valid(const struct cdj_event *ev, size_t *nunassigned)
{
	const struct dec_decision *d = ev->dec;
	const struct jb_plan *p = ev->plan;
	size_t njobs = ev->req->njobs;
	if (p->nbest > JB_BEST_N || (d->ncands && ev->queues == NULL) ||
	    (njobs && (ev->req->jobs == NULL || p->job_queue == NULL ||
		       p->job_status == NULL)))
		return 0;
	for (size_t b = 0; b < p->nbest; b++)
		if (p->best[b] < 0 || (size_t)p->best[b] >= d->ncands)
			return 0;
	size_t left = 0;
	for (size_t j = 0; j < njobs; j++) {
		long q = p->job_queue[j];
		if (q == -1) {
			left++;
			continue;
		}
		int in_best = 0;
		for (size_t b = 0; b < p->nbest; b++)
			in_best |= p->best[b] == q;
		if (!in_best || (p->job_status[j] != JB_JOB_ASSIGNED &&
				 p->job_status[j] != JB_JOB_ACTIVATED))
			return 0;
	}
	*nunassigned = left;
	return 1;
}

/* Jobs of the request that went to queue `q` with status `st`. */
static size_t group_size(const struct cdj_event *ev, long q,
			 enum jb_job_status st)
{
	const struct jb_plan *p = ev->plan;
	size_t n = 0;
	for (size_t j = 0; j < ev->req->njobs; j++)
		n += p->job_queue[j] == q && p->job_status[j] == st;
	return n;
}

/* assignments: one entry per (best queue, status) that got jobs. */
static int pack_assignments(msgpack_packer *pk, const struct cdj_event *ev)
{
	static const enum jb_job_status order[] = {JB_JOB_ASSIGNED,
						   JB_JOB_ACTIVATED};
	const struct jb_plan *p = ev->plan;
	size_t ngroups = 0;
	for (size_t b = 0; b < p->nbest; b++)
		for (size_t s = 0; s < 2; s++)
			ngroups += group_size(ev, p->best[b], order[s]) > 0;
	int bad = cod_pack_str(pk, "assignments");
	bad |= msgpack_pack_array(pk, ngroups);
	for (size_t b = 0; b < p->nbest; b++) {
		long q = p->best[b];
		for (size_t s = 0; s < 2; s++) {
			size_t n = group_size(ev, q, order[s]);
			if (n == 0)
				continue;
			const struct dec_candidate *c = &ev->dec->cands[q];
			bad |= msgpack_pack_map(pk, 4);
			bad |= cod_pack_kstr(pk, "queue",
					     c->name ? c->name
						     : ev->queues[q].name);
			bad |= cod_pack_kdbl(pk, "weight", c->weight);
			bad |= cod_pack_kstr(pk, "status",
					     jb_job_status_name(order[s]));
			bad |= cod_pack_str(pk, "jobIDs");
			bad |= msgpack_pack_array(pk, n);
			for (size_t j = 0; j < ev->req->njobs; j++)
				if (p->job_queue[j] == q &&
				    p->job_status[j] == order[s])
					bad |= msgpack_pack_long_long(
						pk, ev->req->jobs[j].job_id);
		}
	}
	return bad;
}

int cdj_encode_event(const struct cdj_event *ev, msgpack_sbuffer *out)
{
	if (ev == NULL || out == NULL || ev->event == NULL ||
	    ev->req == NULL || ev->dec == NULL || ev->plan == NULL ||
	    ev->req->t.gshare == NULL || ev->req->t.nucleus == NULL)
		return GB_EINVAL;
	const struct dec_decision *d = ev->dec;
	if (d->ncands && d->cands == NULL)
		return GB_EINVAL;
	size_t left = 0;
	if (!plan_valid(ev, &left))
		return GB_EINVAL;
	int assigned = d->outcome == DEC_ASSIGNED;
	/* Jobs left over are retried: the event must say when. */
	int with_retry = !assigned || left > 0;
	char decided[40], retry[40] = "";
	if (tf_format(ev->decided_at, decided, sizeof(decided)) !=
		    GB_OK ||
	    (with_retry && (ev->retry_at <= 0 ||
			    tf_format(ev->retry_at, retry,
					    sizeof(retry)) != GB_OK)))
		return GB_EINVAL;

	/* 8 common keys, the outcome's (assigned: assignments, unassigned
	** and maybe retryAt; pending: retryAfter, retryAt, njobs), then the
	** 3 keys of cod_pack_outcome. */
	size_t nkeys = 8 + (assigned ? 2 + (left > 0) : 3) + 3;
	msgpack_packer pk;
	int bad = cod_pack_event_start(&pk, out, nkeys, ev->event,
				       ev->decision_id, ev->request_id);
	bad |= cod_pack_kint(&pk, "taskID", ev->req->t.task_id);
	bad |= cod_pack_kstr(&pk, "gshare", ev->req->t.gshare);
	bad |= cod_pack_kstr(&pk, "nucleus", ev->req->t.nucleus);
	bad |= cod_pack_kstr(&pk, "decidedAt", decided);
	bad |= cod_pack_kint(&pk, "decidedAtUnix", ev->decided_at);
	if (assigned) {
		bad |= pack_assignments(&pk, ev);
		bad |= cod_pack_str(&pk, "unassigned");
		bad |= msgpack_pack_array(&pk, left);
		for (size_t j = 0; j < ev->req->njobs; j++)
			if (ev->plan->job_queue[j] == -1)
				bad |= msgpack_pack_long_long(
					&pk, ev->req->jobs[j].job_id);
		if (left > 0)
			bad |= cod_pack_kstr(&pk, "retryAt", retry);
	} else {
		bad |= cod_pack_kint(&pk, "retryAfter", d->retry_after_s);
		bad |= cod_pack_kstr(&pk, "retryAt", retry);
		bad |= cod_pack_kint(&pk, "njobs", (long long)ev->req->njobs);
	}
	if (bad)
		return GB_ENOMEM;
	return cod_pack_outcome(&pk, d);
}
