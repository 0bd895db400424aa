/*
** cmd_db.c — `gridbroker db migrate|status`: the schema of the configured
** database. Migrations run from the schema directory the build names
** (GB_SCHEMA_DIR) through store.c, which also reads the version back.
*/
#include <stdio.h>

#include "cli/cli.h"
#include "gb_error.h"
#include "store/store.h"

/*
** `db migrate` (migrate = 1) and `db status`: both end by reading the
** schema version back, which is what `db status` is for and how
** `db migrate` shows where it left the schema.
*/
static int db_version(struct cli *cli, int argc, int migrate)
{
	if (argc != 0)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int rc = migrate ? st_migrate(db, GB_SCHEMA_DIR, stdout) : GB_OK;
	int v = 0;
	if (rc == GB_OK)
		rc = st_schema_version(db, &v);
	if (rc == GB_OK)
		printf(migrate ? "schema at version %d\n"
			       : "database reachable, schema version %d\n",
		       v);
	else if (migrate)
		fprintf(stderr, "gridbroker: migrate: %s: %s\n",
			gb_strerror(rc), st_error(db));
	else
		fprintf(stderr, "gridbroker: %s\n", st_error(db));
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_db_migrate(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	return db_version(cli, argc, 1);
}

static int cmd_db_status(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	return db_version(cli, argc, 0);
}

/* clang-format off */
static const struct cli_cmd_entry db_cmds[] = {
	{"migrate", "", "apply the schema migrations in order (re-running is a no-op) and seed the parameter defaults", 1, cmd_db_migrate, NULL},
	{"status", "", "check the database connection and print the schema version", 1, cmd_db_status, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_db = {.name = "db", .subs = db_cmds};
