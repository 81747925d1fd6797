/* Low frequencies by a loop–tree basis (J.-S. Zhao and W. C. Chew,
 * "Integral equation solution of Maxwell's equations from zero frequency to
 * microwave frequencies", IEEE Trans. Antennas Propag. 48(10), 2000; the
 * loop–star idea of D. R. Wilton and A. W. Glisson, 1981).
 *
 * As f → 0 the charge term −j·Ψ/ω outgrows jω·L and Zs·G until the loop
 * currents (Ψ's null space: no cell charges) are lost to rounding in Z(f).
 * Here the unknowns are changed to T·y: the cells (and the ports' ground)
 * are the nodes of a graph whose edges are the unknowns; a spanning tree's
 * edges keep their own columns, every other (cotree) edge becomes its
 * fundamental loop (the edge and the tree path closing it), on which Ψ is
 * exactly zero. So Tᵀ·Z·T = Tᵀ·Z_other·T + (charge terms on the tree
 * block only): the loops keep their resistance and inductance exactly.
 * The tree rows and columns are scaled by √ω (the charge term's ω·c_k is
 * finite, so nothing overflows as f → 0) and the matrix is equilibrated
 * before a complex symmetric LDLᵀ in double (LAPACK zsysv). At ω = 0 the
 * tree block is Ψ's alone and the loops are the resistor network of dc.c:
 * the path is continuous with the DC limit. */
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "em_internal.h"

sv_status sv_em_check_solve_frequency(const char *who, double freq_hz)
{
    if (isfinite(freq_hz) && freq_hz >= SV_EM_MIN_FREQ_HZ && freq_hz <= SV_EM_MAX_FREQ_HZ) return SV_OK;
    if (freq_hz > 0 && freq_hz < SV_EM_MIN_FREQ_HZ)
        return sv_error(SV_ERR_ARG, "%s: frequency = %g Hz: below %g Hz the circuit's S is its DC limit to "
                                    "double precision (use 0 Hz for DC)",
                        who, freq_hz, SV_EM_MIN_FREQ_HZ);
    return sv_error(SV_ERR_ARG, "%s: frequency = %g Hz: expected a finite value from %g to %g Hz (0 Hz, DC, "
                                "is the model's DC limit: sv_em_dc_s)",
                    who, freq_hz, SV_EM_MIN_FREQ_HZ, SV_EM_MAX_FREQ_HZ);
}

size_t sv_em_loop_tree_bytes(const sv_em_model *m)
{
    if (!m) return 0;
    size_t n = (size_t)m->n, np = (size_t)m->prj->nports, cells = (size_t)m->prj->grid.nx * m->prj->grid.ny + 1;
    /* the matrix; solutions, scaling and pivots; the forest (the loops' lists, 5 bytes per edge of each
     * loop's tree path, are not counted: a few MB where the matrix takes GB) */
    return 16 * n * n + n * (32 * np + 24) + cells * 6 * sizeof(int);
}

int sv_em_affine_low_frequency(const sv_em_affine *a, double freq_hz)
{
    return a && freq_hz > 0 && sv_em_affine_others_share(a, freq_hz) < SV_EM_LOWFREQ_SHARE;
}

/* The loop–tree basis: tree[q] marks tree edges; a cotree edge q's loop is
 * q itself (+1) and the tree edges idx[ptr[q]..ptr[q+1]) with signs val. */
typedef struct loop_tree {
    int n;
    unsigned char *tree;
    int *ptr, *idx;
    signed char *val;
} loop_tree;

/* The spanning forest: nodes are the grid's cells and, last, the ground
 * that the ports' half rooftops reach; edges are the unknowns. */
typedef struct forest {
    int nodes, ground;
    int *up;          /* node -> its tree edge to its parent (−1 at a root) */
    int *parent;      /* node -> its parent node */
    signed char *sign; /* node -> D(node, up[node]) */
    int *depth;
    int *adj_ptr, *adj; /* node -> incident unknowns */
} forest;

/* The two ends of unknown q and the signs of D (the cells' divergence) at
 * them; a port half rooftop's second end is the ground (sign 0). */
