/* The public factor and solve calls of one precision: the installed
 * straight-line kernels when there are some, else the table-driven ones.
 * kernels.c defines
 *   T          the scalar type (double, float)
 *   FN(x)      the table-driven kernels' name mangling (x##_d, x##_f)
 *   FNW(x, w)  the same for w lanes (x##_d##w, x##_f##w)
 *   PUB(x)     public names and kernel table fields (x, x##_f32)
 * and includes this file once per type, after the kernels. */

sv_status PUB(sv_sparse_lu_factor)(const sv_sparse_lu *lu, T *buf, int *info)
{
    int flag = lu->kern && lu->kern->PUB(factor) ? lu->kern->PUB(factor)(buf) : FN(factor_table)(lu, buf);
    return pivot_status(lu, flag, info, __func__);
}

void PUB(sv_sparse_lu_solve)(const sv_sparse_lu *lu, const T *buf, const T *b, T *x, T *work)
{
    if (lu->kern && lu->kern->PUB(solve))
        lu->kern->PUB(solve)(buf, b, x, work);
    else
        FN(solve_table)(lu, buf, b, x, work);
}

sv_status PUB(sv_sparse_lu_factor_batch)(const sv_sparse_lu *lu, int W, T *buf, int *flags)
{
    int li = check_batch(lu, buf, W, __func__), f[SV_BATCH_WMAX];
    if (li < 0) return SV_ERR_ARG;
    if (lu->kern && lu->kern->PUB(factor_batch)[li])
        lu->kern->PUB(factor_batch)[li](buf, f);
    else
        switch (W) {
        case 1: FNW(factor_batch, 1)(lu, buf, f); break;
        case 2: FNW(factor_batch, 2)(lu, buf, f); break;
        case 4: FNW(factor_batch, 4)(lu, buf, f); break;
        default: FNW(factor_batch, 8)(lu, buf, f); break;
        }
    if (flags) memcpy(flags, f, (size_t)W * sizeof(int));
    return SV_OK;
}

sv_status PUB(sv_sparse_lu_solve_batch)(const sv_sparse_lu *lu, int W, const T *buf, const T *b, T *x, T *work)
{
    int li = check_batch(lu, buf, W, __func__);
    if (li < 0) return SV_ERR_ARG;
    if (!b || !x || !work) return sv_error(SV_ERR_ARG, "%s: b, x or work is NULL", __func__);
    if (lu->kern && lu->kern->PUB(solve_batch)[li]) {
        lu->kern->PUB(solve_batch)[li](buf, b, x, work);
        return SV_OK;
    }
    switch (W) {
    case 1: FNW(solve_batch, 1)(lu, buf, b, x, work); break;
    case 2: FNW(solve_batch, 2)(lu, buf, b, x, work); break;
    case 4: FNW(solve_batch, 4)(lu, buf, b, x, work); break;
    default: FNW(solve_batch, 8)(lu, buf, b, x, work); break;
    }
    return SV_OK;
}
