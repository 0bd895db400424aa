/*
** itc_store_grants.c — pilot_grants through the store (store_grants.h)
** against MariaDB: grants are added once (a repeat is no new row), read
** back sorted with their strings whole (a 255-byte DN), checked by
** st_grants_check as loaded, and revoked by row, by group and by account;
** values the table cannot hold are refused before any SQL. The rows are
** this test's own accounts' (itc-grants-*), deleted before and after: a
** row left behind would turn the workers' owner_check on for every other
** test ([dirac] owner_check auto).
*/
#include "itc_raw.h"

#include "store/store_grants.h"

#define ACC1 "itc-grants-a"
#define ACC2 "itc-grants-b"

static void cleanup(void)
{
	char out[64];
	raw_q(out, sizeof(out),
	      "DELETE FROM pilot_grants WHERE account LIKE 'itc-grants-%'", "");
}

ITC_GROUP_FIXTURE("itc_store_grants", cleanup)

/* Our rows of the loaded table. */
static size_t ours(const struct st_grants *g, const struct st_grant **first)
{
	size_t n = 0;
	*first = NULL;
	for (size_t i = 0; i < g->n; i++)
		if (strncmp(g->v[i].account, "itc-grants-", 11) == 0) {
			if (n == 0)
				*first = &g->v[i];
			n++;
		}
	return n;
}

static void test_add_load_check_remove(void **state)
{
	(void)state;
	char dn[256];
	memset(dn, 'x', 255);
	memcpy(dn, "/DC=ch/CN=", 10);
	dn[255] = '\0';
	int added = -1;
	/* inserted out of order; a repeat adds nothing */
	assert_int_equal(st_grant_add(db, ACC2, "*", NULL, 100, &added), GB_OK);
	assert_int_equal(added, 1);
	assert_int_equal(st_grant_add(db, ACC1, "lhcb_user", dn, 101, &added),
			 GB_OK);
	assert_int_equal(st_grant_add(db, ACC1, "lhcb_mc", NULL, 102, &added),
			 GB_OK);
	assert_int_equal(added, 1);
	assert_int_equal(st_grant_add(db, ACC1, "lhcb_mc", "*", 103, &added),
			 GB_OK);
	assert_int_equal(added, 0);

	struct arena a;
	arena_init(&a, 1 << 20);
	struct st_grants g;
	assert_int_equal(st_grants_load(db, &a, &g), GB_OK);
	const struct st_grant *r = NULL;
	assert_int_equal(ours(&g, &r), 3);
	assert_string_equal(r[0].account, ACC1);
	assert_string_equal(r[0].owner_group, "lhcb_mc");
	assert_string_equal(r[0].owner_dn, "*");
	assert_int_equal(r[0].granted_at, 102);
	assert_string_equal(r[1].owner_group, "lhcb_user");
	assert_string_equal(r[1].owner_dn, dn); /* whole, past the buffer */
	assert_string_equal(r[2].account, ACC2);
	assert_int_equal(st_grants_count(&g, ACC1), 2);

	/* the check reads what was loaded */
	const char *field = NULL;
	char problem[400];
	const char *mc[] = {"lhcb_mc"}, *user[] = {"lhcb_user"};
	const char *dns[] = {dn}, *eve[] = {"/DC=ch/CN=eve"};
	assert_int_equal(st_grants_check(&g, ACC1, mc, 1, NULL, 0, &field,
					 problem, sizeof(problem)),
			 1);
	assert_int_equal(st_grants_check(&g, ACC1, user, 1, dns, 1, &field,
					 problem, sizeof(problem)),
			 1);
	assert_int_equal(st_grants_check(&g, ACC1, user, 1, eve, 1, &field,
					 problem, sizeof(problem)),
			 0);
	assert_string_equal(field, "ownerDN");
	assert_int_equal(st_grants_check(&g, ACC1, NULL, 0, NULL, 0, &field,
					 problem, sizeof(problem)),
			 0);
	assert_int_equal(st_grants_check(&g, ACC2, NULL, 0, NULL, 0, &field,
					 problem, sizeof(problem)),
			 1);
	arena_free(&a);

	/* revoke one row, then a group, then an account */
	long long removed = -1;
	assert_int_equal(st_grant_remove(db, ACC1, "lhcb_user", "nobody",
					 &removed),
			 GB_OK);
	assert_int_equal(removed, 0);
	assert_int_equal(st_grant_remove(db, ACC1, "lhcb_user", dn, &removed),
			 GB_OK);
	assert_int_equal(removed, 1);
	assert_int_equal(st_grant_add(db, ACC1, "lhcb_mc", "/DC=ch/CN=a", 104,
				      NULL),
			 GB_OK);
	/* a group's revoke leaves the account's other groups */
	assert_int_equal(st_grant_add(db, ACC1, "lhcb_user", "/DC=ch/CN=keep",
				      105, NULL),
			 GB_OK);
	assert_int_equal(st_grant_remove(db, ACC1, "lhcb_mc", NULL, &removed),
			 GB_OK);
	assert_int_equal(removed, 2);
	assert_int_equal(st_grant_remove(db, ACC1, NULL, NULL, &removed),
			 GB_OK);
	assert_int_equal(removed, 1);
	assert_int_equal(st_grant_remove(db, ACC2, NULL, NULL, &removed),
			 GB_OK);
	assert_int_equal(removed, 1);
	arena_init(&a, 1 << 20);
	assert_int_equal(st_grants_load(db, &a, &g), GB_OK);
	assert_int_equal(ours(&g, &r), 0);
	arena_free(&a);
}

static void test_refused_values(void **state)
{
	(void)state;
	char long_acc[80];
	memset(long_acc, 'a', 65);
	long_acc[65] = '\0';
	char long_dn[300];
	memset(long_dn, 'd', 256);
	long_dn[256] = '\0';
	const struct {
		const char *account, *group, *dn, *why;
	} bad[] = {
		{"", "g", NULL, "account"},
		{long_acc, "g", NULL, "account"},
		{ACC1, "", NULL, "group"},
		{ACC1, "g\tx", NULL, "group"},
		{ACC1, "g", "", "owner DN"},
		{ACC1, "g", long_dn, "owner DN"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = st_grant_add(db, bad[i].account, bad[i].group,
				      bad[i].dn, 1, NULL);
		if (rc != GB_EINVAL || strstr(st_error(db), bad[i].why) == NULL)
			fail_msg("case %zu: rc %d, %s", i, rc, st_error(db));
	}
	long long removed = 0;
	assert_int_equal(st_grant_remove(db, ACC1, NULL, "x", &removed),
			 GB_EINVAL);
	char out[64];
	raw_q(out, sizeof(out),
	      "SELECT COUNT(*) FROM pilot_grants WHERE account LIKE "
	      "'itc-grants-%'",
	      "");
	assert_string_equal(out, "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_add_load_check_remove,
					  test_teardown),
		cmocka_unit_test_teardown(test_refused_values, test_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