static void edge_ends(const sv_em_model *m, const forest *f, int q, int end[2], int sg[2])
{
    int ci[2], cj[2], s[2];
    const sv_em_basis *b = &m->basis[q];
    int nb = sv_em_unknown_cells(b->kind, b->i, b->j, ci, cj, s);
    end[0] = ci[0] + m->prj->grid.nx * cj[0];
    sg[0] = s[0];
    end[1] = nb == 2 ? ci[1] + m->prj->grid.nx * cj[1] : f->ground;
    sg[1] = nb == 2 ? s[1] : 0;
}

static void forest_free(sv_ctx *ctx, forest *f)
{
    void *const owned[] = {f->up, f->parent, f->sign, f->depth, f->adj_ptr, f->adj};
    sv_free_each(ctx, owned, SV_COUNT(owned));
}

/* Incidence lists of the graph (the unknowns at each node). */
static void forest_adjacency(const sv_em_model *m, forest *f)
{
    for (int q = 0; q < m->n; q++) {
        int end[2], sg[2];
        edge_ends(m, f, q, end, sg);
        f->adj_ptr[end[0] + 1]++;
        f->adj_ptr[end[1] + 1]++;
    }
    for (int v = 0; v < f->nodes; v++) f->adj_ptr[v + 1] += f->adj_ptr[v];
    for (int q = 0; q < m->n; q++) {
        int end[2], sg[2];
        edge_ends(m, f, q, end, sg);
        for (int e = 0; e < 2; e++) f->adj[f->adj_ptr[end[e]] + f->depth[end[e]]++] = q; /* depth: a fill count */
    }
}

/* Breadth-first trees from the ground, then from any node not yet reached
 * (a piece of metal without a port). queue: nodes ints. */
static void forest_grow(const sv_em_model *m, forest *f, int *queue)
{
    for (int v = 0; v < f->nodes; v++) {
        f->up[v] = -1;
        f->depth[v] = -1;
    }
    int head = 0, tail = 0;
    for (int pass = 0; pass <= f->nodes; pass++) {
        int root = pass == 0 ? f->ground : pass - 1;
        if (f->depth[root] >= 0 || f->adj_ptr[root + 1] == f->adj_ptr[root]) continue;
        f->depth[root] = 0;
        queue[tail++] = root;
        while (head < tail) {
            int v = queue[head++];
            for (int e = f->adj_ptr[v]; e < f->adj_ptr[v + 1]; e++) {
                int q = f->adj[e], end[2], sg[2];
                edge_ends(m, f, q, end, sg);
                int k = end[0] == v, w = end[k ? 1 : 0];
                if (f->depth[w] >= 0) continue;
                f->depth[w] = f->depth[v] + 1;
                f->up[w] = q;
                f->parent[w] = v;
                f->sign[w] = (signed char)sg[k ? 1 : 0];
                queue[tail++] = w;
            }
        }
    }
}

static sv_status forest_make(sv_ctx *ctx, const sv_em_model *m, forest *f)
{
    int ncell = m->prj->grid.nx * m->prj->grid.ny;
    *f = (forest){.nodes = ncell + 1, .ground = ncell};
    size_t nn = (size_t)f->nodes;
    f->up = sv_alloc(ctx, sizeof(int) * nn, "low-frequency tree");
    f->parent = sv_alloc(ctx, sizeof(int) * nn, "low-frequency tree");
    f->sign = sv_alloc(ctx, nn, "low-frequency tree");
    f->depth = sv_calloc(ctx, nn, sizeof(int), "low-frequency tree");
    f->adj_ptr = sv_calloc(ctx, nn + 1, sizeof(int), "low-frequency tree");
    f->adj = sv_alloc(ctx, sizeof(int) * 2 * (size_t)m->n, "low-frequency tree");
    int *queue = sv_alloc(ctx, sizeof(int) * nn, "low-frequency tree");
    sv_status st = f->up && f->parent && f->sign && f->depth && f->adj_ptr && f->adj && queue ? SV_OK : sv_last_status();
    if (!st) {
        forest_adjacency(m, f);
        forest_grow(m, f, queue);
    }
    sv_free(ctx, queue);
    if (st) forest_free(ctx, f);
    return st;
}

/* Carry an injection δ of divergence at node u up its tree to the root:
 * each tree edge on the way takes −δ·sign so that its lower node balances. */
