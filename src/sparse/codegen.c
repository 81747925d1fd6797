/* Straight-line emission: the factor and solve of one analysis written out
 * as C with every slot a literal. Every slot receives the operations of the
 * table-driven kernels (kernels.c) in the same order, so both round
 * identically and agree bit for bit; the factor is register-blocked (see
 * factor_chunks). Each kernel variant (precision, lanes) is the same list of
 * macro calls under different macro definitions, cut into functions of
 * about SV_CHUNK operations. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "sparse_internal.h"

void sv_sparse_codegen_options_default(sv_sparse_codegen_options *opt)
{
    if (!opt) return;
    opt->emit = SV_SPARSE_EMIT_DEFAULT;
    opt->max_updates = 50000;
    opt->max_subst = 50000;
}

sv_sparse_codegen_options sv_sparse_codegen_resolve(const sv_sparse_codegen_options *opt)
{
    sv_sparse_codegen_options r;
    if (opt)
        r = *opt;
    else
        sv_sparse_codegen_options_default(&r);
    if (!r.emit) r.emit = SV_SPARSE_EMIT_DEFAULT;
    return r;
}

sv_status sv_sparse_codegen_check(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt)
{
    long long subst = lu->nnz; /* n pivots + nnz - n off-diagonal terms */
    if (lu->nupd > opt->max_updates)
        return sv_error(SV_ERR_UNSUPPORTED,
                        "codegen: %lld factor updates exceed max_updates = %lld: use the table-driven kernels",
                        lu->nupd, opt->max_updates);
    if (subst > opt->max_subst)
        return sv_error(SV_ERR_UNSUPPORTED,
                        "codegen: %lld substitution terms exceed max_subst = %lld: use the table-driven kernels",
                        subst, opt->max_subst);
    if (!(opt->emit & SV_SPARSE_EMIT_ALL))
        return sv_error(SV_ERR_ARG, "codegen: emit = %u selects no kernel", opt->emit);
    return SV_OK;
}

/* Output helper: remembers the first write error. */
typedef struct emitter {
    FILE *f;
    int col;
    int err; /* the first failed write's errno (EIO when it set none), else 0 */
} emitter;

static void note_error(emitter *e)
{
    if (!e->err) e->err = errno ? errno : EIO;
}

