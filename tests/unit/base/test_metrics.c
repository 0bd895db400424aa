/*
** test_metrics.c — the metric registry and its Prometheus text: the exact
** exposition of counters, labelled counters, gauges and histograms (bucket
** cumulation, +Inf, _sum, _count), values outside the fixed label tables
** counted under "other", what is refused at registration, a buffer too
** small, the worker's catalogue, and the listen address parser of httpd.
*/
#include "gbtest.h"

#include <stdlib.h>

#include "decision.h"
#include "gb_error.h"
#include "base/hostlist.h"
#include "base/metrics.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const v_color[] = {"red", "green", "other"};
static const char *const v_size[] = {"small", "large"};
static const struct mx_dim d_color = {"color", v_color, NELEM(v_color)};
static const struct mx_dim d_size = {"size", v_size, NELEM(v_size)};
static const double b_two[] = {0.5, 1};

static const struct mx_def f_plain = {
	"t_things_total", "things seen", MX_COUNTER, {NULL, NULL}, NULL, 0, 0};
static const struct mx_def f_pair = {
	"t_items_total", "items", MX_COUNTER, {&d_color, &d_size}, NULL, 0, 0};
static const struct mx_def f_sparse = {
	"t_rare_total", "rare", MX_COUNTER, {&d_color, NULL}, NULL, 0, 1};
static const struct mx_def f_gauge = {
	"t_level", "level", MX_GAUGE, {NULL, NULL}, NULL, 0, 0};
static const struct mx_def f_hist = {
	"t_wait_seconds", "waits", MX_HISTOGRAM, {NULL, NULL}, b_two, 2, 0};
static const struct mx_def f_lhist = {
	"t_lat_seconds", "latency", MX_HISTOGRAM, {&d_size, NULL}, b_two, 2, 0};

/* One operation on the family registered first in a case. */
enum op_kind { ADD, SET, OBS, ADD_BY_NAME };
struct op {
	enum op_kind k;
	size_t i, j;
	double v;
	const char *name; /* ADD_BY_NAME: looked up in the family's dim[0] */
};

