/*
** fuzz_job_broker.c — fuzz target for job.broker (cdj_decode_request),
** production and analysis requests alike.
**
** A refusal must be a documented code with a printable "field: problem";
** an accepted request must encode with cdj_encode_request_ext (passing
** whether jobScope was sent, as the decoder reports it), decode again to
** the same request field by field (task fields, software need, jobs and
** their files, the analysis part) and encode again to the same bytes.
** The encoded request read as JSON by `gridbroker job submit` and
** `explain` (scj_parse_request) must be accepted and the same request:
** codec_jobs.c promises the required fields, ranges and defaults of the
** JSON request.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "codec/codec_jobs.h"
#include "fuzz.h"
#include "gb_error.h"
#include "explain/scenario_jobs.h"
#include "base/timefmt.h"

static int names_eq(const char *const *a, size_t na, const char *const *b,
		    size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!fz_str_eq(a[i], b[i]))
			return 0;
	return 1;
}

static int task_eq(const struct jb_task *a, const struct jb_task *b)
{
	return a->task_id == b->task_id && fz_str_eq(a->gshare, b->gshare) &&
	       fz_str_eq(a->nucleus, b->nucleus) && a->scope == b->scope &&
	       a->priority == b->priority &&
	       fz_str_eq(a->processing_type, b->processing_type) &&
	       fz_dbl_eq(a->io_intensity, b->io_intensity) &&
	       fz_dbl_eq(a->diskio, b->diskio) &&
	       a->core_count == b->core_count &&
	       a->max_core_count == b->max_core_count &&
	       fz_dbl_eq(a->base_ram, b->base_ram) &&
	       fz_dbl_eq(a->ram_count, b->ram_count) &&
	       fz_dbl_eq(a->out_disk_count, b->out_disk_count) &&
	       a->out_disk_unit == b->out_disk_unit &&
	       fz_dbl_eq(a->work_disk_count, b->work_disk_count) &&
	       fz_dbl_eq(a->cpu_time, b->cpu_time) &&
	       fz_dbl_eq(a->cpu_efficiency, b->cpu_efficiency) &&
	       fz_dbl_eq(a->base_time, b->base_time) &&
	       fz_str_eq(a->ip_connectivity, b->ip_connectivity) &&
	       a->direct_access_only == b->direct_access_only &&
	       a->use_es == b->use_es &&
	       a->dynamic_nevents == b->dynamic_nevents &&
	       fz_dbl_eq(a->t1_weight, b->t1_weight) && a->scout == b->scout &&
	       a->merge == b->merge && a->premerged == b->premerged &&
	       names_eq(a->preassigned, a->npreassigned, b->preassigned,
			b->npreassigned) &&
	       a->preassign_skipped_since == b->preassign_skipped_since;
}

static int job_eq(const struct gm_job *a, const struct gm_job *b)
{
	if (a->job_id != b->job_id || a->nevents != b->nevents ||
	    a->ninputs != b->ninputs)
		return 0;
	for (size_t i = 0; i < a->ninputs; i++)
		if (!fz_str_eq(a->inputs[i].lfn, b->inputs[i].lfn) ||
		    !fz_dbl_eq(a->inputs[i].size_mb, b->inputs[i].size_mb))
			return 0;
	return 1;
}

static int analysis_eq(const struct gm_analysis *a, const struct gm_analysis *b)
{
	return a->is_analysis == b->is_analysis && fz_str_eq(a->user, b->user) &&
	       fz_str_eq(a->working_group, b->working_group) &&
	       a->task_priority == b->task_priority &&
	       a->ram_per_core == b->ram_per_core &&
	       names_eq(a->excluded_sites, a->nexcluded, b->excluded_sites,
			b->nexcluded) &&
	       names_eq(a->included_sites, a->nincluded, b->included_sites,
			b->nincluded) &&
	       a->avoid_vp == b->avoid_vp;
}

static int request_eq(const struct gm_request *a, const struct gm_request *b)
{
	if (!task_eq(&a->t, &b->t) ||
	    !fz_str_eq(a->need.container_name, b->need.container_name) ||
	    a->need.only_tags_fc != b->need.only_tags_fc ||
	    !fz_str_eq(a->need.sw_project, b->need.sw_project) ||
	    !fz_str_eq(a->need.sw_version, b->need.sw_version) ||
	    a->need.kind != b->need.kind ||
	    !fz_str_eq(a->architecture, b->architecture) ||
	    a->njobs != b->njobs || !analysis_eq(&a->an, &b->an))
		return 0;
	for (size_t i = 0; i < a->njobs; i++)
		if (!job_eq(&a->jobs[i], &b->jobs[i]))
			return 0;
	return 1;
}

/* A decoded request with what the decoder reports beside it (whether
** jobScope was sent, which the encoder needs to send it back). */
struct fz_jb {
	struct gm_request r;
	struct cdj_extra x;
};

