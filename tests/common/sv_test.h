/* Shared test helpers: cmocka includes, a deterministic random generator,
 * relative-error helpers and reading a file of the source tree. */
#ifndef SV_TEST_H
#define SV_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* xoshiro256** style generator with explicit state: tests are repeatable. */
typedef struct sv_test_rng { uint64_t s[4]; } sv_test_rng;
void sv_test_rng_seed(sv_test_rng *r, uint64_t seed);
uint64_t sv_test_rng_next(sv_test_rng *r);
/* Uniform in [-1, 1). */
double sv_test_uniform(sv_test_rng *r);

/* A file of the source tree (its path relative to the tree's root) as a
 * NUL-terminated string the caller frees; the test fails if it cannot be read. */
char *sv_test_slurp(const char *relpath);

/* Assert |a - b| <= tol * max(|b|, floor) with a readable message. */
#define sv_assert_close(a, b, tol, floor) \
    sv_assert_close_impl((a), (b), (tol), (floor), #a, __FILE__, __LINE__)
void sv_assert_close_impl(double a, double b, double tol, double floor_, const char *expr,
                          const char *file, int line);

#endif
