/*
** cli_main.c — gridbroker, the command-line tool: main(), the global
** options, the command table, and the dispatch and help.
**
** Commands are descriptors (struct cli_cmd_entry, cli.h) exported by one
** file per command group, cmd_<group>.c, the way tmux has one cmd-*.c per
** command; cmd_table[] below lists them in the order `help` shows them.
** Everything but `explain` talks to the configured servers; `explain` runs
** the engine offline on a scenario file, through the same code the worker
** uses.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/log.h"
#include "cli/cli.h"
#include "gb_error.h"

static int load_config(struct cli *cli)
{
	char err[4096] = "";
	if (cfg_load(cli->cfg_path, &cli->cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker: %s: invalid configuration:\n%s\n",
			cli->cfg_path, err);
		return 1;
	}
	cli->cfg_loaded = 1;
	return 0;
}

static int cmd_help(struct cli *cli, int argc, char **argv);
static int cmd_version(struct cli *cli, int argc, char **argv);

/* clang-format off */
static const struct cli_cmd_entry help_cmd = {"help", "[COMMAND]", "show this list, or one command's usage", 0, cmd_help, NULL};
static const struct cli_cmd_entry version_cmd = {"version", "", "print the version", 0, cmd_version, NULL};
/* clang-format on */

/* Every command group and command, in the order `help` lists them. */
static const struct cli_cmd_entry *const cmd_table[] = {
	&cli_cmd_db,      &cli_cmd_grid,    &cli_cmd_job,     &cli_cmd_tq,
	&cli_cmd_pilot,   &cli_cmd_task,    &cli_cmd_events,  &cli_cmd_publish,
	&cli_cmd_dlq,     &cli_cmd_summary, &cli_cmd_explain, &cli_cmd_why,
	&cli_cmd_replay,  &help_cmd,        &version_cmd,     NULL,
};

/*
** The k-th command of cmd_table[] counting a group's subcommands one by
** one (k = 0 is "db migrate"), with its full name ("db migrate", "events")
** in name[n]; NULL past the last. The walks over every command below
** (help, dispatch) all go through here.
*/
static const struct cli_cmd_entry *command(size_t k, char *name, size_t n)
{
	for (const struct cli_cmd_entry *const *g = cmd_table; *g; g++) {
		const struct cli_cmd_entry *c = *g;
		if (c->subs == NULL) {
			if (k-- == 0) {
				snprintf(name, n, "%s", c->name);
				return c;
			}
			continue;
		}
		for (const struct cli_cmd_entry *s = c->subs; s->name; s++) {
			if (k-- == 0) {
				snprintf(name, n, "%s %s", c->name, s->name);
				return s;
			}
		}
	}
	return NULL;
}

/*
** Print `text` to `out` wrapped at 78 columns: the first line indented by
** `indent` spaces, the others by `hang`. Words longer than a line stay
** whole.
*/
static void print_wrapped(FILE *out, const char *text, int indent, int hang)
{
	const int width = 78;
	int col = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n == 0)
			break;
		if (col > 0 && col + 1 + (int)n > width) {
			fputc('\n', out);
			col = 0;
			indent = hang;
		}
		if (col == 0) {
			fprintf(out, "%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		col += (int)n;
		p += n;
	}
	if (col > 0)
		fputc('\n', out);
}

/* One command as `help` and `COMMAND --help` show it, man-page style:
** the synopsis, then the description indented below it. */
static void print_command(FILE *out, const char *name,
			  const struct cli_cmd_entry *c)
{
	char synopsis[512];
	snprintf(synopsis, sizeof(synopsis), "gridbroker %s%s%s", name,
		 c->usage[0] ? " " : "", c->usage);
	print_wrapped(out, synopsis, 2, 8);
	print_wrapped(out, c->help, 6, 6);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gridbroker [-c FILE] COMMAND [ARGS]\n\n"
		     "  -c, --config FILE  configuration (default: $GB_CONFIG "
		     "or /etc/gridbroker/gridbroker.conf)\n"
		     "  -h, --help         this list; COMMAND --help or help "
		     "COMMAND: one command\n"
		     "  -V, --version      print the version\n\ncommands:\n");
	const struct cli_cmd_entry *c;
	char name[64];
	for (size_t k = 0; (c = command(k, name, sizeof(name))); k++)
		print_command(out, name, c);
}