static const struct {
	const char *name;
	const struct mx_def *def;
	struct op ops[8];
	size_t nops;
	const char *want;
} cases[] = {
	{"counter without labels", &f_plain,
	 {{ADD, 0, 0, 1, NULL}, {ADD, 0, 0, 2, NULL}}, 2,
	 "# HELP t_things_total things seen\n"
	 "# TYPE t_things_total counter\n"
	 "t_things_total 3\n"},
	{"counter never touched renders 0", &f_plain, {{0}}, 0,
	 "# HELP t_things_total things seen\n"
	 "# TYPE t_things_total counter\n"
	 "t_things_total 0\n"},
	{"two labels, every series in table order", &f_pair,
	 {{ADD, 0, 1, 5, NULL}, {ADD, 2, 0, 1, NULL}, {ADD, 9, 0, 1, NULL},
	  {ADD, 0, 2, 1, NULL}},
	 4,
	 "# HELP t_items_total items\n"
	 "# TYPE t_items_total counter\n"
	 "t_items_total{color=\"red\",size=\"small\"} 0\n"
	 "t_items_total{color=\"red\",size=\"large\"} 5\n"
	 "t_items_total{color=\"green\",size=\"small\"} 0\n"
	 "t_items_total{color=\"green\",size=\"large\"} 0\n"
	 "t_items_total{color=\"other\",size=\"small\"} 1\n"
	 "t_items_total{color=\"other\",size=\"large\"} 0\n"},
	{"unknown label value counts as other; sparse skips zeros",
	 &f_sparse,
	 {{ADD_BY_NAME, 0, 0, 1, "blue"}, {ADD_BY_NAME, 0, 0, 1, NULL},
	  {ADD_BY_NAME, 0, 0, 1, "green"}},
	 3,
	 "# HELP t_rare_total rare\n"
	 "# TYPE t_rare_total counter\n"
	 "t_rare_total{color=\"green\"} 1\n"
	 "t_rare_total{color=\"other\"} 2\n"},
	{"gauge set then added, fractions printed shortest", &f_gauge,
	 {{SET, 0, 0, 7, NULL}, {SET, 0, 0, 0.1, NULL},
	  {ADD, 0, 0, 0.2, NULL}},
	 3,
	 "# HELP t_level level\n"
	 "# TYPE t_level gauge\n"
	 "t_level 0.30000000000000004\n"},
	{"histogram: buckets cumulate, le inclusive, +Inf, sum, count",
	 &f_hist,
	 {{OBS, 0, 0, 0.25, NULL}, {OBS, 0, 0, 0.5, NULL},
	  {OBS, 0, 0, 0.75, NULL}, {OBS, 0, 0, 4, NULL},
	  {OBS, 0, 0, NAN, NULL}, {SET, 0, 0, 9, NULL}},
	 6,
	 "# HELP t_wait_seconds waits\n"
	 "# TYPE t_wait_seconds histogram\n"
	 "t_wait_seconds_bucket{le=\"0.5\"} 2\n"
	 "t_wait_seconds_bucket{le=\"1\"} 3\n"
	 "t_wait_seconds_bucket{le=\"+Inf\"} 4\n"
	 "t_wait_seconds_sum 5.5\n"
	 "t_wait_seconds_count 4\n"},
	{"labelled histogram: le after the labels", &f_lhist,
	 {{OBS, 1, 0, 2, NULL}, {OBS, 5, 0, 2, NULL}}, 2,
	 "# HELP t_lat_seconds latency\n"
	 "# TYPE t_lat_seconds histogram\n"
	 "t_lat_seconds_bucket{size=\"small\",le=\"0.5\"} 0\n"
	 "t_lat_seconds_bucket{size=\"small\",le=\"1\"} 0\n"
	 "t_lat_seconds_bucket{size=\"small\",le=\"+Inf\"} 0\n"
	 "t_lat_seconds_sum{size=\"small\"} 0\n"
	 "t_lat_seconds_count{size=\"small\"} 0\n"
	 "t_lat_seconds_bucket{size=\"large\",le=\"0.5\"} 0\n"
	 "t_lat_seconds_bucket{size=\"large\",le=\"1\"} 0\n"
	 "t_lat_seconds_bucket{size=\"large\",le=\"+Inf\"} 1\n"
	 "t_lat_seconds_sum{size=\"large\"} 2\n"
	 "t_lat_seconds_count{size=\"large\"} 1\n"},
};

static void test_exposition(void **state)
{
	(void)state;
	static struct mx_registry r;
	for (size_t c = 0; c < NELEM(cases); c++) {
		mx_init(&r);
		int f = mx_register(&r, cases[c].def);
		if (f != 0)
			fail_msg("%s: register gave %d", cases[c].name, f);
		for (size_t k = 0; k < cases[c].nops; k++) {
			const struct op *o = &cases[c].ops[k];
			switch (o->k) {
			case ADD:
				mx_add(&r, f, o->i, o->j, o->v);
				break;
			case SET:
				mx_set(&r, f, o->i, o->j, o->v);
				break;
			case OBS:
				mx_observe(&r, f, o->i, o->j, o->v);
				break;
			case ADD_BY_NAME:
				mx_add(&r, f,
				       mx_index(cases[c].def->dim[0], o->name),
				       0, o->v);
				break;
			}
		}
		char buf[4096];
		size_t need = 0;
		int rc = mx_render(&r, buf, sizeof(buf), &need);
		if (rc != GB_OK || strcmp(buf, cases[c].want) != 0)
			fail_msg("%s: rc %d, got:\n%s\nwant:\n%s",
				 cases[c].name, rc, buf, cases[c].want);
		assert_int_equal(need, strlen(cases[c].want));
	}
}

