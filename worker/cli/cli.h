/*
** cli.h — what the files of the `gridbroker` tool share. Not part of the
** gbworker library.
**
** One file per command group, the way tmux has one cmd-*.c per command:
** cmd_<group>.c runs its commands and exports their descriptor
** cli_cmd_<group>; cli_main.c holds main(), the global options, the
** command table of those descriptors and the dispatch and help. What
** several commands need (the configured connections, message ids, reading
** a JSON file) is in cli_util.c. A command file calls only cli_util.c and
** the libraries, never cli_main.c or another command file, so each one
** can be read, and rewritten, on its own.
*/
#ifndef GB_CLI_H
#define GB_CLI_H

#include <jansson.h>
#include <limits.h>

#include "amqp/amqp.h"
#include "base/config.h"
#include "store/store.h"

struct cli {
	char cfg_path[PATH_MAX];
	struct gb_config cfg;
	int cfg_loaded;
};

/*
** A command, or a group of them, as the command table lists it.
**
** A command ("events") has a usage (the arguments after its name, "" for
** none), a help paragraph (`help` wraps it) and the function that runs it:
** exec gets the words after the command's name and returns the exit
** status; 2 makes main() print the usage line. needs_config says whether
** main() loads the configuration into `cli` first.
**
** A group ("db") has only a name and `subs`: its commands, each named by
** its second word ("migrate"), ended by an entry whose name is NULL. The
** table lists the commands in the order `help` shows them.
*/
struct cli_cmd_entry {
	const char *name;
	const char *usage;
	const char *help;
	int needs_config;
	int (*exec)(struct cli *cli, int argc, char **argv);
	const struct cli_cmd_entry *subs;
};

/* The command groups and commands, one per cmd_*.c. */
extern const struct cli_cmd_entry cli_cmd_db;      /* db migrate|status */
extern const struct cli_cmd_entry cli_cmd_grid;    /* grid load */
extern const struct cli_cmd_entry cli_cmd_job;     /* job submit|status */
extern const struct cli_cmd_entry cli_cmd_tq;      /* tq submit|list */
extern const struct cli_cmd_entry cli_cmd_pilot;   /* pilot match */
extern const struct cli_cmd_entry cli_cmd_task;    /* task submit */
extern const struct cli_cmd_entry cli_cmd_events;  /* events */
extern const struct cli_cmd_entry cli_cmd_publish; /* publish */
extern const struct cli_cmd_entry cli_cmd_dlq;     /* dlq */
extern const struct cli_cmd_entry cli_cmd_summary; /* summary */
extern const struct cli_cmd_entry cli_cmd_explain; /* explain */
extern const struct cli_cmd_entry cli_cmd_why;     /* why task|job|pilot */

/* ---- cli_util.c --------------------------------------------------------- */

/* Open the configured database / AMQP connection; print why not and
** return NULL on failure. The caller closes it (st_close,
** amq_sync_close). */
struct st_db *cli_open_db(struct cli *cli);
struct amq_sync *cli_open_amqp(struct cli *cli);

/* A fresh request message id "<kind>-<id>-<ns time>-<pid>" in buf[n]. */
void cli_message_id(char *buf, size_t n, const char *kind, long long id);

#endif
