/*
** fuzz_task_broker.c — fuzz target for task.broker (cod_decode_task).
**
** Any bytes go in, as the worker gets them from RabbitMQ. A refusal must
** be a documented code with a printable "field: problem"; an accepted
** task must encode (cod_encode_task refuses what the decoder refuses, so
** a decoded task that will not encode is a decoder that accepts too
** much), decode again to the same task field by field, and encode again
** to the same bytes. The same task read as JSON by `gridbroker task
** submit` and `explain` (scenario.c) must be accepted and equal too: the
** worker and the offline what-if take the same requests.
*/
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "fuzz.h"
#include "gb_error.h"
#include "explain/scenario.h"

static int dataset_eq(const struct tb_dataset *a, const struct tb_dataset *b)
{
	return fz_str_eq(a->name, b->name) && a->primary == b->primary &&
	       fz_dbl_eq(a->size, b->size) && a->files == b->files &&
	       a->on_tape == b->on_tape;
}

static int task_eq(const struct tb_task *a, const struct tb_task *b)
{
	if (a->task_id != b->task_id || !fz_str_eq(a->gshare, b->gshare) ||
	    a->priority != b->priority ||
	    !fz_dbl_eq(a->io_intensity, b->io_intensity) ||
	    !fz_dbl_eq(a->t1_weight, b->t1_weight) ||
	    a->input_prestaging != b->input_prestaging ||
	    a->broker_on_master != b->broker_on_master ||
	    a->full_chain != b->full_chain ||
	    !fz_str_eq(a->parent_nucleus, b->parent_nucleus) ||
	    !fz_dbl_eq(a->norm_exp_out_size, b->norm_exp_out_size) ||
	    a->ndatasets != b->ndatasets)
		return 0;
	for (size_t i = 0; i < a->ndatasets; i++)
		if (!dataset_eq(&a->datasets[i], &b->datasets[i]))
			return 0;
	return 1;
}

/* The encoding `e` of task `t`, as JSON, through the CLI's parser. */
static void check_json_parser(const msgpack_sbuffer *e, const void *t,
			      struct arena *a)
{
	json_t *j = fz_encoding_json(e);
	struct tb_task p;
	char err[512] = "";
	fz_check_parsed(scn_parse_task(j, "task", a, &p, err, sizeof(err)),
			"scn_parse_task", err);
	FZ_CHECK(task_eq(t, &p), "the JSON parser reads the same task");
	json_decref(j);
}

static int decode(const uint8_t *buf, size_t len, struct arena *a, void *t,
		  struct cod_error *err)
{
	return cod_decode_task(buf, len, a, t, err);
}

static int encode(const void *t, msgpack_sbuffer *out)
{
	return cod_encode_task(t, out);
}

static int same(const void *x, const void *y)
{
	return task_eq(x, y);
}

static const struct fz_codec task_codec = {
	.what = "task.broker",
	.obj_size = sizeof(struct tb_task),
	.decode = decode,
	.encode = encode,
	.same = same,
	.check_encoded = check_json_parser,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_run(&task_codec, data, size, FZ_ARENA_BYTES);
}
