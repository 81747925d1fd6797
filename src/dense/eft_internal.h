/* Internals of the error-free arithmetic, for its tests. */
#ifndef SV_DENSE_EFT_INTERNAL_H
#define SV_DENSE_EFT_INTERNAL_H

typedef void (*sv_eft_pair_fn)(float a, float b, float *hi, float *lo);

/* The self-test with the given two-sum and two-product (so a test can hand
 * it broken ones): 1 if they and the double-float dot product built on the
 * library's own transforms agree with double arithmetic, else 0. */
int sv_dense_eft_check(sv_eft_pair_fn two_sum, sv_eft_pair_fn two_prod);
/* Force the cached self-test state: 1 enabled, 0 disabled, −1 untested. */
void sv_dense_eft_force_state(int state);

#endif
