/* numpy's .npy format, version 1.0, as numpy documents it
 * (numpy.lib.format, "Format Version 1.0";
 * https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 *   the magic string "\x93NUMPY", the major and minor version bytes 1 and 0,
 *   a little-endian unsigned short HEADER_LEN, then HEADER_LEN bytes of
 *   ASCII: a Python dict literal with the keys 'descr', 'fortran_order'
 *   and 'shape', padded with spaces and ended by '\n' so that
 *   magic + 2 + 2 + HEADER_LEN is divisible by 64 (for alignment);
 *   the data follow in C order.
 * Written by hand: a header of a few lines needs no library (the tool writes
 * the data itself, in place, as maps finish). */
#include "npy.h"

#include <stdio.h>
#include <string.h>

int tool_npy_header(const char *descr, int ndim, const size_t *dims, char *buf, size_t cap, size_t *len)
{
    char dict[512], shape[256] = "";
    size_t at = 0;
    for (int k = 0; k < ndim; k++) {
        int n = snprintf(shape + at, sizeof shape - at, "%zu,%s", dims[k], k + 1 < ndim ? " " : "");
        if (n < 0 || (size_t)n >= sizeof shape - at) return -1;
        at += (size_t)n;
    }
    if (ndim > 1) shape[at - 1] = '\0'; /* (n,) for one dimension, (a, b) for more */
    int d = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    if (d < 0 || (size_t)d >= sizeof dict) return -1;
    size_t pre = 6 + 2 + 2, total = (pre + (size_t)d + 1 + 63) / 64 * 64, hlen = total - pre;
    if (total > cap || hlen > 65535) return -1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + pre, dict, (size_t)d);
    memset(buf + pre + d, ' ', hlen - (size_t)d - 1);
    buf[total - 1] = '\n';
    *len = total;
    return 0;
}
