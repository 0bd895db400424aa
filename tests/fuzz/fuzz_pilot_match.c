/*
** fuzz_pilot_match.c — fuzz target for pilot.match (cdt_decode_pilot).
**
** A refusal must be a documented code with a printable "field: problem".
** An accepted pilot must have its three required fields and its record
** site, ownerDN only with ownerGroup (TQ-04), requiredTags among its tags
** unless they are ANY, capped lists (strings or
** lists, ANY folded), must encode, decode again to the same pilot and
** encode again to the same bytes. The encoded pilot read as JSON by
** `gridbroker pilot match FILE` (dirac_json.c) must be the same pilot.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "fuzz.h"
#include "gb_error.h"

static int pilot_eq(const struct cdt_pilot *a, const struct cdt_pilot *b)
{
	int eq = fz_str_eq(a->pilot_id, b->pilot_id) &&
		 fz_str_eq(a->d.setup, b->d.setup) &&
		 a->d.cpu_time == b->d.cpu_time && fz_str_eq(a->site, b->site) &&
		 fz_strset_eq(&a->d.required, &b->d.required) &&
		 fz_strset_eq(&a->d.groups, &b->d.groups) &&
		 fz_strset_eq(&a->d.owners, &b->d.owners);
	for (int f = 0; eq && f < TQ_NPFIELDS; f++)
		eq = a->d.any[f] == b->d.any[f] &&
		     fz_strset_eq(&a->d.want[f], &b->d.want[f]) &&
		     fz_strset_eq(&a->d.banned[f], &b->d.banned[f]);
	return eq;
}

/* The encoding `e` of pilot `p`, as JSON, through the CLI's parser. */
static void check_json_parser(const msgpack_sbuffer *e, const void *p,
			      struct arena *a)
{
	json_t *j = fz_encoding_json(e);
	struct cdt_pilot q;
	char err[512] = "";
	fz_check_parsed(dj_parse_pilot(j, "pilot", a, &q, err, sizeof(err)),
			"dj_parse_pilot", err);
	FZ_CHECK(pilot_eq(p, &q), "the JSON parser reads the same pilot");
	json_decref(j);
}

/* The decoder's promises: the required fields, TQ-04's owner rule. */
static void check_decoded(const void *obj, const uint8_t *buf, size_t len)
{
	const struct cdt_pilot *p = obj;
	(void)buf;
	(void)len;
	FZ_CHECK(p->pilot_id && p->d.setup && p->site && p->d.cpu_time >= 1 &&
			 p->d.cpu_time <= CDT_MAX_CPU,
		 "the required fields are there and in range");
	FZ_CHECK(p->d.owners.n == 0 || p->d.groups.n > 0,
		 "ownerDN only with ownerGroup");
	FZ_CHECK(cdt_pilot_size(p) <= CDT_MAX_PILOT_BYTES,
		 "the description fits a worker's batch");
	/* DIRAC's "Wrong conditions": required tags are among the tags
	** unless the tags are ANY */
	for (size_t i = 0; !p->d.any[TQ_P_TAG] && i < p->d.required.n; i++) {
		int found = 0;
		for (size_t k = 0; k < p->d.want[TQ_P_TAG].n; k++)
			found |= fz_str_eq(p->d.required.v[i],
					   p->d.want[TQ_P_TAG].v[k]);
		FZ_CHECK(found, "requiredTags are among the tags");
	}
	for (int f = 0; f < TQ_NPFIELDS; f++)
		FZ_CHECK(p->d.want[f].n <= TQ_MAX_PILOT_VALUES &&
				 p->d.banned[f].n <= TQ_MAX_PILOT_VALUES &&
				 (!p->d.any[f] || p->d.want[f].n == 0),
			 "lists are capped, ANY leaves its list empty");
}

static int decode(const uint8_t *buf, size_t len, struct arena *a, void *p,
		  struct cod_error *err)
{
	return cdt_decode_pilot(buf, len, a, p, err);
}

static int encode(const void *p, msgpack_sbuffer *out)
{
	return cdt_encode_pilot(p, out);
}

static int same(const void *x, const void *y)
{
	return pilot_eq(x, y);
}

static const struct fz_codec pilot_codec = {
	.what = "pilot.match",
	.obj_size = sizeof(struct cdt_pilot),
	.decode = decode,
	.encode = encode,
	.same = same,
	.check_decoded = check_decoded,
	.check_encoded = check_json_parser,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_run(&pilot_codec, data, size, FZ_ARENA_BYTES);
}
