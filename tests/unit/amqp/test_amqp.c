/*
** test_amqp.c — the AMQP module's pure parts, without a broker: reconnect
** backoff, the confirm window (out-of-order and `multiple` confirms, loss
** on teardown) and the reading of a confirm, property and header tables in
** both directions, and the texts that explain a broker's refusal.
*/
#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include "amqp/amqp_internal.h"
#include "gb_error.h"

/* ---- backoff ------------------------------------------------------------ */

static void test_backoff_doubles_caps_and_jitters(void **state)
{
	(void)state;
	/* rnd 0 gives the lowest factor 0.8, all ones nearly 1.2, and
	** 1 << 63 exactly 1.0. */
	static const struct {
		unsigned attempt;
		int max_s;
		uint64_t rnd;
		long min_ms, max_ms;
	} cases[] = {
		{0, 30, 1ULL << 63, 500, 500},
		{1, 30, 1ULL << 63, 1000, 1000},
		{2, 30, 1ULL << 63, 2000, 2000},
		{5, 30, 1ULL << 63, 16000, 16000},
		{6, 30, 1ULL << 63, 30000, 30000},   /* capped */
		{60, 30, 1ULL << 63, 30000, 30000},  /* no overflow */
		{500, 30, 1ULL << 63, 30000, 30000},
		{0, 30, 0, 400, 400},                /* -20 % */
		{0, 30, UINT64_MAX, 599, 600},       /* just under +20 % */
		{3, 1, 1ULL << 63, 1000, 1000},      /* cap below the base */
		{0, 0, 1ULL << 63, 500, 500},        /* 0 means 1 s cap */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long ms = amq_backoff_ms(cases[i].attempt, cases[i].max_s,
					 cases[i].rnd);
		if (ms < cases[i].min_ms || ms > cases[i].max_ms)
			fail_msg("case %zu: %ld ms not in [%ld, %ld]", i, ms,
				 cases[i].min_ms, cases[i].max_ms);
	}
}

static void test_backoff_jitter_spreads(void **state)
{
	(void)state;
	uint64_t s = 12345;
	long lo = 1000000, hi = 0;
	for (int i = 0; i < 2000; i++) {
		long ms = amq_backoff_ms(2, 30, amq_xorshift64(&s));
		assert_true(ms >= 1600 && ms < 2400);
		if (ms < lo)
			lo = ms;
		if (ms > hi)
			hi = ms;
	}
	/* Two thousand draws cover nearly the whole ±20 % band. */
	assert_true(lo < 1650);
	assert_true(hi > 2350);
}

static void test_xorshift_is_deterministic_and_nonzero(void **state)
{
	(void)state;
	uint64_t a = 42, b = 42;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = amq_xorshift64(&a);
		assert_true(x == amq_xorshift64(&b));
		assert_true(a != 0);
	}
}

/* ---- confirm window --------------------------------------------------------- */

struct seen {
	uint64_t tags[64];
	size_t n;
};

static void record(void *arg, uint64_t tag)
{
	struct seen *s = arg;
	if (s->n < 64)
		s->tags[s->n++] = tag;
}

