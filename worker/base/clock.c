/*
** clock.c — wall clock plus an optional test offset read from a file.
*/
#include "base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char offset_file[4096];

void clk_set_offset_file(const char *path)
{
	if (path == NULL)
		path = "";
	snprintf(offset_file, sizeof(offset_file), "%s", path);
}

long long clk_now(void)
{
	long long now = (long long)time(NULL);
	if (offset_file[0] == '\0')
		return now;
	FILE *f = fopen(offset_file, "r");
	if (f == NULL)
		return now;
	char buf[64] = "";
	if (fgets(buf, sizeof(buf), f) != NULL) {
		char *end = NULL;
		long long off = strtoll(buf, &end, 10);
		if (end != buf)
			now += off;
	}
	fclose(f);
	return now;
}

double clk_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