/* Two families render one after the other; mx_get reads them back. */
static void test_families_in_order(void **state)
{
	(void)state;
	static struct mx_registry r;
	mx_init(&r);
	assert_int_equal(mx_register(&r, &f_gauge), 0);
	assert_int_equal(mx_register(&r, &f_plain), 1);
	mx_set(&r, 0, 0, 0, 2);
	mx_add(&r, 1, 0, 0, 1);
	mx_add(&r, 2, 0, 0, 1); /* no such family: ignored */
	mx_add(&r, -1, 0, 0, 1);
	assert_near(mx_get(&r, 0, 0, 0), 2, 0);
	assert_near(mx_get(&r, 1, 0, 0), 1, 0);
	assert_near(mx_get(&r, 7, 0, 0), 0, 0);
	char buf[512];
	size_t need;
	assert_int_equal(mx_render(&r, buf, sizeof(buf), &need), GB_OK);
	assert_string_equal(buf, "# HELP t_level level\n# TYPE t_level gauge\n"
				 "t_level 2\n"
				 "# HELP t_things_total things seen\n"
				 "# TYPE t_things_total counter\n"
				 "t_things_total 1\n");
}

/* A buffer too small: GB_ETOOBIG, the full length, a NUL-terminated
** prefix; exactly the length plus one fits. */
static void test_render_too_small(void **state)
{
	(void)state;
	static struct mx_registry r;
	mx_init(&r);
	mx_register(&r, &f_plain);
	mx_add(&r, 0, 0, 0, 12);
	const char *want = "# HELP t_things_total things seen\n"
			   "# TYPE t_things_total counter\n"
			   "t_things_total 12\n";
	char buf[128];
	size_t need = 0;
	assert_int_equal(mx_render(&r, buf, 10, &need), GB_ETOOBIG);
	assert_int_equal(need, strlen(want));
	assert_string_equal(buf, "# HELP t_");
	assert_int_equal(mx_render(&r, buf, need, &need), GB_ETOOBIG);
	assert_int_equal(mx_render(&r, buf, need + 1, &need), GB_OK);
	assert_string_equal(buf, want);
	assert_int_equal(mx_render(&r, NULL, 0, &need), GB_ETOOBIG);
	assert_int_equal(need, strlen(want));
}

static const char *const v_bad[] = {"fine", "has\"quote"};
static const struct mx_dim d_bad = {"x", v_bad, 2};
static const double b_down[] = {1, 0.5};
static const double b_many[MX_MAX_BOUNDS + 1] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};

/* What registration refuses. */
static void test_register_refuses(void **state)
{
	(void)state;
	static struct mx_registry r;
	static const struct {
		const char *name;
		struct mx_def def;
		int want;
	} bad[] = {
		{"no name", {NULL, "h", MX_COUNTER, {NULL, NULL}, NULL, 0, 0},
		 GB_EINVAL},
		{"label value needing escapes",
		 {"t", "h", MX_COUNTER, {&d_bad, NULL}, NULL, 0, 0}, GB_EINVAL},
		{"second label without a first",
		 {"t", "h", MX_COUNTER, {NULL, &d_size}, NULL, 0, 0},
		 GB_EINVAL},
		{"bounds not ascending",
		 {"t", "h", MX_HISTOGRAM, {NULL, NULL}, b_down, 2, 0},
		 GB_EINVAL},
		{"too many bounds",
		 {"t", "h", MX_HISTOGRAM, {NULL, NULL}, b_many,
		  MX_MAX_BOUNDS + 1, 0},
		 GB_EINVAL},
		{"histogram without bounds",
		 {"t", "h", MX_HISTOGRAM, {NULL, NULL}, NULL, 0, 0}, GB_EINVAL},
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		mx_init(&r);
		int rc = mx_register(&r, &bad[i].def);
		if (rc != bad[i].want)
			fail_msg("%s: %d, want %d", bad[i].name, rc,
				 bad[i].want);
		assert_int_equal(r.nfam, 0);
	}
	/* Full: by families, and by cells (a family that would not fit
	** leaves the registry as it was). */
	mx_init(&r);
	for (int i = 0; i < MX_MAX_FAMILIES; i++)
		assert_int_equal(mx_register(&r, &f_plain), i);
	assert_int_equal(mx_register(&r, &f_plain), GB_ETOOBIG);
	static const char *many[MX_MAX_CELLS / 2 + 1];
	for (size_t i = 0; i < NELEM(many); i++)
		many[i] = "v";
	static const struct mx_dim d_many = {"v", many, NELEM(many)};
	static const struct mx_def f_big = {"t_big", "big", MX_COUNTER,
					    {&d_many, &d_size}, NULL, 0, 0};
	mx_init(&r);
	assert_int_equal(mx_register(&r, &f_big), GB_ETOOBIG);
	assert_int_equal(r.ncells, 0);
}