static void climb(const forest *f, int u, int delta, int *acc, int *touched, int *nt)
{
    for (int w = u; f->up[w] >= 0; w = f->parent[w]) {
        int q = f->up[w];
        if (acc[q] == 0) touched[(*nt)++] = q;
        acc[q] -= delta * f->sign[w];
    }
}

/* The loops of the cotree edges (their tree paths), from the forest. */
static sv_status loops_make(sv_ctx *ctx, const sv_em_model *m, const forest *f, loop_tree *lt)
{
    int n = m->n;
    *lt = (loop_tree){.n = n};
    lt->tree = sv_calloc(ctx, (size_t)n, 1, "low-frequency loops");
    lt->ptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "low-frequency loops");
    int *acc = sv_calloc(ctx, (size_t)n, sizeof(int), "low-frequency loops");
    int *touched = sv_alloc(ctx, sizeof(int) * (size_t)n, "low-frequency loops");
    sv_status st = lt->tree && lt->ptr && acc && touched ? SV_OK : sv_last_status();
    size_t bound = 0;
    for (int v = 0; !st && v < f->nodes; v++)
        if (f->up[v] >= 0) lt->tree[f->up[v]] = 1;
    for (int q = 0; !st && q < n; q++) {
        int end[2], sg[2];
        edge_ends(m, f, q, end, sg);
        if (!lt->tree[q]) bound += (size_t)f->depth[end[0]] + (size_t)(f->depth[end[1]] > 0 ? f->depth[end[1]] : 0);
    }
    if (!st) {
        lt->idx = sv_alloc(ctx, sizeof(int) * (bound + 1), "low-frequency loops");
        lt->val = sv_alloc(ctx, bound + 1, "low-frequency loops");
        if (!lt->idx || !lt->val) st = sv_last_status();
    }
    int used = 0;
    for (int q = 0; !st && q < n; q++) {
        lt->ptr[q] = used;
        if (lt->tree[q]) continue;
        int end[2], sg[2], nt = 0;
        edge_ends(m, f, q, end, sg);
        for (int e = 0; e < 2; e++)
            if (sg[e]) climb(f, end[e], sg[e], acc, touched, &nt);
        for (int k = 0; k < nt; k++) {
            int t = touched[k];
            if (acc[t]) {
                lt->idx[used] = t;
                lt->val[used++] = (signed char)acc[t];
            }
            acc[t] = 0;
        }
    }
    if (!st) lt->ptr[n] = used;
    sv_free(ctx, acc);
    sv_free(ctx, touched);
    return st;
}

static void loops_free(sv_ctx *ctx, loop_tree *lt)
{
    void *const owned[] = {lt->tree, lt->ptr, lt->idx, lt->val};
    sv_free_each(ctx, owned, SV_COUNT(owned));
}

/* Z += c·A_k for a term that is not a charge term (full n × n, column-major). */
static void add_term(const sv_sweep_term *t, int n, double complex c, double complex *z)
{
    if (t->kind == SV_SWEEP_TERM_PACKED) {
        for (int col = 0; col < n; col++)
            for (int r = col; r < n; r++) {
                double complex v = c * t->packed[sv_dense_packed_offset(n, t->nb, r, col)];
                z[r + (size_t)n * col] += v;
                if (r != col) z[col + (size_t)n * r] += v;
            }
    } else if (t->kind == SV_SWEEP_TERM_CSR) {
        for (int r = 0; r < n; r++)
            for (int e = t->rowptr[r]; e < t->rowptr[r + 1]; e++) z[r + (size_t)n * t->colind[e]] += c * t->values[e];
    } else { /* low rank: U·W·Uᵀ */
        int k = t->rank;
        for (int col = 0; col < n; col++)
            for (int a = 0; a < k; a++) {
                double uw = 0;
                for (int b = 0; b < k; b++) uw += t->core[a + (size_t)k * b] * t->u[col + (size_t)n * b];
                if (uw == 0) continue;
                for (int r = 0; r < n; r++) z[r + (size_t)n * col] += c * t->u[r + (size_t)n * a] * uw;
            }
    }
}

