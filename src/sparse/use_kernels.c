/* Installing straight-line kernels into an analysis, matched by hash. */
#include <dlfcn.h>

#include "sparse_internal.h"

sv_status sv_sparse_lu_use_kernels(sv_sparse_lu *lu, const sv_sparse_kernels *k)
{
    if (!lu) return sv_error(SV_ERR_ARG, "sv_sparse_lu_use_kernels: lu is NULL");
    if (k) {
        if (k->abi != SV_SPARSE_KERNELS_ABI)
            return sv_error(SV_ERR_ARG, "sv_sparse_lu_use_kernels: kernel table abi = %d: expected %d (regenerate it)",
                            k->abi, SV_SPARSE_KERNELS_ABI);
        if (k->hash != lu->hash || k->n != lu->n || k->nnz != lu->nnz)
            return sv_error(SV_ERR_ARG,
                            "sv_sparse_lu_use_kernels: kernel table is for hash %016llx (n = %d, nnz = %d), the "
                            "analysis has hash %016llx (n = %d, nnz = %d): generated for another pattern or ordering",
                            (unsigned long long)k->hash, k->n, k->nnz, (unsigned long long)lu->hash, lu->n, lu->nnz);
    }
    lu->kern = k;
    return SV_OK;
}

const sv_sparse_kernels *sv_sparse_lu_kernels(const sv_sparse_lu *lu) { return lu ? lu->kern : NULL; }

void sv_sparse_lu_unload_kernels(sv_sparse_lu *lu)
{
    if (!lu) return;
    lu->kern = NULL;
    if (lu->dl_handle) {
        dlclose(lu->dl_handle);
        lu->dl_handle = NULL;
    }
}