/* The worker's catalogue: up, a rule outside the table under "other", a
** decision's rejections by rule, a dead letter of an unknown key, the
** backlog gauges and when they were counted, the outbox's age (a negative
** one is 0) and the claim conflicts. */
static void test_catalogue(void **state)
{
	(void)state;
	assert_int_equal(mx_wk_init("9.9.9", 1700000000), GB_OK);
	struct dec_candidate cands[3];
	struct dec_decision dec;
	dec_init(&dec, cands, 3);
	dec_reject(&cands[0], "space", "TB-04", "space", "%g", NULL, 1, 0, 0,
		   0);
	dec_reject(&cands[0], "space", "TB-07", "x", "%g", NULL, 1, 0, 0, 0);
	dec_reject(&cands[2], "space", "TB-04", "space", "%g", NULL, 1, 0, 0,
		   0);
	mx_wk_decision(&dec);
	mx_wk_rejection("ZZ-99");
	mx_wk_rejection(NULL);
	mx_wk_dead_letter("no.such.key");
	mx_wk_dead_letter("job.status");
	mx_wk_request(MX_T_PILOT_MATCH, MX_O_NOMATCH, 2);
	mx_wk_decision_latency(MX_T_TASK_BROKER, 0.003);
	const double backlog[MX_NBACKLOG] = {
		[MX_B_TASKS_PENDING] = 3,   [MX_B_JOB_REQUESTS_PENDING] = 2,
		[MX_B_JOBS_PENDING] = 140,  [MX_B_TASKS_THROTTLED] = 1,
		[MX_B_JOBS_THROTTLED] = 25, [MX_B_DIRAC_JOBS_WAITING] = 1000000,
	};
	mx_wk_backlog(backlog, 1700000042);
	mx_wk_claim_conflict();
	mx_wk_claim_conflict();
	mx_wk_outbox_age(-3);
	size_t need = 0;
	assert_int_equal(mx_render(mx_wk(), NULL, 0, &need), GB_ETOOBIG);
	char *neg = malloc(need + 1);
	assert_non_null(neg);
	assert_int_equal(mx_render(mx_wk(), neg, need + 1, &need), GB_OK);
	assert_non_null(strstr(neg, "\ngridbroker_outbox_oldest_seconds 0\n"));
	free(neg);
	mx_wk_outbox_age(61.5);
	assert_int_equal(mx_render(mx_wk(), NULL, 0, &need), GB_ETOOBIG);
	char *buf = malloc(need + 1);
	assert_non_null(buf);
	assert_int_equal(mx_render(mx_wk(), buf, need + 1, &need), GB_OK);
	static const char *const want[] = {
		"\ngridbroker_up 1\n",
		"\ngridbroker_build_info{version=\"9.9.9\"} 1\n",
		"\ngridbroker_start_time_seconds 1700000000\n",
		"\ngridbroker_rejections_total{rule=\"TB-04\"} 2\n",
		"\ngridbroker_rejections_total{rule=\"TB-07\"} 1\n",
		"\ngridbroker_rejections_total{rule=\"other\"} 2\n",
		"\ngridbroker_dead_letters_total{type=\"other\"} 1\n",
		"\ngridbroker_dead_letters_total{type=\"job.status\"} 1\n",
		"\ngridbroker_requests_total{type=\"pilot.match\","
		"outcome=\"nomatch\"} 2\n",
		"\ngridbroker_requests_total{type=\"task.broker\","
		"outcome=\"assigned\"} 0\n",
		"\ngridbroker_decision_duration_seconds_bucket{type=\"task."
		"broker\",le=\"0.0025\"} 0\n",
		"\ngridbroker_decision_duration_seconds_bucket{type=\"task."
		"broker\",le=\"0.005\"} 1\n",
		"\ngridbroker_decision_duration_seconds_count{type=\"task."
		"broker\"} 1\n",
		"\n# TYPE gridbroker_db_roundtrip_seconds histogram\n",
		"\n# TYPE gridbroker_amqp_confirm_seconds histogram\n",
		"\ngridbroker_reconnects_total{target=\"db\"} 0\n",
		"\n# TYPE gridbroker_backlog gauge\n",
		"\ngridbroker_backlog{what=\"tasks_pending\"} 3\n",
		"\ngridbroker_backlog{what=\"job_requests_pending\"} 2\n",
		"\ngridbroker_backlog{what=\"jobs_pending\"} 140\n",
		"\ngridbroker_backlog{what=\"tasks_throttled\"} 1\n",
		"\ngridbroker_backlog{what=\"jobs_throttled\"} 25\n",
		"\ngridbroker_backlog{what=\"dirac_jobs_waiting\"} 1000000\n",
		"\ngridbroker_backlog_time_seconds 1700000042\n",
		"\n# TYPE gridbroker_outbox_oldest_seconds gauge\n",
		"\ngridbroker_outbox_oldest_seconds 61.5\n",
		"\n# TYPE gridbroker_claim_conflicts_total counter\n",
		"\ngridbroker_claim_conflicts_total 2\n",
	};
	for (size_t i = 0; i < NELEM(want); i++)
		if (strstr(buf, want[i]) == NULL)
			fail_msg("missing %s", want[i]);
	/* Rules never seen are not rendered (sparse). */
	assert_null(strstr(buf, "rule=\"PJ-01\""));
	free(buf);
}

