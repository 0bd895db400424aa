/*
** fuzz_job_status.c — fuzz target for job.status, both forms, routed as
** the worker routes them (route_status.c and route_tq.c wk_handle_job_status):
** cdp_status_system() reads "system" and picks cdp_decode_status (PanDA)
** or cdt_decode_status (DIRAC).
**
** Besides the round trip of each form (encode, decode to the same update,
** encode to the same bytes) the target checks that the probe and the
** decoders agree: a body the probe refuses is refused by the PanDA
** decoder too (and, when it is not a msgpack map at all, by the DIRAC
** decoder), a body the probe calls DIRAC is never a valid PanDA update,
** and each encoder's output is probed as its own form.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "fuzz.h"
#include "gb_error.h"

static int dirac_eq(const struct cdt_status *a, const struct cdt_status *b)
{
	return a->job_id == b->job_id && a->status == b->status &&
	       a->time == b->time && fz_str_eq(a->site, b->site);
}

static int panda_eq(const struct cdp_status *a, const struct cdp_status *b)
{
	return a->job_id == b->job_id && a->heartbeat == b->heartbeat &&
	       a->status == b->status && a->time == b->time &&
	       fz_str_eq(a->job_sub_status, b->job_sub_status) &&
	       fz_str_eq(a->site, b->site);
}

/* An encoding must be probed as the form it was encoded as. */
static void check_probe(const msgpack_sbuffer *e, enum cdp_system want)
{
	struct cod_error err;
	enum cdp_system sys = want == CDP_SYS_PANDA ? CDP_SYS_DIRAC
						     : CDP_SYS_PANDA;
	FZ_CHECK(cdp_status_system(e->data, e->size, &sys, &err) == GB_OK &&
			 sys == want,
		 "an encoded update is probed as its own form");
}

static void dirac_checked(const void *obj, const uint8_t *buf, size_t len)
{
	const struct cdt_status *s = obj;
	(void)buf;
	(void)len;
	FZ_CHECK(cdt_status_name(s->status) != NULL && s->time >= 0 &&
			 s->time <= CDT_MAX_TIME && s->job_id >= 1,
		 "a DIRAC update is in range");
}

static void dirac_probed(const msgpack_sbuffer *e, const void *obj,
			 struct arena *a)
{
	(void)obj;
	(void)a;
	check_probe(e, CDP_SYS_DIRAC);
}

static int dirac_decode(const uint8_t *buf, size_t len, struct arena *a,
			void *s, struct cod_error *err)
{
	return cdt_decode_status(buf, len, a, s, err);
}

static int dirac_encode(const void *s, msgpack_sbuffer *out)
{
	return cdt_encode_status(s, out);
}

static int dirac_same(const void *x, const void *y)
{
	return dirac_eq(x, y);
}

static const struct fz_codec dirac_codec = {
	.what = "job.status (DIRAC)",
	.obj_size = sizeof(struct cdt_status),
	.decode = dirac_decode,
	.encode = dirac_encode,
	.same = dirac_same,
	.check_decoded = dirac_checked,
	.check_encoded = dirac_probed,
};

static void panda_checked(const void *obj, const uint8_t *buf, size_t len)
{
	const struct cdp_status *s = obj;
	(void)buf;
	(void)len;
	FZ_CHECK(s->job_id >= 1 && s->time >= 0 && s->time <= CDP_MAX_TIME,
		 "a PanDA update is in range");
	FZ_CHECK(s->heartbeat || s->status != TO_ST_PENDING,
		 "a producer never sets pending");
}

static void panda_probed(const msgpack_sbuffer *e, const void *obj,
			 struct arena *a)
{
	(void)obj;
	(void)a;
	check_probe(e, CDP_SYS_PANDA);
}

static int panda_decode(const uint8_t *buf, size_t len, struct arena *a,
			void *s, struct cod_error *err)
{
	return cdp_decode_status(buf, len, a, s, err);
}

static int panda_encode(const void *s, msgpack_sbuffer *out)
{
	return cdp_encode_status(s, out);
}

static int panda_same(const void *x, const void *y)
{
	return panda_eq(x, y);
}

static const struct fz_codec panda_codec = {
	.what = "job.status (PanDA)",
	.obj_size = sizeof(struct cdp_status),
	.decode = panda_decode,
	.encode = panda_encode,
	.same = panda_same,
	.check_decoded = panda_checked,
	.check_encoded = panda_probed,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FZ_MAX_MESSAGE)
		return 0;
	struct arena a;
	arena_init(&a, FZ_ARENA_BYTES);
	struct cod_error err;
	enum cdp_system sys = CDP_SYS_DIRAC;
	int rc = cdp_status_system(data, size, &sys, &err);
	if (rc != GB_OK) {
		/* what the worker dead-letters; the decoders must agree */
		fz_check_refusal(rc, &err);
		struct cdp_status ps;
		FZ_CHECK(cdp_decode_status(data, size, &a, &ps, &err) != GB_OK,
			 "a body the probe refuses is no PanDA update");
		if (rc == GB_EDECODE) {
			struct cdt_status ds;
			FZ_CHECK(cdt_decode_status(data, size, &a, &ds, &err) !=
					 GB_OK,
				 "a body that is no msgpack map is no DIRAC "
				 "update");
		}
	} else if (sys == CDP_SYS_PANDA) {
		fz_round_trip(&panda_codec, data, size, &a);
	} else {
		struct cdp_status ps;
		FZ_CHECK(cdp_decode_status(data, size, &a, &ps, &err) != GB_OK,
			 "a body probed as DIRAC is no PanDA update");
		fz_round_trip(&dirac_codec, data, size, &a);
	}
	arena_free(&a);
	return 0;
}
