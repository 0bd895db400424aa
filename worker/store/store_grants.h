/*
** store_grants.h — which RabbitMQ accounts may speak for which DIRAC
** groups and owners in a pilot.match (table pilot_grants, migration 0011).
**
** Why: a private pilot's ownerGroup and ownerDN select the task queues it
** may take jobs from (TQ-04). RabbitMQ checks each message's user_id
** property against the account that published it (validated user-id), so
** the worker knows the sending account; a pilot.match whose account was
** not granted the groups and owners it claims is dead-lettered
** (pipeline/route_match.c, [dirac] owner_check).
**
** A grant is (account, owner_group, owner_dn); '*' as the group grants
** every group and generic pilots (no ownerGroup: DIRAC's GenericPilot
** property), '*' as the DN every owner of the group and pilots that name
** no DN. The worker keeps the whole table in memory (st_grants_load, a
** few rows per pilot account) and checks each pilot against it with
** st_grants_check, which is pure: no SQL per pilot.
*/
#ifndef GB_STORE_GRANTS_H
#define GB_STORE_GRANTS_H

#include <stddef.h>

#include "base/arena.h"
#include "store/store.h"

#define ST_GRANT_ANY "*"           /* any group / any owner */
#define ST_GRANT_ACCOUNT_MAX 64    /* bytes, as the column */
#define ST_GRANT_VALUE_MAX 255     /* bytes of a group or DN */

struct st_grant {
	const char *account;
	const char *owner_group; /* a group or ST_GRANT_ANY */
	const char *owner_dn;    /* a DN or ST_GRANT_ANY */
	long long granted_at;    /* unix s */
};

/* Every row, sorted by account, group, DN (strcmp order). */
struct st_grants {
	struct st_grant *v;
	size_t n;
};

/*
** Read every row of pilot_grants into `out`, the strings and the array
** in `a`. Returns 0 (n may be 0), GB_ETOOBIG when they do not fit `a`, or
** a database error (st_error).
*/
int st_grants_load(struct st_db *db, struct arena *a, struct st_grants *out);

/*
** Grant `account` the pilots of `group` with owner `dn` (NULL means
** ST_GRANT_ANY) at `now`. Each value must be 1..its maximum bytes of
** printable characters (GB_EINVAL, st_error says which). *added (may be
** NULL) gets 1 for a new row, 0 when it was granted already. 0 or a
** database error.
*/
int st_grant_add(struct st_db *db, const char *account, const char *group,
		 const char *dn, long long now, int *added);

/*
** Revoke: the row (account, group, dn); with dn NULL every row of
** (account, group); with group NULL too, every row of the account.
** *removed (may be NULL) gets the number of rows deleted. 0 or a database
** error.
*/
int st_grant_remove(struct st_db *db, const char *account, const char *group,
		    const char *dn, long long *removed);

/*
** Pure: may `account` send a pilot claiming groups[0..ngroups) and owners
** dns[0..ndns)? A pilot without groups is generic and needs a '*' group
** grant. A private pilot needs, for every group g and every DN d it
** claims (every group alone when it names no DN), a grant whose group is
** g or '*' and whose DN is d or '*'. Returns 1 when allowed; 0 when not,
** with *field ("user_id", "ownerGroup" or "ownerDN") and problem[n] saying
** what the account may not claim (values sanitised: they are the
** sender's). A NULL or empty account is never allowed.
*/
int st_grants_check(const struct st_grants *g, const char *account,
		    const char *const *groups, size_t ngroups,
		    const char *const *dns, size_t ndns, const char **field,
		    char *problem, size_t n);

/* Pure: how many rows `account` has (0: none). */
size_t st_grants_count(const struct st_grants *g, const char *account);

#endif
