#include "support_gpu.h"

#include <math.h>

double rel_diff(int len, const double complex *a, const double complex *b)
{
    double d = 0, m = 0;
    for (int i = 0; i < len; i++) {
        d = fmax(d, cabs(a[i] - b[i]));
        m = fmax(m, cabs(b[i]));
    }
    return m > 0 ? d / m : d;
}
