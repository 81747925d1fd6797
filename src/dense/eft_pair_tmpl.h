/* Two-sum and two-product of one precision, included by eft.c with T (the
 * type), FN(x) (the function's name for that precision) and FMA (its
 * fused multiply-add) defined. */

/* s = fl(a + b), e = (a + b) − s exactly (Knuth's branch-free two-sum). */
void FN(sv_dense_two_sum)(T a, T b, T *s_out, T *e_out)
{
    T s = a + b;
    SV_OPAQUE(s);
    T bv = s - a;
    SV_OPAQUE(bv);
    T av = s - bv;
    SV_OPAQUE(av);
    T db = b - bv, da = a - av;
    SV_OPAQUE(db);
    SV_OPAQUE(da);
    *s_out = s;
    *e_out = da + db;
}

/* p = fl(a·b), e = a·b − p exactly (one fused multiply-add). */
void FN(sv_dense_two_prod)(T a, T b, T *p_out, T *e_out)
{
    T p = a * b;
    SV_OPAQUE(p);
    *p_out = p;
    *e_out = FMA(a, b, -p);
}
