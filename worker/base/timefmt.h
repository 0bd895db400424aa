/*
** timefmt.h — RFC 3339 timestamps <-> unix seconds (UTC).
*/
#ifndef GB_TIMEFMT_H
#define GB_TIMEFMT_H

#include <stddef.h>

/*
** Parse "2024-05-14T08:30:00Z" (fractional seconds dropped, a numeric
** offset accepted, a leap second counted as the next second) into unix
** seconds. Returns 0, GB_EINVAL (not RFC 3339) or GB_ERANGE (a field out
** of range).
*/
int tf_parse(const char *s, long long *out);

/* Format t as "YYYY-MM-DDTHH:MM:SSZ" into buf (n >= 21). Returns 0,
** GB_EINVAL (NULL or too small a buffer) or GB_ERANGE (a year outside
** 0000..9999; buf is then ""). */
int tf_format(long long t, char *buf, size_t n);

#endif