/* httpd's listen address: host, port, loopback or not. */
static void test_parse_listen(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *host;
		int port, loopback;
		const char *err; /* NULL: accepted */
	} rows[] = {
		{"127.0.0.1:9464", "127.0.0.1", 9464, 1, NULL},
		{"127.9.8.7:0", "127.9.8.7", 0, 1, NULL},
		{"localhost:1", "localhost", 1, 1, NULL},
		{"[::1]:65535", "::1", 65535, 1, NULL},
		{"0.0.0.0:9464", "0.0.0.0", 9464, 0, NULL},
		{"[::]:9464", "::", 9464, 0, NULL},
		{"10.1.2.3:80", "10.1.2.3", 80, 0, NULL},
		{"gb1.example.org:9", "gb1.example.org", 9, 0, NULL},
		{"", NULL, 0, 0, "empty address"},
		{"127.0.0.1", NULL, 0, 0, "\"127.0.0.1\": expected host:port"},
		{":9464", NULL, 0, 0, "\":9464\": bad host"},
		{"127.0.0.1:", NULL, 0, 0, "\"127.0.0.1:\": bad port"},
		{"127.0.0.1:-1", NULL, 0, 0, "bad port"},
		{"127.0.0.1:65536", NULL, 0, 0, "bad port"},
		{"127.0.0.1:80x", NULL, 0, 0, "bad port"},
		{"::1:80", NULL, 0, 0, "expected host:port"},
		{"[::1]80", NULL, 0, 0, "expected [IPv6 address]:port"},
	};
	for (size_t i = 0; i < NELEM(rows); i++) {
		char host[64] = "", err[160] = "";
		int port = -1, loop = -1;
		int rc = hl_parse_listen(rows[i].spec, host, sizeof(host),
					 &port, &loop, err, sizeof(err));
		if (rows[i].err) {
			if (rc != GB_ECONFIG || strstr(err, rows[i].err) == NULL)
				fail_msg("%s: rc %d, err '%s', want '%s'",
					 rows[i].spec, rc, err, rows[i].err);
			continue;
		}
		if (rc != GB_OK)
			fail_msg("%s: rc %d: %s", rows[i].spec, rc, err);
		assert_string_equal(host, rows[i].host);
		assert_int_equal(port, rows[i].port);
		assert_int_equal(loop, rows[i].loopback);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exposition),
		cmocka_unit_test(test_families_in_order),
		cmocka_unit_test(test_render_too_small),
		cmocka_unit_test(test_register_refuses),
		cmocka_unit_test(test_catalogue),
		cmocka_unit_test(test_parse_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