/* Print the commands whose name is, or starts with, the words `want`
** ("db", "tq list"); return how many. */
static int print_matching(FILE *out, const char *want)
{
	size_t n = strlen(want);
	int found = 0;
	const struct cli_cmd_entry *c;
	char name[64];
	for (size_t k = 0; (c = command(k, name, sizeof(name))); k++) {
		if (strncmp(name, want, n) == 0 &&
		    (name[n] == '\0' || name[n] == ' ')) {
			print_command(out, name, c);
			found++;
		}
	}
	return found;
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc == 0) {
		usage(stdout);
		return 0;
	}
	char want[64];
	snprintf(want, sizeof(want), "%s%s%s", argv[0], argc > 1 ? " " : "",
		 argc > 1 ? argv[1] : "");
	if (print_matching(stdout, want) == 0) {
		fprintf(stderr,
			"gridbroker: no command '%s' (gridbroker help lists "
			"them)\n",
			want);
		return 1;
	}
	return 0;
}

static int cmd_version(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("gridbroker %s\n", GB_VERSION);
	return 0;
}

/* Match the words of `name` ("db migrate") against argv; return the
** words consumed or 0. */
static int match(const char *name, int argc, char **argv)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", name);
	int used = 0;
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		if (used >= argc || strcmp(argv[used], tok) != 0)
			return 0;
		used++;
	}
	return used;
}

int main(int argc, char **argv)
{
	static struct cli cli;
	const char *env = getenv("GB_CONFIG");
	snprintf(cli.cfg_path, sizeof(cli.cfg_path), "%s",
		 env && *env ? env : "/etc/gridbroker/gridbroker.conf");
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if ((strcmp(argv[i], "-c") == 0 ||
		     strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			snprintf(cli.cfg_path, sizeof(cli.cfg_path), "%s",
				 argv[++i]);
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "-V") == 0 ||
			   strcmp(argv[i], "--version") == 0) {
			return cmd_version(&cli, 0, NULL);
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	log_init("gridbroker", LOG_LVL_WARN);
	const struct cli_cmd_entry *c;
	char name[64];
	for (size_t k = 0; (c = command(k, name, sizeof(name))); k++) {
		int used = match(name, argc - i, argv + i);
		if (used == 0)
			continue;
		char **rest = argv + i + used;
		int nrest = argc - i - used;
		for (int w = 0; w < nrest; w++) {
			if (strcmp(rest[w], "--help") == 0 ||
			    strcmp(rest[w], "-h") == 0) {
				print_command(stdout, name, c);
				return 0;
			}
		}
		if (c->needs_config && load_config(&cli) != 0)
			return 1;
		int rc = c->exec(&cli, nrest, rest);
		if (rc == 2)
			fprintf(stderr, "usage: gridbroker %s %s\n", name,
				c->usage);
		return rc;
	}
	/* A group word alone ("db", "tq") or with --help: its commands. */
	if (i + 1 >= argc || strcmp(argv[i + 1], "--help") == 0 ||
	    strcmp(argv[i + 1], "-h") == 0) {
		int help = i + 1 < argc;
		if (print_matching(help ? stdout : stderr, argv[i]) > 0) {
			if (!help)
				fprintf(stderr,
					"gridbroker %s: which one? (above)\n",
					argv[i]);
			return help ? 0 : 2;
		}
	}
	fprintf(stderr, "gridbroker: unknown command '%s'", argv[i]);
	if (i + 1 < argc)
		fprintf(stderr, " '%s'", argv[i + 1]);
	fprintf(stderr, " (gridbroker --help lists the commands)\n");
	return 2;
}
