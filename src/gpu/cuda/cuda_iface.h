/* The interface between the host-side C code (backend.c, device.c,
 * loader.c) and the CUDA back end (*.cu, compiled as C++ by nvcc): plain C
 * types only (complex numbers as interleaved re, im pairs), status as int
 * with a message.
 *
 * The CUDA back end is a shared module of its own (libsolvent-cuda.so, the
 * only thing that links the CUDA libraries), loaded on first use by
 * loader.c. It exports one symbol, SV_GPU_CUDA_MODULE_ENTRY, a function
 * returning the table sv_gpu_cuda_module below; the functions declared
 * after it are the module's own (hidden) and reached only through it. The
 * module calls nothing of libsolvent's (a program may link libsolvent
 * statically, and then its symbols are not visible to a loaded module). */
#ifndef SV_GPU_CUDA_IFACE_H
#define SV_GPU_CUDA_IFACE_H

#include <stddef.h>

#include "solvent/em_tables.h" /* the assembly's tables and rows (plain C) */

#ifdef __cplusplus
extern "C" {
#endif

enum { SVC_OK = 0, SVC_SINGULAR = 1, SVC_NOMEM = 2, SVC_ERROR = -1 };

/* Terms the device forms Z(f) from at most. */
#define SV_GPU_CUDA_MAX_TERMS 8

typedef struct sv_gpu_cuda sv_gpu_cuda;

/* The module's table. Raise SV_GPU_CUDA_MODULE_ABI whenever this struct or
 * the meaning of a function in it changes: the loader refuses a module
 * whose number differs (one left from another Solvent build). */
#define SV_GPU_CUDA_MODULE_ABI 2
#define SV_GPU_CUDA_MODULE_ENTRY "sv_gpu_cuda_module_v1"
typedef struct sv_gpu_cuda_module {
    int abi;             /* SV_GPU_CUDA_MODULE_ABI of the module's build */
    size_t size;         /* sizeof(sv_gpu_cuda_module) in the module's build */
    const char *variant; /* "cuda"; the tests' build without error terms says so */
    int (*query)(int device, char *name, size_t nlen, int *cc_major, int *cc_minor, size_t *total,
                 size_t *free_bytes, int *fp32_per_fp64, char *reason, size_t rlen);
    int (*create)(int device, sv_gpu_cuda **out, char *msg, size_t mlen);
    void (*destroy)(sv_gpu_cuda *g);
    int (*upload)(sv_gpu_cuda *g, int n, int nb, int nterms, const int *kind, const double *const *packed,
                  const int *const *rowptr, const int *const *colind, const double *const *values,
                  const size_t *nnz, int modes, int max_cols, char *msg, size_t mlen);
    int (*form)(sv_gpu_cuda *g, const double *coef, char *msg, size_t mlen);
    int (*factor)(sv_gpu_cuda *g, double pivot_min, char *msg, size_t mlen);
    int (*solve)(sv_gpu_cuda *g, int ncols, float *v, char *msg, size_t mlen);
    int (*products)(sv_gpu_cuda *g, int mode, int ncols, const double *x, double *y, char *msg, size_t mlen);
    int (*asm_tables)(sv_gpu_cuda *g, const sv_em_tables *t, int nb, char *msg, size_t mlen);
    int (*asm_finish)(sv_gpu_cuda *g, const sv_em_assembly_rows *w, double *L, double *Psi, double *PsiI,
                      double *seconds, char *msg, size_t mlen);
    void (*asm_release)(sv_gpu_cuda *g);
} sv_gpu_cuda_module;
/* The type of the exported entry point. */
typedef const sv_gpu_cuda_module *(*sv_gpu_cuda_module_fn)(void);

/* ---- inside the module ------------------------------------------------------- */

/* Device discovery; returns SVC_OK, or SVC_ERROR with the runtime's reason. */
int sv_gpu_cuda_query_c(int device, char *name, size_t nlen, int *cc_major, int *cc_minor, size_t *total,
                        size_t *free_bytes, int *fp32_per_fp64, char *reason, size_t rlen);

/* The double-float product launcher (df_products.cu; a test compiles a second
 * one with SV_GPU_BREAK_EFT): y[c·n + i] = (A·x_c)_i for ncols columns, A
 * packed (kind 0) or CSR (kind 1) as hi/lo pairs, x as pairs, on the device. */
typedef int (*sv_gpu_cuda_df_fn)(int kind, int n, int nb, const float *ahi, const float *alo, const int *rowptr,
                                 const int *colind, int ncols, const float *xhi, const float *xlo, double *y);
int sv_gpu_cuda_df_products_default(int kind, int n, int nb, const float *ahi, const float *alo, const int *rowptr,
                                    const int *colind, int ncols, const float *xhi, const float *xlo, double *y);

/* df: the module's double-float launcher (module.cu chooses it). */
int sv_gpu_cuda_create(int device, sv_gpu_cuda_df_fn df, sv_gpu_cuda **out, char *msg, size_t mlen);
void sv_gpu_cuda_destroy(sv_gpu_cuda *g);
/* kind[k]: 0 packed (packed[k]), 1 CSR (rowptr[k], colind[k], values[k], nnz[k]). modes: bit 1
 * double, bit 2 double-float. */
int sv_gpu_cuda_upload(sv_gpu_cuda *g, int n, int nb, int nterms, const int *kind, const double *const *packed,
                       const int *const *rowptr, const int *const *colind, const double *const *values,
                       const size_t *nnz, int modes, int max_cols, char *msg, size_t mlen);
/* coef: 2·nterms doubles (re, im of c_k). */
int sv_gpu_cuda_form(sv_gpu_cuda *g, const double *coef, char *msg, size_t mlen);
int sv_gpu_cuda_factor(sv_gpu_cuda *g, double pivot_min, char *msg, size_t mlen);
/* v: n × ncols complex single, interleaved, on the host. */
int sv_gpu_cuda_solve(sv_gpu_cuda *g, int ncols, float *v, char *msg, size_t mlen);
/* mode 1 double, 2 double-float; x n × ncols, y nterms blocks of n × ncols, host. */
int sv_gpu_cuda_products(sv_gpu_cuda *g, int mode, int ncols, const double *x, double *y, char *msg, size_t mlen);

/* The assembly (assemble.cu; the steps of ../asm_kernel.h): t and w hold host
 * arrays; L, Psi, PsiI are the host's packed arrays (PsiI NULL unless
 * t->lossy). asm_tables returns once its kernels are queued; asm_finish puts
 * the seconds spent waiting for the kernels and copying back in seconds[0, 1]. */
int sv_gpu_cuda_asm_tables(sv_gpu_cuda *g, const sv_em_tables *t, int nb, char *msg, size_t mlen);
int sv_gpu_cuda_asm_finish(sv_gpu_cuda *g, const sv_em_assembly_rows *w, double *L, double *Psi, double *PsiI,
                           double *seconds, char *msg, size_t mlen);
void sv_gpu_cuda_asm_release(sv_gpu_cuda *g);
/* For assemble.cu: the device of g, and the slot of its assembly in progress. */
int sv_gpu_cuda_device_of(const sv_gpu_cuda *g);
void **sv_gpu_cuda_asm_slot(sv_gpu_cuda *g);

#ifdef __cplusplus
}
#endif
#endif
