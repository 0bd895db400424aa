/*
** fuzz_job_submit.c — fuzz target for job.submit (cdt_decode_submit).
**
** A refusal must be a documented code with a printable "field: problem".
** An accepted submission must hold 1..CDT_MAX_JOBS jobs with distinct
** jobIDs and every requirement set sorted and without repeats (what the
** TQ-01 signature relies on), must encode, decode again to the same jobs
** and encode again to the same bytes. The encoded jobs read as JSON by
** `gridbroker tq submit` (dirac_json.c, which promises "whatever tq
** submit accepts the worker accepts") must be accepted and the same.
*/
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "fuzz.h"
#include "gb_error.h"

static int job_eq(const struct cdt_job *a, const struct cdt_job *b)
{
	if (a->job_id != b->job_id || !fz_str_eq(a->owner, b->owner) ||
	    !fz_str_eq(a->owner_group, b->owner_group) ||
	    !fz_str_eq(a->setup, b->setup) || a->cpu_time != b->cpu_time ||
	    a->user_priority != b->user_priority)
		return 0;
	for (int f = 0; f < TQ_NFIELDS; f++)
		if (!fz_strset_eq(&a->set[f], &b->set[f]))
			return 0;
	return 1;
}

/* The decoder's promise about what it hands the TQ-01 signature. */
static void check_decoded(const void *obj, const uint8_t *buf, size_t len)
{
	const struct cdt_submit *s = obj;
	(void)buf;
	(void)len;
	FZ_CHECK(s->njobs >= 1 && s->njobs <= CDT_MAX_JOBS && s->jobs,
		 "1..CDT_MAX_JOBS jobs");
	for (size_t i = 0; i < s->njobs; i++) {
		const struct cdt_job *j = &s->jobs[i];
		FZ_CHECK(j->job_id >= 1 && j->cpu_time >= 1 &&
				 j->cpu_time <= CDT_MAX_CPU,
			 "jobID and cpuTime in range");
		for (int f = 0; f < TQ_NFIELDS; f++) {
			const struct tq_strset *set = &j->set[f];
			FZ_CHECK(set->n <= CDT_MAX_SET, "a set within its limit");
			for (size_t k = 1; k < set->n; k++)
				FZ_CHECK(strcmp(set->v[k - 1], set->v[k]) < 0,
					 "a set is sorted without repeats");
		}
	}
}

static int jobs_eq(const struct cdt_job *a, size_t na,
		   const struct cdt_job *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (!job_eq(&a[i], &b[i]))
			return 0;
	return 1;
}

/* The encoding `e` of submission `s`, as JSON, through the CLI's parser. */
static void check_json_parser(const msgpack_sbuffer *e, const void *obj,
			      struct arena *a)
{
	const struct cdt_submit *s = obj;
	json_t *j = fz_encoding_json(e);
	struct cdt_job *jobs = NULL;
	size_t n = 0;
	char err[512] = "";
	fz_check_parsed(dj_parse_jobs(json_object_get(j, "jobs"), "jobs", a,
				      &jobs, &n, err, sizeof(err)),
			"dj_parse_jobs", err);
	FZ_CHECK(jobs_eq(s->jobs, s->njobs, jobs, n),
		 "the JSON parser reads the same jobs");
	json_decref(j);
}

static int decode(const uint8_t *buf, size_t len, struct arena *a, void *s,
		  struct cod_error *err)
{
	return cdt_decode_submit(buf, len, a, s, err);
}

static int encode(const void *s, msgpack_sbuffer *out)
{
	return cdt_encode_submit(s, out);
}

static int same(const void *x, const void *y)
{
	const struct cdt_submit *a = x, *b = y;
	return jobs_eq(a->jobs, a->njobs, b->jobs, b->njobs);
}

static const struct fz_codec submit_codec = {
	.what = "job.submit",
	.obj_size = sizeof(struct cdt_submit),
	.decode = decode,
	.encode = encode,
	.same = same,
	.check_decoded = check_decoded,
	.check_encoded = check_json_parser,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_run(&submit_codec, data, size, FZ_ARENA_BYTES);
}
