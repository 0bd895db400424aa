/*
** rng.h — the engine's seeded pseudo-random generator (xoshiro256**).
**
** The engine never calls rand() and keeps no global state: every weighted
** draw takes a struct gb_rng the caller seeded. The worker seeds it from the
** request (message id and a per-process counter); tests and `explain` seed it
** from a number, so a decision is reproducible bit for bit.
*/
#ifndef GB_RNG_H
#define GB_RNG_H

#include <stddef.h>
#include <stdint.h>

struct gb_rng {
	uint64_t s[4]; /* xoshiro256** state; never all zero after seeding */
};

/* Seed the generator from one 64-bit number (expanded with splitmix64). */
void gb_rng_seed(struct gb_rng *rng, uint64_t seed);

/* Return the next 64 random bits. */
uint64_t gb_rng_next(struct gb_rng *rng);

/* Return a uniform double in [0, 1) with 53 random bits. */
double gb_rng_uniform(struct gb_rng *rng);

/* Return a uniform integer in [0, n). n must be > 0. Unbiased (rejection). */
uint64_t gb_rng_below(struct gb_rng *rng, uint64_t n);

/*
** Weighted draw: return index i with probability w_i / sum(w), considering
** only entries with a finite w_i > 0. Return -1 when no entry qualifies.
** w_i is the double at (const char *)w + i * stride; stride 0 means a plain
** array of doubles. The stride lets callers draw straight from an array of
** structs (e.g. &cands[0].weight) without copying. One uniform draw in
** [0, sum), one walk; float rounding that would run past the end returns
** the last qualifying entry.
*/
long gb_rng_weighted(struct gb_rng *rng, const double *w, size_t n,
		     size_t stride);

/* FNV-1a 64-bit hash of a string, used to derive seeds from identifiers. */
uint64_t gb_hash64(const char *s);

#endif
