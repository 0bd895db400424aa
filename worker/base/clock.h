/*
** clock.h — the worker's only source of wall-clock time.
**
** Every rule that compares times (pending retries, leases, later the job
** timeouts) gets `now` from here, never from time() directly, so tests can
** move the worker's clock forward without sleeping: when the configured
** clock_offset_file exists, the number of seconds it holds is added.
*/
#ifndef GB_CLOCK_H
#define GB_CLOCK_H

/* Set (or clear, with NULL or "") the offset file. */
void clk_set_offset_file(const char *path);

/* Unix seconds plus the offset (0 when the file is absent or unreadable). */
long long clk_now(void);

/* Seconds of the monotonic clock, for intervals and timers (never moved
** by the offset, never by a wall-clock change). */
double clk_mono(void);

#endif
