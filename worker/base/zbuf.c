/*
** zbuf.c — deflate and inflate of whole buffers (zbuf.h).
*/
#include "base/zbuf.h"

#include <stdlib.h>

#include <zlib.h>

#include "gb_error.h"

int zb_deflate(const void *src, size_t n, int level, unsigned char **out,
	       size_t *outlen)
{
	if (src == NULL || out == NULL || outlen == NULL || level < 1 ||
	    level > 9)
		return GB_EINVAL;
	*out = NULL;
	*outlen = 0;
	if (n > ZB_MAX_RAW)
		return GB_ETOOBIG;
	uLongf cap = compressBound((uLong)n);
	unsigned char *buf = malloc(cap ? cap : 1);
	if (buf == NULL)
		return GB_ENOMEM;
	int zrc = compress2(buf, &cap, src, (uLong)n, level);
	if (zrc != Z_OK) {
		free(buf);
		return zrc == Z_MEM_ERROR ? GB_ENOMEM : GB_EINVAL;
	}
	*out = buf;
	*outlen = (size_t)cap;
	return GB_OK;
}

int zb_inflate(const void *src, size_t n, size_t raw, char **out)
{
	if (src == NULL || out == NULL)
		return GB_EINVAL;
	*out = NULL;
	if (raw > ZB_MAX_RAW)
		return GB_ETOOBIG;
	/* Room for one byte more than expected: a stream that inflates to
	** more than `raw` fills it (or runs out of room) and is refused
	** instead of being cut silently; then the NUL. */
	unsigned char *buf = malloc(raw + 2);
	if (buf == NULL)
		return GB_ENOMEM;
	uLongf got = (uLongf)raw + 1;
	int zrc = uncompress(buf, &got, src, (uLong)n);
	if (zrc != Z_OK || got != (uLongf)raw) {
		free(buf);
		return zrc == Z_MEM_ERROR ? GB_ENOMEM : GB_EDECODE;
	}
	buf[raw] = '\0';
	*out = (char *)buf;
	return GB_OK;
}
