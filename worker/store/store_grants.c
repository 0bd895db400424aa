/*
** store_grants.c — pilot_grants: reading, granting, revoking, and the
** pure check of a pilot's claimed groups and owners (store_grants.h).
*/
#include "store/store_internal.h"
#include "store/store_grants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "gb_error.h"

enum {
	SID_LOAD = ST_SID_GRANTS_BASE,
	SID_ADD,
	SID_DEL_ONE,
	SID_DEL_GROUP,
	SID_DEL_ACCOUNT,
};

static const char SQL_LOAD[] =
	"SELECT account, owner_group, owner_dn, granted_at FROM pilot_grants "
	"ORDER BY account, owner_group, owner_dn";
static const char SQL_ADD[] =
	"INSERT IGNORE INTO pilot_grants (account, owner_group, owner_dn, "
	"granted_at) VALUES (?, ?, ?, ?)";
static const char SQL_DEL_ONE[] =
	"DELETE FROM pilot_grants WHERE account = ? AND owner_group = ? AND "
	"owner_dn = ?";
static const char SQL_DEL_GROUP[] =
	"DELETE FROM pilot_grants WHERE account = ? AND owner_group = ?";
static const char SQL_DEL_ACCOUNT[] =
	"DELETE FROM pilot_grants WHERE account = ?";

static int grant_cmp(const void *pa, const void *pb)
{
	const struct st_grant *a = pa, *b = pb;
	int c = strcmp(a->account, b->account);
	if (c == 0)
		c = strcmp(a->owner_group, b->owner_group);
	if (c == 0)
		c = strcmp(a->owner_dn, b->owner_dn);
	return c;
}

int st_grants_load(struct st_db *db, struct arena *a, struct st_grants *out)
{
	memset(out, 0, sizeof(*out));
	struct st_cols cols;
	st_cols_init(&cols, "sssl");
	MYSQL_STMT *s = NULL;
	int rc = st_query(db, (enum st_sid)SID_LOAD, SQL_LOAD, NULL, &cols,
			  &s);
	size_t rows = 0;
	struct st_grant *v = NULL;
	if (rc == GB_OK)
		v = st_result_array(db, s, a, sizeof(*v), "pilot grants",
				    &rows, &rc);
	size_t n = 0;
	while (v && st_row(db, s, &rc)) {
		struct st_grant *g = &v[n];
		rc = st_col_cstr(db, s, &cols, 0, a, &g->account);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &cols, 1, a, &g->owner_group);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &cols, 2, a, &g->owner_dn);
		if (rc == GB_OK && (g->account == NULL ||
				    g->owner_group == NULL ||
				    g->owner_dn == NULL))
			rc = st_failf(db, GB_EINVAL,
				      "pilot_grants: a NULL column");
		g->granted_at = st_col_ll(&cols, 3);
		if (rc == GB_OK && ++n == rows)
			break;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	/* The server's binary collation sorts as strcmp does; sorted here
	** again so the check never depends on it. */
	if (n > 1)
		qsort(v, n, sizeof(*v), grant_cmp);
	out->v = v;
	out->n = n;
	return GB_OK;
}

/* 1..max bytes of printable ASCII or UTF-8 (no control characters). */
static int value_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

int st_grant_add(struct st_db *db, const char *account, const char *group,
		 const char *dn, long long now, int *added)
{
	if (added)
		*added = 0;
	if (dn == NULL)
		dn = ST_GRANT_ANY;
	if (!value_ok(account, ST_GRANT_ACCOUNT_MAX))
		return st_failf(db, GB_EINVAL,
				"account: 1 to %d printable bytes",
				ST_GRANT_ACCOUNT_MAX);
	if (!value_ok(group, ST_GRANT_VALUE_MAX))
		return st_failf(db, GB_EINVAL,
				"group: 1 to %d printable bytes (or *)",
				ST_GRANT_VALUE_MAX);
	if (!value_ok(dn, ST_GRANT_VALUE_MAX))
		return st_failf(db, GB_EINVAL,
				"owner DN: 1 to %d printable bytes (or *)",
				ST_GRANT_VALUE_MAX);
	struct st_args args;
	st_args_init(&args);
	st_arg_str(&args, account);
	st_arg_str(&args, group);
	st_arg_str(&args, dn);
	st_arg_ll(&args, now);
	MYSQL_STMT *s = NULL;
	int rc = st_exec(db, (enum st_sid)SID_ADD, SQL_ADD, &args, &s);
	if (rc == GB_OK && added)
		*added = mysql_stmt_affected_rows(s) > 0;
	return rc;
}

