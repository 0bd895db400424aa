/*
** cmd_db.c — `gridbroker db migrate|status`: the schema of the configured
** database. Migrations run from the schema directory the build names
** (GB_SCHEMA_DIR) through store.c, which also reads the version back.
*/
#include <stdio.h>

#include "cli/cli.h"
#include "gb_error.h"
#include "store/store.h"

static int cmd_db_migrate(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int rc = st_migrate(db, GB_SCHEMA_DIR, stdout);
	int v = 0;
	if (rc == GB_OK)
		rc = st_schema_version(db, &v);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: migrate: %s: %s\n",
			gb_strerror(rc), st_error(db));
	else
		printf("schema at version %d\n", v);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_db_status(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int v = 0;
	int rc = st_schema_version(db, &v);
	if (rc == GB_OK)
		printf("database reachable, schema version %d\n", v);
	else
		fprintf(stderr, "gridbroker: %s\n", st_error(db));
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
static const struct cli_cmd_entry db_cmds[] = {
	{"migrate", "", "apply the schema migrations in order (re-running is a no-op) and seed the parameter defaults", 1, cmd_db_migrate, NULL},
	{"status", "", "check the database connection and print the schema version", 1, cmd_db_status, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_db = {.name = "db", .subs = db_cmds};
