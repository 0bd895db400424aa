/*
** cli.h — what the files of the `gridbroker` tool share. Not part of the
** gbworker library.
**
** One file per command group, the way tmux has one cmd-*.c per command:
** cmd_<group>.c runs its commands and exports their descriptor
** cli_cmd_<group>; cli_main.c holds main(), the global options, the
** command table of those descriptors and the dispatch and help. What
** several commands need (the configured connections, request ids and
** publishing, reading and printing JSON, option parsing, the submit
** commands' walk over a file) is in cli_util.c. A command file calls only
** cli_util.c and the libraries, never cli_main.c or another command file,
** so each one can be read, and rewritten, on its own.
*/
#ifndef GB_CLI_H
#define GB_CLI_H

#include <jansson.h>
#include <limits.h>

#include "amqp/amqp.h"
#include "base/config.h"
#include "store/store.h"

struct arena;
struct msgpack_sbuffer;

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
extern const struct cli_cmd_entry cli_cmd_pilot;   /* pilot match|grant|revoke|grants */
extern const struct cli_cmd_entry cli_cmd_task;    /* task submit */
extern const struct cli_cmd_entry cli_cmd_events;  /* events */
extern const struct cli_cmd_entry cli_cmd_publish; /* publish */
extern const struct cli_cmd_entry cli_cmd_dlq;     /* dlq */
extern const struct cli_cmd_entry cli_cmd_summary; /* summary */
extern const struct cli_cmd_entry cli_cmd_explain; /* explain */
extern const struct cli_cmd_entry cli_cmd_why;     /* why task|job|pilot */
extern const struct cli_cmd_entry cli_cmd_replay;  /* replay */

/* ---- cli_util.c --------------------------------------------------------- */

/* Open the configured database / AMQP connection; print why not and
** return NULL on failure. The caller closes it (st_close,
** amq_sync_close). */
struct st_db *cli_open_db(struct cli *cli);
struct amq_sync *cli_open_amqp(struct cli *cli);

/* A fresh request message id "<kind>-<id>-<ns time>-<pid>" in buf[n]. */
void cli_message_id(char *buf, size_t n, const char *kind, long long id);

/* Read and parse the JSON file `path`; on failure print why and return
** NULL. The caller owns the result (json_decref). */
json_t *cli_read_json(const char *path);

/* The same for a command whose one argument is FILE.json (argv[0] of
** argc): NULL with *status set to the exit status, 2 when argc is not 1,
** 1 when the file did not read. */
json_t *cli_read_json_arg(int argc, char **argv, int *status);

/* Print `j` as JSON text (json_dumps `flags`) and a newline, or `none`
** when there is nothing to print (j NULL, or not dumpable); takes `j`'s
** reference. */
void cli_print_json(json_t *j, size_t flags, const char *none);

/* The properties of a request the CLI sends: message id `msgid` (NULL:
** none), type `key` (also its routing key), msgpack, persistent. The
** strings are borrowed. */
struct amq_props cli_request_props(const char *key, const char *msgid);

/* Publish `len` bytes of `body` to gridbroker.requests with key `key` and
** cli_request_props(key, msgid), waiting up to 10 s for the broker's
** confirm. Returns GB_OK or the publish error; prints nothing. */
int cli_publish(struct amq_sync *s, const char *key, const char *msgid,
		const void *body, size_t len);

/*
** A command's options, for cli_parse_opts: each is a flag, or takes the
** word after it as its value, kept as it is (`word`) or converted as it
** is read (`read`: returns 0, or the exit status to stop with after
** printing why, 2 for the usage line). An entry whose name is NULL ends
** a list; write them with the macros below, in the order the command's
** usage line names them.
*/
struct cli_opt {
	const char *name;  /* "--all" */
	const char *alias; /* "-a", or NULL */
	int *flag;
	const char **word;
	int (*read)(const char *word, void *dst);
	void *dst;
};
#define CLI_FLAG(n, a, p) {.name = (n), .alias = (a), .flag = (p)}
#define CLI_WORD(n, a, p) {.name = (n), .alias = (a), .word = (p)}
#define CLI_READ(n, a, fn, p) \
	{.name = (n), .alias = (a), .read = (fn), .dst = (p)}
#define CLI_OPT_END {.name = NULL}

/*
** Parse a command's argv[0..argc) against `opts`: options may come in
** any order, a later one overriding an earlier one; the other words go
** to words[0..max) in order. A word that starts with '-' and is no
** option is one of those words when `dash_words` ("-" for stdin, a file
** name), else a usage error, as is an option that needs a value but ends
** argv, or a word beyond `max`. Returns the number of words, or the
** negated exit status to stop with: -2 for a usage error, or a read's.
*/
int cli_parse_opts(int argc, char **argv, const struct cli_opt *opts,
		   const char **words, int max, int dash_words);

/* A cli_opt read: the word's leading number (strtol; 0 when none) into
** the long at dst. Never fails. */
int cli_opt_long(const char *word, void *dst);

/*
** A submit command (`task submit`, `job submit`): each object of a file,
** parsed, encoded and published as one request. What cli_submit.encode
** says about the object it encoded:
*/
struct cli_subject {
	long long id;  /* the number in the message id (the task id) */
	char what[96]; /* names it in an error: "jobs of task 7" */
	char sent[96]; /* names it once sent: "12 jobs of task 7" */
};

struct cli_submit {
	const char *type; /* request type and routing key: "task.broker" */
	const char *kind; /* message id prefix: "task" */
	const char *many; /* element i of an array is "<many>[i]" in errors */
	const char *one;  /* a lone object's name in errors: "task[0]" */
	/* The objects in the file's JSON `root`: one, or an array. */
	json_t *(*pick)(json_t *root);
	/* Parse `obj` (called `path` in errors) with memory from `a`, fill
	** `subj` and encode the request into `sb`. Returns GB_OK; an error
	** before subj->what is set is a parse error described in err. */
	int (*encode)(json_t *obj, const char *path, struct arena *a,
		      struct msgpack_sbuffer *sb, struct cli_subject *subj,
		      char *err, size_t errlen);
};

/* Run a submit command: argv holds FILE.json [--repeat N], whose objects
** are sent over one AMQP connection, each with a line "submitted ..." or
** the error; with --repeat each is published N times (1..100) back to
** back with the same message id, as a producer's retries. Returns the
** exit status: 0, 1 when any object failed, 2 for a usage error. */
int cli_submit_file(struct cli *cli, int argc, char **argv,
		    const struct cli_submit *how);

#endif