/* The other terms of Z(f) in full. */
static sv_status fill_others(const sv_em_affine *a, double freq_hz, double complex *z)
{
    int n = sv_em_affine_em(a)->n, nt = sv_sweep_model_nterms(sv_em_affine_model(a));
    memset(z, 0, sizeof *z * (size_t)n * (size_t)n);
    for (int k = 0; k < nt; k++) {
        if (sv_em_affine_is_charge(a, k)) continue;
        double complex c = sv_em_affine_coefficient(a, k, freq_hz);
        if (!isfinite(creal(c)) || !isfinite(cimag(c)))
            return sv_error(SV_ERR_NONFINITE, "frequency %g Hz: the coefficient of model term %d is not finite",
                            freq_hz, k);
        add_term(sv_sweep_model_term(sv_em_affine_model(a), k), n, c, z);
    }
    return SV_OK;
}

/* Z ← Tᵀ·Z·T: each cotree column, then each cotree row, gains its loop's
 * tree columns (rows), which stay as they are. */
static void to_loop_tree(const loop_tree *lt, double complex *z)
{
    int n = lt->n;
    for (int q = 0; q < n; q++)
        for (int e = lt->ptr[q]; e < lt->ptr[q + 1]; e++) {
            double complex *dst = z + (size_t)n * q;
            const double complex *src = z + (size_t)n * lt->idx[e];
            for (int r = 0; r < n; r++) dst[r] += lt->val[e] * src[r];
        }
    for (int q = 0; q < n; q++)
        for (int e = lt->ptr[q]; e < lt->ptr[q + 1]; e++)
            for (int c = 0; c < n; c++) z[q + (size_t)n * c] += lt->val[e] * z[lt->idx[e] + (size_t)n * c];
}

/* The tree rows and columns scaled by s = √ω, then the charge terms' ω·c_k
 * on the tree block (their only block in the loop–tree basis). */
static sv_status scale_add_charge(const sv_em_affine *a, const loop_tree *lt, double s, double complex *z)
{
    int n = lt->n, nt = sv_sweep_model_nterms(sv_em_affine_model(a));
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) z[r + (size_t)n * c] *= (lt->tree[r] ? s : 1) * (lt->tree[c] ? s : 1);
    for (int k = 0; k < nt; k++) {
        if (!sv_em_affine_is_charge(a, k)) continue;
        const sv_sweep_term *t = sv_sweep_model_term(sv_em_affine_model(a), k);
        if (t->kind != SV_SWEEP_TERM_PACKED)
            return sv_error(SV_ERR_INTERNAL, "sv_em_solve_loop_tree: charge term %d is not packed", k);
        double complex wc = sv_em_affine_charge_coefficient(a, k);
        for (int c = 0; c < n; c++)
            if (lt->tree[c])
                for (int r = 0; r < n; r++)
                    if (lt->tree[r]) z[r + (size_t)n * c] += wc * t->packed[sv_dense_packed_offset(n, t->nb, r, c)];
    }
    return SV_OK;
}

/* b = S·Tᵀ·B (n × np). */
static void rhs(const sv_em_affine *a, const loop_tree *lt, double s, int np, double complex *b)
{
    int n = lt->n;
    const double *B = sv_sweep_model_rhs(sv_em_affine_model(a));
    for (int k = 0; k < np; k++)
        for (int q = 0; q < n; q++) {
            double v = B[q + (size_t)n * k];
            for (int e = lt->ptr[q]; e < lt->ptr[q + 1]; e++) v += lt->val[e] * B[lt->idx[e] + (size_t)n * k];
            b[q + (size_t)n * k] = lt->tree[q] ? s * v : v;
        }
}

/* Symmetric scaling by powers of two (exact) to unit-sized diagonal: the
 * loop block (ohms) and the tree block (Ψ's) differ by many decades. */
static void equilibrate(int n, int np, double complex *z, double complex *b, double *d)
{
    for (int i = 0; i < n; i++) {
        int e = 0;
        double m = cabs(z[i + (size_t)n * i]);
        if (m > 0 && isfinite(m)) frexp(m, &e);
        d[i] = ldexp(1.0, -e / 2);
    }
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) z[r + (size_t)n * c] *= d[r] * d[c];
    for (int k = 0; k < np; k++)
        for (int r = 0; r < n; r++) b[r + (size_t)n * k] *= d[r];
}

