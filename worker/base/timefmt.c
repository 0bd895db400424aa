/*
** timefmt.c — RFC 3339 timestamps <-> unix seconds, for scenario files,
** message fields and CLI output. Its own module (no dependencies but
** gb_error.h) so the codec, the JSON helpers and the scenarios can all use
** it without depending on one another. Civil-date arithmetic after
** H. Hinnant's algorithms: exact for any year, no timegm/TZ involved.
*/
#include "base/timefmt.h"

#include <stdio.h>

#include "gb_error.h"


/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
** algorithm), so no dependence on timegm() or the TZ variable. */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m,
			    unsigned *d)
{
	z += 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (long long)yoe + era * 400 + (*m <= 2);
}

/* Read exactly n digits. */
static int digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char ch = (*s)[i];
		if (ch < '0' || ch > '9')
			return -1;
		v = v * 10 + (ch - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

int tf_parse(const char *s, long long *out)
{
	if (s == NULL || out == NULL)
		return GB_EINVAL;
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) ||
	    *s++ != '-' || digits(&s, 2, &d))
		return GB_EINVAL;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return GB_EINVAL;
	s++;
	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) ||
	    *s++ != ':' || digits(&s, 2, &sec))
		return GB_EINVAL;
	if (*s == '.') { /* fractional seconds: at least one digit, dropped */
		s++;
		if (*s < '0' || *s > '9')
			return GB_EINVAL;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s == '-' ? -1 : 1;
		s++;
		if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om))
			return GB_EINVAL;
	} else {
		return GB_EINVAL;
	}
	if (*s != '\0')
		return GB_EINVAL;
	static const int mdays[12] = {31, 29, 31, 30, 31, 30,
				      31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 ||
	    sec > 60 || oh > 23 || om > 59)
		return GB_ERANGE;
	/* A leap second (:60) counts as the next second, as POSIX time does. */
	long long t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400LL +
		      h * 3600LL + mi * 60LL + sec;
	t -= sign * (oh * 3600LL + om * 60LL);
	*out = t;
	return GB_OK;
}

int tf_format(long long t, char *buf, size_t n)
{
	if (buf == NULL || n == 0)
		return GB_EINVAL;
	long long days = t / 86400, rem = t % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	long long y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	if (y < 0 || y > 9999) {
		buf[0] = '\0';
		return GB_ERANGE;
	}
	int w = snprintf(buf, n, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", y,
			 m, d, rem / 3600, rem / 60 % 60, rem % 60);
	if (w < 0 || (size_t)w >= n)
		return GB_EINVAL;
	return GB_OK;
}
