/*
** fuzz_pilot_match.c — fuzz target for pilot.match (cdt_decode_pilot).
**
** A refusal must be a documented code with a printable "field: problem".
** An accepted pilot must have its four required fields, ownerDN only with
** ownerGroup (TQ-04), must encode, decode again to the same pilot and
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
	return fz_str_eq(a->pilot_id, b->pilot_id) &&
	       fz_str_eq(a->setup, b->setup) && a->cpu_time == b->cpu_time &&
	       fz_str_eq(a->site, b->site) &&
	       fz_str_eq(a->grid_ce, b->grid_ce) &&
	       fz_str_eq(a->platform, b->platform) &&
	       fz_str_eq(a->pilot_type, b->pilot_type) &&
	       fz_str_eq(a->owner_group, b->owner_group) &&
	       fz_str_eq(a->owner, b->owner);
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
	FZ_CHECK(p->pilot_id && p->setup && p->site && p->cpu_time >= 1 &&
			 p->cpu_time <= CDT_MAX_CPU,
		 "the required fields are there and in range");
	FZ_CHECK(p->owner == NULL || p->owner_group != NULL,
		 "ownerDN only with ownerGroup");
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