/* X = T·S·D·y in place of b's columns (x: n × np). */
static void back_to_rooftops(const loop_tree *lt, double s, const double *d, int np, const double complex *y,
                             double complex *x)
{
    int n = lt->n;
    for (int k = 0; k < np; k++) {
        const double complex *yk = y + (size_t)n * k;
        double complex *xk = x + (size_t)n * k;
        for (int q = 0; q < n; q++) xk[q] = d[q] * yk[q] * (lt->tree[q] ? s : 1);
        for (int q = 0; q < n; q++)
            for (int e = lt->ptr[q]; e < lt->ptr[q + 1]; e++) xk[lt->idx[e]] += lt->val[e] * d[q] * yk[q];
    }
}

/* Factor and solve the scaled loop–tree system, then Y. */
static sv_status solve_system(sv_ctx *ctx, const sv_em_affine *a, const loop_tree *lt, double freq_hz, double s,
                              double complex *z, double complex *y)
{
    const sv_em_model *em = sv_em_affine_em(a);
    int n = em->n, np = em->prj->nports;
    double complex *b = sv_alloc(ctx, sizeof *b * (size_t)n * (size_t)np, "low-frequency solutions");
    double complex *x = sv_alloc(ctx, sizeof *x * (size_t)n * (size_t)np, "low-frequency solutions");
    double *d = sv_alloc(ctx, sizeof *d * (size_t)n, "low-frequency scaling");
    lapack_int *ipiv = sv_alloc(ctx, sizeof *ipiv * (size_t)n, "low-frequency pivots");
    sv_status st = b && x && d && ipiv ? SV_OK : sv_last_status();
    if (!st) {
        rhs(a, lt, s, np, b);
        equilibrate(n, np, z, b, d);
        lapack_int info = LAPACKE_zsysv(LAPACK_COL_MAJOR, 'L', n, np, z, n, ipiv, b, n);
        if (info > 0)
            st = sv_error(SV_ERR_SINGULAR, "frequency %g Hz: the low-frequency (loop-tree) system is singular "
                                           "(pivot %d of %d)", freq_hz, (int)info, n);
        else if (info < 0)
            st = sv_error(SV_ERR_INTERNAL, "zsysv argument %d rejected", (int)-info);
    }
    if (!st) {
        back_to_rooftops(lt, s, d, np, b, x);
        st = sv_em_port_admittance(em, x, n, y);
    }
    void *const owned[] = {b, x, d, ipiv};
    sv_free_each(ctx, owned, SV_COUNT(owned));
    return st;
}

sv_status sv_em_solve_loop_tree(sv_ctx *ctx, const sv_em_affine *a, double freq_hz, double complex *y)
{
    if (!a || !y) return sv_error(SV_ERR_ARG, "sv_em_solve_loop_tree: NULL argument");
    sv_status st = sv_em_check_solve_frequency("sv_em_solve_loop_tree", freq_hz);
    if (st) return st;
    const sv_em_model *em = sv_em_affine_em(a);
    int n = em->n;
    size_t nn;
    if (sv_size_mul((size_t)n, (size_t)n, &nn) || nn > SIZE_MAX / sizeof(double complex))
        return sv_error(SV_ERR_ARG, "sv_em_solve_loop_tree: n = %d: the full matrix would overflow size_t", n);
    forest f;
    loop_tree lt = {0};
    st = forest_make(ctx, em, &f);
    if (st) return st;
    st = loops_make(ctx, em, &f, &lt);
    forest_free(ctx, &f);
    double complex *z = st ? NULL : sv_alloc(ctx, nn * sizeof *z, "low-frequency (loop-tree) matrix");
    if (!st && !z) st = sv_last_status();
    double s = sqrt(2 * SV_EM_PI * freq_hz);
    sv_threads_saved prev = sv_threads_apply(ctx);
    if (!st) st = fill_others(a, freq_hz, z);
    if (!st) {
        to_loop_tree(&lt, z);
        st = scale_add_charge(a, &lt, s, z);
    }
    if (!st) st = solve_system(ctx, a, &lt, freq_hz, s, z, y);
    sv_threads_restore(prev);
    sv_free(ctx, z);
    loops_free(ctx, &lt);
    return st;
}