/*
** The encoding `e` of request `r`, as JSON, through the CLI's parser.
** preassignSkippedSince is unix seconds in msgpack and RFC 3339 text in
** JSON (job.broker.md), so it is converted first. Two more differences
** are by design (scenario_jobs.h): an analysis request without nucleus
** or gshare gets "" and "User Analysis" from the JSON parser, where the
** worker completes them from the task record; and the JSON parser leaves
** a production request's analysis part zero, where the decoder fills in
** the defaults the encoder does not send.
*/
static void check_json_parser(const msgpack_sbuffer *e, const void *obj,
			      struct arena *a)
{
	const struct gm_request *r = &((const struct fz_jb *)obj)->r;
	json_t *j = fz_encoding_json(e);
	json_t *since = json_object_get(j, "preassignSkippedSince");
	if (json_is_integer(since)) {
		char text[40];
		FZ_CHECK(tf_format(json_integer_value(since), text,
				   sizeof(text)) == GB_OK,
			 "preassignSkippedSince has an RFC 3339 form");
		json_object_set_new(j, "preassignSkippedSince",
				    json_string(text));
	}
	struct gm_request p;
	char err[512] = "";
	fz_check_parsed(scj_parse_request(j, "request", a, 0, &p, err,
					  sizeof(err)),
			"scj_parse_request", err);
	if (r->an.is_analysis && r->t.nucleus == NULL &&
	    fz_str_eq(p.t.nucleus, ""))
		p.t.nucleus = NULL;
	if (r->an.is_analysis && r->t.gshare == NULL &&
	    fz_str_eq(p.t.gshare, "User Analysis"))
		p.t.gshare = NULL;
	if (!r->an.is_analysis) {
		FZ_CHECK(!p.an.is_analysis, "both read a production request");
		p.an = r->an;
	}
	FZ_CHECK(request_eq(r, &p), "the JSON parser reads the same request");
	json_decref(j);
}

static int decode(const uint8_t *buf, size_t len, struct arena *a, void *obj,
		  struct cod_error *err)
{
	struct fz_jb *v = obj;
	return cdj_decode_request(buf, len, a, &v->r, &v->x, err);
}

static int encode(const void *obj, msgpack_sbuffer *out)
{
	const struct fz_jb *v = obj;
	return cdj_encode_request_ext(&v->r, &v->x, out);
}

/* Equal requests, and jobScope sent exactly when it was received. */
static int same(const void *x, const void *y)
{
	const struct fz_jb *a = x, *b = y;
	return a->x.has_scope == b->x.has_scope && request_eq(&a->r, &b->r);
}

static const struct fz_codec request_codec = {
	.what = "job.broker",
	.obj_size = sizeof(struct fz_jb),
	.decode = decode,
	.encode = encode,
	.same = same,
	.check_encoded = check_json_parser,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_run(&request_codec, data, size, FZ_ARENA_BYTES);
}
