/* Double-double arithmetic (a value hi + lo, about 106 significant bits)
 * for the exact-enough stage solves of lin_dd.c. Inline: the LU runs these
 * in its innermost loop. include/solvent/eft.h has the same error-free
 * transforms for double-float pairs, as library calls; here they are
 * double pairs and must inline.
 *
 * The sum is the accurate one (both halves' errors carried, QD's
 * "ieee_add"), not the sloppy one: the solves exist for sums that cancel
 * to a tiny fraction of their terms. Needs round-to-nearest and no
 * reassociation (the module builds without -ffast-math). */
#ifndef SV_ODE_DD_H
#define SV_ODE_DD_H

#include <math.h>

typedef struct dd {
    double hi, lo;
} dd;

static inline dd dd_from(double x) { return (dd){x, 0.0}; }

/* s + e = a + b exactly */
static inline dd dd_two_sum(double a, double b)
{
    double s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);
    return (dd){s, e};
}
/* the same when |a| ≥ |b| */
static inline dd dd_quick_two_sum(double a, double b)
{
    double s = a + b;
    return (dd){s, b - (s - a)};
}

static inline dd dd_add(dd a, dd b)
{
    dd s = dd_two_sum(a.hi, b.hi), t = dd_two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = dd_quick_two_sum(s.hi, s.lo);
    s.lo += t.lo;
    return dd_quick_two_sum(s.hi, s.lo);
}

static inline dd dd_neg(dd a) { return (dd){-a.hi, -a.lo}; }
static inline dd dd_sub(dd a, dd b) { return dd_add(a, dd_neg(b)); }

static inline dd dd_mul(dd a, dd b)
{
    double p = a.hi * b.hi, e = fma(a.hi, b.hi, -p);
    e += a.hi * b.lo + a.lo * b.hi;
    return dd_quick_two_sum(p, e);
}

static inline dd dd_div(dd a, dd b)
{
    double q1 = a.hi / b.hi;
    dd r = dd_sub(a, dd_mul(dd_from(q1), b));
    double q2 = r.hi / b.hi;
    r = dd_sub(r, dd_mul(dd_from(q2), b));
    double q3 = r.hi / b.hi;
    dd q = dd_quick_two_sum(q1, q2);
    return dd_add(q, dd_from(q3));
}

static inline double dd_to(dd a) { return a.hi + a.lo; }

#endif
