/*
** zbuf.c — deflate and inflate of whole buffers (zbuf.h).
**
** Deflate is zlib's; inflate is libdeflate's, which reads the same zlib
** format (RFC 1950, checksum checked) about four times as fast on a
** scenario: replay inflates every stored decision it re-decides, 350 kB
** each on the sample grid, and zlib was 15 % of its time.
*/
#include "base/zbuf.h"

#include <stdlib.h>

#include <libdeflate.h>
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
	/* raw bytes and the NUL */
	unsigned char *buf = malloc(raw + 1);
	if (buf == NULL)
		return GB_ENOMEM;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (d == NULL) {
		free(buf);
		return GB_ENOMEM;
	}
	/* Exactly raw bytes: fewer is LIBDEFLATE_SHORT_OUTPUT, more
	** LIBDEFLATE_INSUFFICIENT_SPACE; bytes after the stream's end are
	** not read, as zlib's uncompress does not. */
	enum libdeflate_result lr =
		libdeflate_zlib_decompress(d, src, n, buf, raw, NULL);
	libdeflate_free_decompressor(d);
	if (lr != LIBDEFLATE_SUCCESS) {
		free(buf);
		return GB_EDECODE;
	}
	buf[raw] = '\0';
	*out = (char *)buf;
	return GB_OK;
}