static void put(emitter *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(emitter *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(e->f, fmt, ap);
    va_end(ap);
    if (r < 0) note_error(e);
    else e->col += r;
}

/* A macro call, several per line. */
static void op(emitter *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void op(emitter *e, const char *fmt, ...)
{
    if (e->col > 100) {
        if (fputs("\n   ", e->f) < 0) note_error(e);
        e->col = 3;
    }
    va_list ap;
    va_start(ap, fmt);
    if (fputc(' ', e->f) == EOF) note_error(e);
    int r = vfprintf(e->f, fmt, ap);
    va_end(ap);
    if (r < 0) note_error(e);
    else e->col += r + 1;
}

/* Straight-line bodies are cut into functions of about SV_CHUNK operations
 * (at row boundaries): compilers' register allocation and redundancy
 * elimination grow faster than linearly with a basic block's length, so
 * one function of 50 000 statements takes minutes to compile, fifty of a
 * thousand take seconds. A call per thousand operations costs nothing. */
#define SV_CHUNK 1000

static void chunk_open(emitter *e, const char *tag, const char *T, int kind, int c)
{
    if (kind == 0)
        put(e, "SV_NOINLINE static void %s_f%d(%s *restrict b, int *restrict flags)\n{\n   ", tag, c, T);
    else
        put(e, "SV_NOINLINE static void %s_s%d(const %s *restrict b, %s *restrict wk)\n{\n   ", tag, c, T, T);
    e->col = 3;
}

static void chunk_close(emitter *e)
{
    put(e, "\n}\n");
    e->col = 0;
}

/* The factor body is register-blocked: the slots of a row are taken G at a
 * time into local variables, every update of the row that lands on them is
 * applied there (in increasing pivot column, which is the up-looking order
 * for each slot), L slots are scaled by their pivot's reciprocal as soon as
 * they are final, and each slot is stored once. Every slot therefore sees
 * exactly the operations of the table-driven kernel in the same order, so
 * the results agree bit for bit, but with one load and one store per slot
 * and row instead of one per update, and G independent chains for the
 * processor to overlap.
 *   G(r, s)    r = slot s                 S(r, d, s)  r *= pivot d; slot s = r
 *   X(r, p, q) r -= slot p * slot q       Y(r, l, q)  r -= l * slot q
 *   W(r, s)    slot s = r                 P(s, i)     pivot of row i: flag, invert */
static int factor_chunks(emitter *e, const sv_sparse_lu *lu, const char *tag, const char *T, int G)
{
    const int *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;
    long long x0 = 0, ops = 0;
    int c = 0;
    chunk_open(e, tag, T, 0, c);
    for (int i = 0; i < lu->n; i++) {
        int s0 = rp[i], s1 = rp[i + 1];
        for (int g0 = s0; g0 < s1; g0 += G) {
            if (ops >= SV_CHUNK) {
                chunk_close(e);
                chunk_open(e, tag, T, 0, ++c);
                ops = 0;
            }
            int g1 = g0 + G < s1 ? g0 + G : s1;
            op(e, "{");
            for (int t = g0; t < g1; t++) op(e, "G(r%d,%d)", t - g0, t);
            long long x = x0;
            for (int p = s0; p < dg[i] && p < g1; p++, x++) {
                int k = ci[p], q = dg[k] + 1, in = p >= g0;
                if (in) op(e, "S(r%d,%d,%d)", p - g0, dg[k], p);
                for (long long r = lu->run_off[x]; r < lu->run_off[x + 1]; r++) {
                    int t0 = lu->run_t[r], len = lu->run_len[r];
                    for (int j = 0; j < len; j++) {
                        int t = t0 + j;
                        if (t < g0 || t >= g1) continue;
                        if (in)
                            op(e, "Y(r%d,r%d,%d)", t - g0, p - g0, q + j);
                        else
                            op(e, "X(r%d,%d,%d)", t - g0, p, q + j);
                        ops++;
                    }
                    q += len;
                }
            }
            for (int t = g0 > dg[i] ? g0 : dg[i]; t < g1; t++) op(e, "W(r%d,%d)", t - g0, t);
            op(e, "}");
            ops += g1 - g0;
            if (dg[i] >= g0 && dg[i] < g1) op(e, "P(%d,%d)", dg[i], i + 1);
        }
        x0 += dg[i] - s0;
    }
    chunk_close(e);
    return c + 1;
}

/* Forward then backward substitution on wk (permuted numbering). */
static int solve_chunks(emitter *e, const sv_sparse_lu *lu, const char *tag, const char *T)
{
    const int *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;
    long long ops = 0;
    int c = 0;
    chunk_open(e, tag, T, 1, c);
    for (int i = 0; i < lu->n; i++) {
        if (ops >= SV_CHUNK) {
            chunk_close(e);
            chunk_open(e, tag, T, 1, ++c);
            ops = 0;
        }
        for (int p = rp[i]; p < dg[i]; p++) op(e, "F(%d,%d,%d)", i, p, ci[p]);
        ops += dg[i] - rp[i];
    }
    for (int i = lu->n - 1; i >= 0; i--) {
        if (ops >= SV_CHUNK) {
            chunk_close(e);
            chunk_open(e, tag, T, 1, ++c);
            ops = 0;
        }
        for (int p = dg[i] + 1; p < rp[i + 1]; p++) op(e, "F(%d,%d,%d)", i, p, ci[p]);
        op(e, "D(%d,%d)", i, dg[i]);
        ops += rp[i + 1] - dg[i];
    }
    chunk_close(e);
    return c + 1;
}

/* One variant: type T, W lanes, function names <tag>_factor / <tag>_solve.
 * Batched variants use GCC/Clang vector types (one statement per update
 * whatever W, cheap to compile) and plain lane loops elsewhere; both are
 * the same element-wise IEEE operations. The pivot test is branch-free so
 * that a body stays one basic block. */
static void variant(emitter *e, const sv_sparse_lu *lu, const char *T, int W, const char *tag)
{
    put(e, "\n/* ---- %s, %d lane%s ---- */\n", T, W, W > 1 ? "s (slot-major: slot s of lane w at s*W + w)" : "");
    put(e, "#define W_ %d\n", W);
    put(e, "#define LANES for (int w = 0; w < W_; w++)\n");
    if (W > 1) put(e, "#if defined(__GNUC__) /* batched kernels need vector types; else table-driven */\n");
    if (W == 1) {
        put(e, "#define V(a, s) a[s]\n");
        put(e, "#define V_(a, s) a[s]\n");
        put(e, "typedef %s %s_l;\n", T, tag);
    } else {
        put(e, "typedef %s %s_v __attribute__((vector_size(%d), aligned(%d)));\n", T, tag,
            W * (int)(T[0] == 'd' ? 8 : 4), T[0] == 'd' ? 8 : 4);
        put(e, "#define V(a, s) (*(%s_v *)(a + (s)*W_))\n", tag);
        put(e, "#define V_(a, s) (*(const %s_v *)(a + (s)*W_))\n", tag);
        put(e, "typedef %s_v %s_l;\n", tag, tag);
    }
    put(e, "#define G(r, s) %s_l r = V(b, s);\n", tag);
    put(e, "#define S(r, d, s) r = r * V(b, d); V(b, s) = r;\n");
    put(e, "#define X(r, p, q) r = r - V(b, p) * V(b, q);\n");
    put(e, "#define Y(r, l, q) r = r - l * V(b, q);\n");
    put(e, "#define W(r, s) V(b, s) = r;\n");
    put(e, "#define F(i, p, c) V(wk, i) -= V_(b, p) * V(wk, c);\n");
    put(e, "#define D(i, d) V(wk, i) *= V_(b, d);\n");
    put(e, "#define P(s, r) LANES { const %s d_ = b[(s)*W_ + w]; "
           "flags[w] += (flags[w] == 0) * (!(d_ != 0) | !isfinite(d_)) * (r); b[(s)*W_ + w] = 1 / d_; }\n", T);
    /* Block size: G values of W lanes should fit the vector registers. */
    int G = W * (T[0] == 'd' ? 8 : 4) >= 64 ? 4 : 8;
    int nf = factor_chunks(e, lu, tag, T, G);
    int ns = solve_chunks(e, lu, tag, T);
    put(e, "#undef G\n#undef S\n#undef X\n#undef Y\n#undef W\n#undef P\n#undef F\n#undef D\n");
    put(e, "static void %s_factor(%s *restrict b, int *restrict flags)\n{\n", tag, T);
    put(e, "    LANES flags[w] = 0;\n   ");
    e->col = 3;
    for (int c = 0; c < nf; c++) op(e, "%s_f%d(b, flags);", tag, c);
    put(e, "\n}\n");
    /* x may alias bv: every entry of bv is read into wk before x is written. */
    put(e, "static void %s_solve(const %s *restrict b, const %s *bv, %s *x, %s *restrict wk)\n{\n", tag, T, T, T,
        T);
    put(e, "    static const int pm[%d] = {", lu->n);
    e->col = 30;
    for (int k = 0; k < lu->n; k++) op(e, "%d,", lu->perm[k]);
    put(e, "};\n");
    /* whole lanes at once: a lane loop here became a call of memcpy per row */
    put(e, "    for (int k = 0; k < %d; k++) V(wk, k) = V_(bv, pm[k]);\n   ", lu->n);
    e->col = 3;
    for (int c = 0; c < ns; c++) op(e, "%s_s%d(b, wk);", tag, c);
    put(e, "\n    for (int k = 0; k < %d; k++) V(x, pm[k]) = V_(wk, k);\n}\n", lu->n);
    put(e, "#undef LANES\n#undef W_\n#undef V\n#undef V_\n");
    if (W > 1) put(e, "#endif\n");
    e->col = 0;
    if (W == 1) put(e, "static int %s_factor1(%s *b) { int f[1]; %s_factor(b, f); return f[0]; }\n", tag, T, tag);
}

/* C's keywords up to C23: a table named after one would not compile. */
static const char *const c_keywords[] = {
    "alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default",
    "do", "double", "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long",
    "nullptr", "register", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "struct",
    "switch", "thread_local", "true", "typedef", "typeof", "typeof_unqual", "union", "unsigned", "void",
    "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128",
    "_Decimal32", "_Decimal64", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local", NULL};

/* The names the generated file declares itself (besides the variants'
 * <tag>_ prefixes). */
static const char *const own_names[] = {"sv_sparse_kernels", "SV_NOINLINE", "SV_VEC_", "SOLVENT_SPARSE_H", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

static int is_ident(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    return 1;
}

/* The file's header: what it is, how to use it, the pragmas that keep
 * contraction off, and the kernel table's layout for programs that do not
 * include solvent/sparse.h. */
static void write_header(emitter *e, const sv_sparse_lu *lu, const char *name)
{
    put(e,
        "/* Straight-line sparse LU kernels for one pattern, written by Solvent's code\n"
        " * generator (sv_sparse_codegen_write / `solvent codegen`). Do not edit.\n"
        " *   pattern hash %016" PRIx64 ", n = %d, nnz(L+U) = %d, %lld updates per factor\n"
        " * Use: compile with your program (any C99 compiler; keep floating-point\n"
        " * contraction off, as the pragmas below ask, so that results agree bit for\n"
        " * bit with the table-driven kernels), then\n"
        " *     extern const sv_sparse_kernels %s;\n"
        " *     sv_sparse_lu_use_kernels(lu, &%s);\n"
        " * The library checks the hash: the analysis must come from the same pattern\n"
        " * and ordering as the one this file was generated for. */\n"
        "#include <math.h>\n#include <stdint.h>\n\n"
        "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n"
        "#elif defined(__GNUC__)\n#pragma GCC optimize(\"fp-contract=off\")\n#endif\n"
        "#if defined(__GNUC__)\n#define SV_NOINLINE __attribute__((noinline))\n#define SV_VEC_(f) f\n"
        "#else\n#define SV_NOINLINE\n#define SV_VEC_(f) 0\n#endif\n\n"
        "#ifndef SOLVENT_SPARSE_H\n"
        "/* Layout of sv_sparse_kernels, ABI %d (solvent/sparse.h). */\n"
        "typedef struct sv_sparse_kernels {\n"
        "    int abi;\n    uint64_t hash;\n    int n, nnz;\n"
        "    int (*factor)(double *buf);\n"
        "    void (*solve)(const double *buf, const double *b, double *x, double *work);\n"
        "    int (*factor_f32)(float *buf);\n"
        "    void (*solve_f32)(const float *buf, const float *b, float *x, float *work);\n"
        "    void (*factor_batch[4])(double *buf, int *flags);\n"
        "    void (*solve_batch[4])(const double *buf, const double *b, double *x, double *work);\n"
        "    void (*factor_batch_f32[4])(float *buf, int *flags);\n"
        "    void (*solve_batch_f32[4])(const float *buf, const float *b, float *x, float *work);\n"
        "} sv_sparse_kernels;\n#endif\n",
        lu->hash, lu->n, lu->nnz, lu->nupd, name, name, SV_SPARSE_KERNELS_ABI);
}

/* The variants selected by the emit mask, in this order in the file. */
static const struct {
    unsigned bit;
    const char *T;
    int W;
    const char *tag;
} variants[] = {
    {SV_SPARSE_EMIT_F64, "double", 1, "d1"},       {SV_SPARSE_EMIT_BATCH2_F64, "double", 2, "d2"},
    {SV_SPARSE_EMIT_BATCH4_F64, "double", 4, "d4"}, {SV_SPARSE_EMIT_BATCH8_F64, "double", 8, "d8"},
    {SV_SPARSE_EMIT_F32, "float", 1, "f1"},         {SV_SPARSE_EMIT_BATCH4_F32, "float", 4, "f4"},
    {SV_SPARSE_EMIT_BATCH8_F32, "float", 8, "f8"},
};

sv_status sv_sparse_codegen_check_name(const char *name)
{
    if (!name) return sv_error(SV_ERR_ARG, "sv_sparse_codegen_write: name is NULL");
    const char *why = NULL;
    if (!is_ident(name) || strlen(name) >= 200)
        why = "expected a C identifier (letters, digits and _, not starting with a digit, under 200 characters)";
    else if (in_list(name, c_keywords)) why = "a C keyword: expected an identifier that is not one";
    else if (name[0] == '_')
        why = "reserved for the C implementation (a file-scope name starting with _): expected another identifier";
    else if (in_list(name, own_names)) why = "declared by the generated file itself: expected another identifier";
    for (size_t v = 0; !why && v < sizeof variants / sizeof variants[0]; v++) {
        size_t t = strlen(variants[v].tag);
        if (!strncmp(name, variants[v].tag, t) && name[t] == '_')
            why = "starts like the generated file's own functions (d1_, f8_, ...): expected another identifier";
    }
    if (why) return sv_error(SV_ERR_ARG, "sv_sparse_codegen_write: name = '%s': %s", name, why);
    return SV_OK;
}

/* The kernel table NAME, 0 for the variants not emitted. */
static void write_table(emitter *e, const sv_sparse_lu *lu, unsigned m, const char *name)
{
#define FN(bit, tag, suffix) ((m & (bit)) ? tag "_" suffix : "0")
#define FV(bit, tag, suffix) ((m & (bit)) ? "SV_VEC_(" tag "_" suffix ")" : "0")
    put(e, "\nextern const sv_sparse_kernels %s;\nconst sv_sparse_kernels %s = {\n", name, name);
    put(e, "    %d, UINT64_C(0x%016" PRIx64 "), %d, %d,\n", SV_SPARSE_KERNELS_ABI, lu->hash, lu->n, lu->nnz);
    put(e, "    %s, %s, %s, %s,\n", FN(SV_SPARSE_EMIT_F64, "d1", "factor1"), FN(SV_SPARSE_EMIT_F64, "d1", "solve"),
        FN(SV_SPARSE_EMIT_F32, "f1", "factor1"), FN(SV_SPARSE_EMIT_F32, "f1", "solve"));
    put(e, "    {%s, %s, %s, %s},\n", FN(SV_SPARSE_EMIT_F64, "d1", "factor"), FV(SV_SPARSE_EMIT_BATCH2_F64, "d2", "factor"),
        FV(SV_SPARSE_EMIT_BATCH4_F64, "d4", "factor"), FV(SV_SPARSE_EMIT_BATCH8_F64, "d8", "factor"));
    put(e, "    {%s, %s, %s, %s},\n", FN(SV_SPARSE_EMIT_F64, "d1", "solve"), FV(SV_SPARSE_EMIT_BATCH2_F64, "d2", "solve"),
        FV(SV_SPARSE_EMIT_BATCH4_F64, "d4", "solve"), FV(SV_SPARSE_EMIT_BATCH8_F64, "d8", "solve"));
    put(e, "    {%s, 0, %s, %s},\n", FN(SV_SPARSE_EMIT_F32, "f1", "factor"), FV(SV_SPARSE_EMIT_BATCH4_F32, "f4", "factor"),
        FV(SV_SPARSE_EMIT_BATCH8_F32, "f8", "factor"));
    put(e, "    {%s, 0, %s, %s},\n", FN(SV_SPARSE_EMIT_F32, "f1", "solve"), FV(SV_SPARSE_EMIT_BATCH4_F32, "f4", "solve"),
        FV(SV_SPARSE_EMIT_BATCH8_F32, "f8", "solve"));
    put(e, "};\n");
#undef FN
#undef FV
}

sv_status sv_sparse_codegen_write(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, const char *name,
                                  FILE *out)
{
    if (!lu || !out) return sv_error(SV_ERR_ARG, "sv_sparse_codegen_write: lu or out is NULL");
    sv_status s = sv_sparse_codegen_check_name(name);
    if (s) return s;
    sv_sparse_codegen_options o = sv_sparse_codegen_resolve(opt);
    if ((s = sv_sparse_codegen_check(lu, &o))) return s;
    emitter e = {out, 0, 0};
    write_header(&e, lu, name);
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
        if (o.emit & variants[v].bit) variant(&e, lu, variants[v].T, variants[v].W, variants[v].tag);
    write_table(&e, lu, o.emit, name);
    if (e.err || ferror(out))
        return sv_error(SV_ERR_IO, "writing the generated C failed: %s", strerror(e.err ? e.err : EIO));
    return SV_OK;
}
