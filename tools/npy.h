/* Arrays in numpy's .npy format, version 1.0 (npy.c). */
#ifndef SV_TOOL_NPY_H
#define SV_TOOL_NPY_H

#include <stddef.h>

/* The header of a C-ordered array of `descr` ("<c16": complex128, "<f8":
 * float64, little-endian) and shape dims[0 … ndim), padded so that the data
 * start at a multiple of 64 bytes; its length into *len (≤ cap). Returns
 * 0, or -1 when it does not fit. */
int tool_npy_header(const char *descr, int ndim, const size_t *dims, char *buf, size_t cap, size_t *len);

#endif