int st_grant_remove(struct st_db *db, const char *account, const char *group,
		    const char *dn, long long *removed)
{
	if (removed)
		*removed = 0;
	if (account == NULL || (group == NULL && dn != NULL))
		return st_failf(db, GB_EINVAL,
				"st_grant_remove: an account, and a group "
				"with a DN");
	struct st_args args;
	st_args_init(&args);
	st_arg_str(&args, account);
	int sid = SID_DEL_ACCOUNT;
	const char *sql = SQL_DEL_ACCOUNT;
	if (group) {
		st_arg_str(&args, group);
		sid = SID_DEL_GROUP;
		sql = SQL_DEL_GROUP;
	}
	if (dn) {
		st_arg_str(&args, dn);
		sid = SID_DEL_ONE;
		sql = SQL_DEL_ONE;
	}
	MYSQL_STMT *s = NULL;
	int rc = st_exec(db, (enum st_sid)sid, sql, &args, &s);
	if (rc == GB_OK && removed)
		*removed = (long long)mysql_stmt_affected_rows(s);
	return rc;
}

/* ---- the check (pure) ------------------------------------------------------ */

/* The account's rows: [*lo, *lo + return). */
static size_t account_rows(const struct st_grants *g, const char *account,
			   size_t *lo)
{
	size_t a = 0, b = g ? g->n : 0;
	while (a < b) { /* first row >= account */
		size_t m = a + (b - a) / 2;
		if (strcmp(g->v[m].account, account) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	size_t k = a;
	while (g && k < g->n && strcmp(g->v[k].account, account) == 0)
		k++;
	return k - a;
}

size_t st_grants_count(const struct st_grants *g, const char *account)
{
	size_t lo;
	return account ? account_rows(g, account, &lo) : 0;
}

static int covers(const char *grant, const char *want)
{
	return strcmp(grant, ST_GRANT_ANY) == 0 ||
	       (want != NULL && strcmp(grant, want) == 0);
}

/* Does one of rows[0..n) grant `group` (NULL: generic) with `dn` (NULL:
** any owner)? */
static int granted(const struct st_grant *rows, size_t n, const char *group,
		   const char *dn)
{
	for (size_t i = 0; i < n; i++) {
		const struct st_grant *r = &rows[i];
		int g_ok = group ? covers(r->owner_group, group)
				 : strcmp(r->owner_group, ST_GRANT_ANY) == 0;
		int d_ok = dn ? covers(r->owner_dn, dn)
			      : strcmp(r->owner_dn, ST_GRANT_ANY) == 0;
		if (g_ok && d_ok)
			return 1;
	}
	return 0;
}

static void shown(char *dst, size_t n, const char *s)
{
	cod_sanitize(dst, n, s, strlen(s), n > 8 ? n - 8 : 1);
}

int st_grants_check(const struct st_grants *g, const char *account,
		    const char *const *groups, size_t ngroups,
		    const char *const *dns, size_t ndns, const char **field,
		    char *problem, size_t n)
{
	char acc[80], val[120], grp[120];
	if (account == NULL || account[0] == '\0') {
		*field = "user_id";
		snprintf(problem, n,
			 "missing: pilot accounts are checked ([dirac] "
			 "owner_check); publish with the AMQP user_id "
			 "property set to your RabbitMQ user");
		return 0;
	}
	size_t lo = 0, k = account_rows(g, account, &lo);
	const struct st_grant *rows = k ? &g->v[lo] : NULL;
	shown(acc, sizeof(acc), account);
	if (ngroups == 0) {
		if (granted(rows, k, NULL, NULL))
			return 1;
		*field = "ownerGroup";
		snprintf(problem, n,
			 "missing: account '%s' may only send private pilots "
			 "(it has no '*' grant for generic pilots)",
			 acc);
		return 0;
	}
	for (size_t i = 0; i < ngroups; i++) {
		if (ndns == 0) {
			if (granted(rows, k, groups[i], NULL))
				continue;
			shown(val, sizeof(val), groups[i]);
			*field = "ownerGroup";
			snprintf(problem, n,
				 "account '%s' may not claim group '%s' for "
				 "every owner (no pilot grant)",
				 acc, val);
			return 0;
		}
		for (size_t j = 0; j < ndns; j++) {
			if (granted(rows, k, groups[i], dns[j]))
				continue;
			shown(grp, sizeof(grp), groups[i]);
			shown(val, sizeof(val), dns[j]);
			/* Which of the two the account lacks: the group
			** altogether, or this owner in it. */
			int any_in_group = 0;
			for (size_t r = 0; r < k; r++)
				if (covers(rows[r].owner_group, groups[i]))
					any_in_group = 1;
			if (!any_in_group) {
				*field = "ownerGroup";
				snprintf(problem, n,
					 "account '%s' may not claim group "
					 "'%s' (no pilot grant)",
					 acc, grp);
			} else {
				*field = "ownerDN";
				snprintf(problem, n,
					 "account '%s' may not claim owner "
					 "'%s' in group '%s' (no pilot grant)",
					 acc, val, grp);
			}
			return 0;
		}
	}
	return 1;
}
