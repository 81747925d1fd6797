#include "sv_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sv_test_rng_seed(sv_test_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t sv_test_rng_next(sv_test_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sv_test_uniform(sv_test_rng *r)
{
    return (double)(sv_test_rng_next(r) >> 11) * 0x1.0p-52 - 1.0;
}

void sv_assert_close_impl(double a, double b, double tol, double floor_, const char *expr,
                          const char *file, int line)
{
    double scale = fabs(b) > floor_ ? fabs(b) : floor_;
    if (!(fabs(a - b) <= tol * scale)) {
        print_error("%s:%d: %s = %.17g, expected %.17g (relative tol %.3g, got %.3g)\n", file, line, expr, a,
                    b, tol, fabs(a - b) / scale);
        _fail(file, line);
    }
}

char *sv_test_slurp(const char *relpath)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SV_SOURCE_DIR, relpath);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = 0;
    fclose(f);
    return text;
}
