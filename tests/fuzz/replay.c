/*
** replay.c — run a fuzz target over files without libFuzzer.
**
** Usage: <target>_replay DIR|FILE...
** Calls LLVMFuzzerTestOneInput once per regular file (directories are
** read one level deep, in name order so a failure is reproducible), so
** ctest replays each committed corpus under gcc and under the ASan/UBSan
** build, and a crash file from scripts/fuzz can be rerun in a debugger.
** A broken property aborts inside the target; this program only fails on
** its own for a path it cannot read or an empty corpus (a replay that
** ran nothing must not pass).
*/
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Inputs beyond this are not read: libFuzzer runs use -max_len=65536 and
** the targets skip bodies over the worker's 1 MiB limit anyway. */
#define REPLAY_MAX_FILE (FZ_MAX_MESSAGE + 1)

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *buf = malloc(REPLAY_MAX_FILE);
	size_t n = buf ? fread(buf, 1, REPLAY_MAX_FILE, f) : 0;
	int bad = buf == NULL || ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		free(buf);
		return -1;
	}
	/* an exact-size copy, so ASan sees a read past the input */
	uint8_t *in = malloc(n ? n : 1);
	if (in == NULL) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(in, n);
	free(in);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of `dir`, in name order; the count run, or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int oom = 0;
	struct dirent *e;
	while (!oom && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			char **grown = realloc(names, cap * sizeof(*names));
			if (grown == NULL) {
				oom = 1;
				break;
			}
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n] == NULL)
			oom = 1;
		else
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	long done = oom ? -1 : 0;
	if (oom)
		fprintf(stderr, "replay: %s: out of memory\n", dir);
	for (size_t i = 0; !oom && i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) != 0) {
				done = -1;
				break;
			}
			done++;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 2;
	}
	long total = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long n;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? run_dir(argv[i])
					: (run_file(argv[i]) == 0 ? 1 : -1);
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input files\n");
		return 1;
	}
	printf("replayed %ld input(s) without a failure\n", total);
	return 0;
}
