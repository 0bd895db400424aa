/*
** rng.c — xoshiro256** (Blackman & Vigna) seeded through splitmix64.
**
** Chosen because it is small, fast, has a 2^256 period and passes BigCrush;
** cryptographic quality is not needed for brokerage draws, reproducibility is.
*/
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void gb_rng_seed(struct gb_rng *rng, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

uint64_t gb_rng_next(struct gb_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double gb_rng_uniform(struct gb_rng *rng)
{
	return (double)(gb_rng_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t gb_rng_below(struct gb_rng *rng, uint64_t n)
{
	/* Reject the top sliver of the 64-bit range so every residue is equally
	** likely; the loop runs more than once with probability < n / 2^64. */
	uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
	uint64_t x;
	do
		x = gb_rng_next(rng);
	while (x >= limit);
	return x % n;
}

static int usable(double w)
{
	return isfinite(w) && w > 0.0;
}

static double at(const double *w, size_t i, size_t stride)
{
	return *(const double *)(const void *)((const char *)w + i * stride);
}

long gb_rng_weighted(struct gb_rng *rng, const double *w, size_t n,
		     size_t stride)
{
	if (stride == 0)
		stride = sizeof(double);
	double sum = 0.0;
	long last = -1;
	for (size_t i = 0; i < n; i++) {
		double x = at(w, i, stride);
		if (usable(x)) {
			sum += x;
			last = (long)i;
		}
	}
	if (last < 0 || !(sum > 0.0) || !isfinite(sum))
		return -1;
	double r = gb_rng_uniform(rng) * sum;
	for (size_t i = 0; i < n; i++) {
		double x = at(w, i, stride);
		if (!usable(x))
			continue;
		if (r < x)
			return (long)i;
		r -= x;
	}
	return last;
}

uint64_t gb_hash64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}
