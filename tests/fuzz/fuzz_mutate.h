/* The fuzz campaign's inputs: a seeded generator and the mutations of
 * project files (bytes, and JSON-aware: wrong types, special numbers, huge
 * grids, duplicate keys, deep nesting, long strings, control characters)
 * and of Matrix Market pattern files (size lines, entries, long lines). */
#ifndef FUZZ_MUTATE_H
#define FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64: every case's input follows from (seed, case number). */
typedef struct fz_rng {
    uint64_t s;
} fz_rng;
uint64_t fz_next(fz_rng *r);
/* Uniform in [0, n) (n > 0). */
unsigned fz_below(fz_rng *r, unsigned n);

/* A growable byte buffer (NUL-terminated for convenience; may hold NULs). */
typedef struct fz_buf {
    char *data;
    size_t len, cap;
} fz_buf;
void fz_buf_set(fz_buf *b, const char *data, size_t len);
void fz_buf_append(fz_buf *b, const char *data, size_t len);
void fz_buf_free(fz_buf *b);

/* One mutation of b in place; `other` (may be NULL) is another seed for
 * splices. Each returns the mutation's name, for the failure report. */
const char *fz_mutate_bytes(fz_rng *r, fz_buf *b, const fz_buf *other);
const char *fz_mutate_json(fz_rng *r, fz_buf *b);
const char *fz_mutate_pattern(fz_rng *r, fz_buf *b);

#endif