static void expect_tags(const struct seen *s, const uint64_t *want, size_t n)
{
	assert_int_equal(s->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(s->tags[i], want[i]);
}

static void test_window_single_multiple_and_order(void **state)
{
	(void)state;
	struct amq_window w;
	assert_int_equal(amq_win_init(&w, 8), GB_OK);
	for (uint64_t t = 1; t <= 6; t++)
		assert_int_equal(amq_win_push(&w), t);
	assert_int_equal(w.pending, 6);

	struct seen s = {{0}, 0};
	/* Out of order: 3 first; nothing retires yet. */
	assert_int_equal(amq_win_confirm(&w, 3, 0, record, &s), 1);
	expect_tags(&s, (const uint64_t[]){3}, 1);
	assert_int_equal(w.low, 1);
	/* multiple up to 4 covers 1, 2, 4 (3 is done already). */
	s.n = 0;
	assert_int_equal(amq_win_confirm(&w, 4, 1, record, &s), 3);
	expect_tags(&s, (const uint64_t[]){1, 2, 4}, 3);
	assert_int_equal(w.low, 5);
	assert_int_equal(w.pending, 2);
	/* Duplicates, already retired and never-published tags: ignored. */
	s.n = 0;
	assert_int_equal(amq_win_confirm(&w, 3, 0, record, &s), 0);
	assert_int_equal(amq_win_confirm(&w, 4, 1, record, &s), 0);
	assert_int_equal(amq_win_confirm(&w, 7, 0, record, &s), 0);
	assert_int_equal(amq_win_confirm(&w, 99, 1, record, &s), 0);
	assert_int_equal(s.n, 0);
	/* Teardown: the rest are lost, and the next channel starts at 1. */
	assert_int_equal(amq_win_drain(&w, record, &s), 2);
	expect_tags(&s, (const uint64_t[]){5, 6}, 2);
	assert_int_equal(w.pending, 0);
	assert_int_equal(amq_win_push(&w), 1);
	amq_win_free(&w);
}

static void test_window_ring_wraps_and_fills(void **state)
{
	(void)state;
	struct amq_window w;
	assert_int_equal(amq_win_init(&w, 4), GB_OK);
	for (uint64_t t = 1; t <= 4; t++)
		assert_int_equal(amq_win_push(&w), t);
	assert_false(amq_win_has_room(&w));
	assert_int_equal(amq_win_push(&w), 0);
	/* A hole at the low end keeps the ring full even though only one
	** publish is pending. */
	assert_int_equal(amq_win_confirm(&w, 2, 0, NULL, NULL), 1);
	assert_int_equal(amq_win_confirm(&w, 3, 0, NULL, NULL), 1);
	assert_int_equal(amq_win_confirm(&w, 4, 0, NULL, NULL), 1);
	assert_int_equal(w.pending, 1);
	assert_false(amq_win_has_room(&w));
	assert_int_equal(amq_win_confirm(&w, 1, 0, NULL, NULL), 1);
	assert_true(amq_win_has_room(&w));
	/* Many laps around the ring keep tags and flags straight. */
	for (uint64_t t = 5; t < 5 + 40; t++) {
		assert_int_equal(amq_win_push(&w), t);
		if (t % 2 == 0)
			assert_int_equal(amq_win_confirm(&w, t, 1, NULL, NULL),
					 2);
	}
	assert_int_equal(w.pending, 0);
	amq_win_free(&w);
}

struct repush {
	struct amq_window *w;
	struct seen s;
};

static void push_from_callback(void *arg, uint64_t tag)
{
	struct repush *r = arg;
	record(&r->s, tag);
	amq_win_push(r->w); /* a publish from inside on_confirm */
}

static void test_window_callback_may_publish(void **state)
{
	(void)state;
	struct amq_window w;
	assert_int_equal(amq_win_init(&w, 3), GB_OK);
	for (int i = 0; i < 3; i++)
		amq_win_push(&w);
	struct repush r = {&w, {{0}, 0}};
	/* Each retired tag frees a slot before the callback runs. */
	assert_int_equal(amq_win_confirm(&w, 3, 1, push_from_callback, &r), 3);
	expect_tags(&r.s, (const uint64_t[]){1, 2, 3}, 3);
	assert_int_equal(w.next, 7);
	assert_int_equal(w.pending, 3);
	amq_win_free(&w);
}

struct resetter {
	struct amq_window *w;
	struct seen s, lost;
};

static void lose(void *arg, uint64_t tag)
{
	struct resetter *r = arg;
	record(&r->lost, tag);
}

static void drain_from_callback(void *arg, uint64_t tag)
{
	struct resetter *r = arg;
	record(&r->s, tag);
	/* amq_free inside on_confirm drains the window under the walk. */
	if (r->s.n == 1)
		amq_win_drain(r->w, lose, r);
}

static void test_window_callback_may_drain(void **state)
{
	(void)state;
	struct amq_window w;
	assert_int_equal(amq_win_init(&w, 8), GB_OK);
	for (int i = 0; i < 5; i++)
		amq_win_push(&w);
	struct resetter r = {&w, {{0}, 0}, {{0}, 0}};
	/* The walk stops after the first tag; the rest are reported once,
	** as lost, and the window is empty. */
	assert_int_equal(amq_win_confirm(&w, 4, 1, drain_from_callback, &r), 1);
	expect_tags(&r.s, (const uint64_t[]){1}, 1);
	expect_tags(&r.lost, (const uint64_t[]){2, 3, 4, 5}, 4);
	assert_int_equal(w.pending, 0);
	assert_int_equal(w.low, 1);
	assert_int_equal(w.next, 1);
	amq_win_free(&w);
}

/* Both clients read a confirm's tag and `multiple` flag through one
** function; an ack and a nack are told apart. */
static void test_confirm_read_ack_and_nack(void **state)
{
	(void)state;
	amqp_basic_ack_t ack = {.delivery_tag = 7, .multiple = 1};
	amqp_basic_nack_t nack = {.delivery_tag = 9, .multiple = 0};
	amqp_method_t m = {AMQP_BASIC_ACK_METHOD, &ack};
	uint64_t tag = 0;
	int multiple = -1;
	assert_int_equal(amq_confirm_read(&m, &tag, &multiple), 1);
	assert_int_equal(tag, 7);
	assert_int_equal(multiple, 1);
	m = (amqp_method_t){AMQP_BASIC_NACK_METHOD, &nack};
	assert_int_equal(amq_confirm_read(&m, &tag, &multiple), 0);
	assert_int_equal(tag, 9);
	assert_int_equal(multiple, 0);
}

/* ---- properties ------------------------------------------------------------- */

static int has_flag(const amqp_basic_properties_t *bp, amqp_flags_t f)
{
	return (bp->_flags & f) != 0;
}

static int bytes_are(amqp_bytes_t b, const char *s)
{
	return b.len == strlen(s) && memcmp(b.bytes, s, b.len) == 0;
}

static void test_export_sets_what_is_given(void **state)
{
	(void)state;
	const char *hdr[] = {AMQ_ERROR_HEADER, "task_id: not an integer",
			     "x-origin", "cli", NULL};
	struct amq_props p = {
		.message_id = "m-1",
		.type = "task.assigned",
		.content_type = "application/msgpack",
		.correlation_id = "c-9",
		.reply_to = "amq.rabbitmq.reply-to",
		.expiration = "30000",
		.user_id = "gridbroker-pilot",
		.persistent = 1,
		.headers = hdr,
	};
	amqp_basic_properties_t bp;
	amqp_table_entry_t ents[4];
	assert_int_equal(amq_props_export(&p, 1700000000, &bp, ents, 4), GB_OK);
	assert_true(has_flag(&bp, AMQP_BASIC_MESSAGE_ID_FLAG));
	assert_true(bytes_are(bp.message_id, "m-1"));
	assert_true(bytes_are(bp.type, "task.assigned"));
	assert_true(bytes_are(bp.content_type, "application/msgpack"));
	assert_true(bytes_are(bp.correlation_id, "c-9"));
	assert_true(bytes_are(bp.reply_to, "amq.rabbitmq.reply-to"));
	assert_true(has_flag(&bp, AMQP_BASIC_EXPIRATION_FLAG));
	assert_true(bytes_are(bp.expiration, "30000"));
	/* user_id: the account RabbitMQ validates (pilot grants) */
	assert_true(has_flag(&bp, AMQP_BASIC_USER_ID_FLAG));
	assert_true(bytes_are(bp.user_id, "gridbroker-pilot"));
	assert_true(bytes_are(bp.app_id, "gridbroker"));
	assert_int_equal(bp.delivery_mode, 2);
	assert_int_equal(bp.timestamp, 1700000000);
	assert_int_equal(bp.headers.num_entries, 2);
	assert_true(bytes_are(bp.headers.entries[0].key, AMQ_ERROR_HEADER));
	assert_int_equal(bp.headers.entries[1].value.kind,
			 AMQP_FIELD_KIND_UTF8);
	assert_true(bytes_are(bp.headers.entries[1].value.value.bytes, "cli"));

	/* Nothing given: only what every publish carries. */
	struct amq_props none = {0};
	assert_int_equal(amq_props_export(&none, 0, &bp, ents, 4), GB_OK);
	assert_int_equal(bp._flags, AMQP_BASIC_DELIVERY_MODE_FLAG |
					    AMQP_BASIC_APP_ID_FLAG);
	assert_int_equal(bp.delivery_mode, 1);
	/* "" sends no user_id (gridbroker publish --no-user-id) */
	none.user_id = "";
	assert_int_equal(amq_props_export(&none, 0, &bp, ents, 4), GB_OK);
	assert_false(has_flag(&bp, AMQP_BASIC_USER_ID_FLAG));
}

static void test_export_rejects_bad_headers(void **state)
{
	(void)state;
	char longkey[300];
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	const char *too_many[] = {"a", "1", "b", "2", "c", "3", NULL};
	const char *no_value[] = {"a", NULL};
	const char *long_key[] = {longkey, "v", NULL};
	const struct {
		const char *const *headers;
		size_t room;
		int want;
	} cases[] = {
		{too_many, 2, GB_ETOOBIG},
		{too_many, 3, GB_OK},
		{no_value, 4, GB_EINVAL},
		{long_key, 4, GB_EINVAL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct amq_props p = {.headers = cases[i].headers};
		amqp_basic_properties_t bp;
		amqp_table_entry_t ents[4];
		assert_int_equal(amq_props_export(&p, 0, &bp, ents,
						  cases[i].room),
				 cases[i].want);
	}
}

static amqp_table_entry_t ent_str(const char *k, const char *v, char kind)
{
	amqp_table_entry_t e;
	memset(&e, 0, sizeof(e));
	e.key = amqp_cstring_bytes(k);
	e.value.kind = (uint8_t)kind;
	e.value.value.bytes = amqp_cstring_bytes(v);
	return e;
}

static void test_import_copies_and_finds_headers(void **state)
{
	(void)state;
	amqp_table_entry_t ents[5];
	ents[0] = ent_str(AMQ_ERROR_HEADER, "body: not msgpack",
			  AMQP_FIELD_KIND_UTF8);
	ents[1] = ent_str("x-raw", "bytes", AMQP_FIELD_KIND_BYTES);
	memset(&ents[2], 0, sizeof(ents[2]));
	ents[2].key = amqp_cstring_bytes("x-delivery-count");
	ents[2].value.kind = AMQP_FIELD_KIND_I64;
	ents[2].value.value.i64 = 3;
	memset(&ents[3], 0, sizeof(ents[3]));
	ents[3].key = amqp_cstring_bytes("x-flag");
	ents[3].value.kind = AMQP_FIELD_KIND_BOOLEAN;
	ents[3].value.value.boolean = 1;
	/* Not NUL-terminated on the wire: a key that is a prefix of a longer
	** buffer must be copied by length. */
	ents[4].key = (amqp_bytes_t){3, (void *)"x-yZZZ"};
	ents[4].value.kind = AMQP_FIELD_KIND_UTF8;
	ents[4].value.value.bytes = (amqp_bytes_t){2, (void *)"okNOT"};

	amqp_basic_properties_t bp;
	memset(&bp, 0, sizeof(bp));
	bp._flags = AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG |
		    AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_TYPE_FLAG;
	bp.headers.num_entries = 5;
	bp.headers.entries = ents;
	bp.message_id = (amqp_bytes_t){4, (void *)"m-42tail"};
	bp.type = amqp_cstring_bytes("task.broker");
	bp.delivery_mode = 2;
	/* Flag not set: must be ignored even though the bytes are there. */
	bp.correlation_id = amqp_cstring_bytes("ignored");

	struct amq_imported im;
	assert_int_equal(amq_import(&bp, amqp_cstring_bytes("gridbroker.requests"),
				    amqp_cstring_bytes("task.broker"), &im),
			 GB_OK);
	assert_string_equal(im.exchange, "gridbroker.requests");
	assert_string_equal(im.routing_key, "task.broker");
	assert_string_equal(im.props.message_id, "m-42");
	assert_string_equal(im.props.type, "task.broker");
	assert_null(im.props.correlation_id);
	assert_null(im.props.content_type);
	assert_true(im.props.persistent);
	assert_string_equal(im.error_header, "body: not msgpack");
	assert_int_equal(im.delivery_count, 3);
	const char *const *h = im.props.headers;
	assert_string_equal(h[0], AMQ_ERROR_HEADER);
	assert_string_equal(h[2], "x-raw");
	assert_string_equal(h[3], "bytes");
	assert_string_equal(h[4], "x-y");
	assert_string_equal(h[5], "ok");
	assert_null(h[6]); /* x-delivery-count and x-flag are not strings */
	amq_imported_free(&im);

	/* No properties at all: an empty, still terminated header list. */
	memset(&bp, 0, sizeof(bp));
	assert_int_equal(amq_import(&bp, amqp_empty_bytes, amqp_empty_bytes,
				    &im),
			 GB_OK);
	assert_string_equal(im.exchange, "");
	assert_null(im.props.headers[0]);
	assert_null(im.error_header);
	assert_int_equal(im.delivery_count, 0);
	assert_false(im.props.persistent);
	amq_imported_free(&im);
}

static void test_export_import_round_trip(void **state)
{
	(void)state;
	const char *hdr[] = {"x-a", "1", AMQ_ERROR_HEADER, "e", NULL};
	struct amq_props p = {
		.message_id = "id",
		.type = "t",
		.content_type = "application/msgpack",
		.correlation_id = "c",
		.reply_to = "r",
		.expiration = "1500",
		.user_id = "u",
		.persistent = 1,
		.headers = hdr,
	};
	amqp_basic_properties_t bp;
	amqp_table_entry_t ents[AMQ_MAX_HEADERS];
	assert_int_equal(amq_props_export(&p, 5, &bp, ents, AMQ_MAX_HEADERS),
			 GB_OK);
	struct amq_imported im;
	assert_int_equal(amq_import(&bp, amqp_empty_bytes, amqp_empty_bytes,
				    &im),
			 GB_OK);
	assert_string_equal(im.props.message_id, p.message_id);
	assert_string_equal(im.props.type, p.type);
	assert_string_equal(im.props.content_type, p.content_type);
	assert_string_equal(im.props.correlation_id, p.correlation_id);
	assert_string_equal(im.props.reply_to, p.reply_to);
	assert_string_equal(im.props.expiration, p.expiration);
	assert_string_equal(im.props.user_id, p.user_id);
	assert_int_equal(im.props.persistent, 1);
	for (int i = 0; i < 4; i++)
		assert_string_equal(im.props.headers[i], hdr[i]);
	assert_null(im.props.headers[4]);
	assert_string_equal(im.error_header, "e");
	amq_imported_free(&im);
}

static void test_table_get_integer_kinds(void **state)
{
	(void)state;
	static const struct {
		char kind;
		long want;
	} cases[] = {
		{AMQP_FIELD_KIND_I8, -5},  {AMQP_FIELD_KIND_U8, 200},
		{AMQP_FIELD_KIND_I16, -300}, {AMQP_FIELD_KIND_U16, 60000},
		{AMQP_FIELD_KIND_I32, 70000}, {AMQP_FIELD_KIND_U32, 4000000000L},
		{AMQP_FIELD_KIND_I64, 1L << 40}, {AMQP_FIELD_KIND_U64, 7},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		amqp_table_entry_t e;
		memset(&e, 0, sizeof(e));
		e.key = amqp_cstring_bytes("n");
		e.value.kind = (uint8_t)cases[i].kind;
		switch (cases[i].kind) {
		case AMQP_FIELD_KIND_I8: e.value.value.i8 = (int8_t)cases[i].want; break;
		case AMQP_FIELD_KIND_U8: e.value.value.u8 = (uint8_t)cases[i].want; break;
		case AMQP_FIELD_KIND_I16: e.value.value.i16 = (int16_t)cases[i].want; break;
		case AMQP_FIELD_KIND_U16: e.value.value.u16 = (uint16_t)cases[i].want; break;
		case AMQP_FIELD_KIND_I32: e.value.value.i32 = (int32_t)cases[i].want; break;
		case AMQP_FIELD_KIND_U32: e.value.value.u32 = (uint32_t)cases[i].want; break;
		case AMQP_FIELD_KIND_I64: e.value.value.i64 = cases[i].want; break;
		default: e.value.value.u64 = (uint64_t)cases[i].want; break;
		}
		amqp_table_t t = {1, &e};
		long n = 0;
		assert_int_equal(amq_table_get(&t, "n", NULL, &n), 2);
		assert_int_equal(n, cases[i].want);
		assert_int_equal(amq_table_get(&t, "m", NULL, &n), 0);
	}
	/* A huge unsigned value saturates instead of wrapping negative. */
	amqp_table_entry_t big;
	memset(&big, 0, sizeof(big));
	big.key = amqp_cstring_bytes("n");
	big.value.kind = AMQP_FIELD_KIND_U64;
	big.value.value.u64 = UINT64_MAX;
	amqp_table_t t = {1, &big};
	long n = 0;
	assert_int_equal(amq_table_get(&t, "n", NULL, &n), 2);
	assert_true(n > 0);
	assert_int_equal(amq_table_get(NULL, "n", NULL, &n), 0);
}

/* ---- names and reply texts ---------------------------------------------------- */

static void test_queue_name(void **state)
{
	(void)state;
	char buf[32];
	assert_int_equal(amq_queue_name("task.broker", buf, sizeof(buf)), GB_OK);
	assert_string_equal(buf, "gridbroker.task.broker");
	assert_int_equal(amq_queue_name("a.very.long.request.type.name", buf,
					sizeof(buf)),
			 GB_ERANGE);
}

static void test_mismatch_argument_is_named(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *want; /* NULL: none found */
	} cases[] = {
		{"declare queue gridbroker.task.broker: broker closed the "
		 "channel: 406 PRECONDITION_FAILED - inequivalent arg "
		 "'x-queue-type' for queue 'gridbroker.task.broker' in vhost "
		 "'/': received the value 'quorum' of type 'longstr' but "
		 "current is none",
		 "x-queue-type"},
		{"406 PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit' "
		 "for queue 'q' in vhost '/': received '5' but current is '3'",
		 "x-delivery-limit"},
		{"406 PRECONDITION_FAILED - inequivalent arg 'durable' for "
		 "queue 'q'",
		 "durable"},
		{"404 NOT_FOUND - no queue 'q' in vhost '/'", NULL},
		{"inequivalent arg '", NULL},
		{"inequivalent arg ''", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char arg[64];
		int found = amq_mismatch_arg(cases[i].text, arg, sizeof(arg));
		if (cases[i].want) {
			assert_int_equal(found, 1);
			assert_string_equal(arg, cases[i].want);
		} else {
			assert_int_equal(found, 0);
			assert_string_equal(arg, "");
		}
	}
	char small[4];
	assert_int_equal(amq_mismatch_arg(cases[0].text, small, sizeof(small)),
			 1);
	assert_string_equal(small, "x-q");
}

static void test_reply_text(void **state)
{
	(void)state;
	char buf[200];
	amqp_rpc_reply_t r;
	memset(&r, 0, sizeof(r));
	r.reply_type = AMQP_RESPONSE_LIBRARY_EXCEPTION;
	r.library_error = AMQP_STATUS_SOCKET_ERROR;
	amq_reply_text(r, buf, sizeof(buf));
	assert_string_equal(buf, amqp_error_string2(AMQP_STATUS_SOCKET_ERROR));

	amqp_channel_close_t cc;
	memset(&cc, 0, sizeof(cc));
	cc.reply_code = 404;
	cc.reply_text = amqp_cstring_bytes("NOT_FOUND - no queue 'x'");
	r.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
	r.reply.id = AMQP_CHANNEL_CLOSE_METHOD;
	r.reply.decoded = &cc;
	amq_reply_text(r, buf, sizeof(buf));
	assert_string_equal(buf, "broker closed the channel: 404 NOT_FOUND - "
				 "no queue 'x'");

	amqp_connection_close_t xc;
	memset(&xc, 0, sizeof(xc));
	xc.reply_code = 320;
	xc.reply_text = amqp_cstring_bytes("CONNECTION_FORCED - shutdown");
	r.reply.id = AMQP_CONNECTION_CLOSE_METHOD;
	r.reply.decoded = &xc;
	amq_reply_text(r, buf, sizeof(buf));
	assert_string_equal(buf, "broker closed the connection: 320 "
				 "CONNECTION_FORCED - shutdown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_doubles_caps_and_jitters),
		cmocka_unit_test(test_backoff_jitter_spreads),
		cmocka_unit_test(test_xorshift_is_deterministic_and_nonzero),
		cmocka_unit_test(test_window_single_multiple_and_order),
		cmocka_unit_test(test_window_ring_wraps_and_fills),
		cmocka_unit_test(test_window_callback_may_publish),
		cmocka_unit_test(test_window_callback_may_drain),
		cmocka_unit_test(test_confirm_read_ack_and_nack),
		cmocka_unit_test(test_export_sets_what_is_given),
		cmocka_unit_test(test_export_rejects_bad_headers),
		cmocka_unit_test(test_import_copies_and_finds_headers),
		cmocka_unit_test(test_export_import_round_trip),
		cmocka_unit_test(test_table_get_integer_kinds),
		cmocka_unit_test(test_queue_name),
		cmocka_unit_test(test_mismatch_argument_is_named),
		cmocka_unit_test(test_reply_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
