/*
** test_grants.c — st_grants_check, the pure half of store_grants.h: which
** groups and owners a pilot may claim for the account that sent it
** (issue 20, point 5; TQ-04 believed only as granted). Table-driven: one
** set of grants, one row per pilot.
*/
#include "gbtest.h"

#include <string.h>

#include "store/store_grants.h"

/* Sorted by account, group, DN, as st_grants_load leaves them. */
static struct st_grant rows[] = {
	{"gridbroker-generic", "*", "*", 0},
	{"pilot-lhcb", "lhcb_mc", "*", 0},
	{"pilot-lhcb", "lhcb_user", "/DC=ch/CN=alice", 0},
	{"pilot-lhcb", "lhcb_user", "/DC=ch/CN=bob", 0},
	{"pilot-ops", "*", "/DC=ch/CN=ops", 0},
};
static const struct st_grants grants = {rows, sizeof(rows) / sizeof(rows[0])};

struct row {
	const char *account;
	const char *groups[3]; /* NULL-terminated */
	const char *dns[3];
	int allowed;
	const char *field;     /* when refused */
	const char *problem;   /* a piece of the reason */
};

static const struct row table[] = {
	/* no user_id: never */
	{NULL, {"lhcb_mc"}, {NULL}, 0, "user_id", "missing"},
	{"", {"lhcb_mc"}, {NULL}, 0, "user_id", "missing"},
	/* an account without grants claims nothing */
	{"pilot-cms", {"cms_mc"}, {NULL}, 0, "ownerGroup",
	 "may not claim group 'cms_mc'"},
	{"pilot-cms", {NULL}, {NULL}, 0, "ownerGroup", "only send private"},
	/* the group granted for every owner */
	{"pilot-lhcb", {"lhcb_mc"}, {NULL}, 1, NULL, NULL},
	{"pilot-lhcb", {"lhcb_mc"}, {"/DC=ch/CN=anyone"}, 1, NULL, NULL},
	/* a group granted for some owners: only those, and named */
	{"pilot-lhcb", {"lhcb_user"}, {"/DC=ch/CN=alice"}, 1, NULL, NULL},
	{"pilot-lhcb", {"lhcb_user"}, {"/DC=ch/CN=alice", "/DC=ch/CN=bob"},
	 1, NULL, NULL},
	{"pilot-lhcb", {"lhcb_user"}, {"/DC=ch/CN=alice", "/DC=ch/CN=eve"},
	 0, "ownerDN", "owner '/DC=ch/CN=eve' in group 'lhcb_user'"},
	{"pilot-lhcb", {"lhcb_user"}, {NULL}, 0, "ownerGroup",
	 "may not claim group 'lhcb_user' for every owner"},
	/* every group of a list must be granted */
	{"pilot-lhcb", {"lhcb_mc", "lhcb_sgm"}, {NULL}, 0, "ownerGroup",
	 "group 'lhcb_sgm'"},
	{"pilot-lhcb", {"lhcb_mc", "lhcb_user"}, {"/DC=ch/CN=bob"}, 1, NULL,
	 NULL},
	/* another account's grants do not count */
	{"pilot-lhc", {"lhcb_mc"}, {NULL}, 0, "ownerGroup", "lhcb_mc"},
	{"pilot-lhcbx", {"lhcb_mc"}, {NULL}, 0, "ownerGroup", "lhcb_mc"},
	/* generic pilots need a '*' group grant */
	{"pilot-lhcb", {NULL}, {NULL}, 0, "ownerGroup", "only send private"},
	{"gridbroker-generic", {NULL}, {NULL}, 1, NULL, NULL},
	{"gridbroker-generic", {"cms_mc"}, {"/DC=ch/CN=x"}, 1, NULL, NULL},
	/* '*' group with one DN: any group, that owner only */
	{"pilot-ops", {"lhcb_mc", "cms_mc"}, {"/DC=ch/CN=ops"}, 1, NULL, NULL},
	{"pilot-ops", {"cms_mc"}, {NULL}, 0, "ownerGroup", "for every owner"},
	{"pilot-ops", {NULL}, {NULL}, 0, "ownerGroup", "only send private"},
	/* a '*' claimed by a pilot is a plain value, not a wildcard */
	{"pilot-lhcb", {"*"}, {NULL}, 0, "ownerGroup", "group '*'"},
	/* the sender's bytes are shown sanitised */
	{"pilot-lhcb", {"bad\ngroup"}, {NULL}, 0, "ownerGroup", "bad?group"},
};

static size_t count(const char *const *v)
{
	size_t n = 0;
	while (n < 3 && v[n])
		n++;
	return n;
}

static void test_check_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct row *r = &table[i];
		const char *field = NULL;
		char problem[400] = "";
		int got = st_grants_check(&grants, r->account, r->groups,
					  count(r->groups), r->dns,
					  count(r->dns), &field, problem,
					  sizeof(problem));
		if (got != r->allowed)
			fail_msg("row %zu (%s): got %d, want %d (%s: %s)", i,
				 r->account ? r->account : "NULL", got,
				 r->allowed, field ? field : "-", problem);
		if (r->allowed)
			continue;
		assert_non_null(field);
		if (strcmp(field, r->field) != 0 ||
		    strstr(problem, r->problem) == NULL)
			fail_msg("row %zu: %s: %s; want %s: ...%s...", i, field,
				 problem, r->field, r->problem);
	}
}

static void test_count(void **state)
{
	(void)state;
	assert_int_equal(st_grants_count(&grants, "pilot-lhcb"), 3);
	assert_int_equal(st_grants_count(&grants, "pilot-ops"), 1);
	assert_int_equal(st_grants_count(&grants, "pilot-lhc"), 0);
	assert_int_equal(st_grants_count(&grants, "zzz"), 0);
	assert_int_equal(st_grants_count(&grants, NULL), 0);
	const struct st_grants none = {NULL, 0};
	assert_int_equal(st_grants_count(&none, "pilot-lhcb"), 0);
	const char *field = NULL;
	char problem[200];
	const char *g[] = {"lhcb_mc"};
	assert_int_equal(st_grants_check(&none, "pilot-lhcb", g, 1, NULL, 0,
					 &field, problem, sizeof(problem)),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
