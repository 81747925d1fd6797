/* Pattern builders for tests and benchmarks. */
#include <stdlib.h>

#include "sparse_patterns.h"

typedef struct coo {
    int *r, *c;
    int len, cap;
} coo;

static void add(coo *a, int i, int j)
{
    if (a->len == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->r = realloc(a->r, (size_t)a->cap * sizeof(int));
        a->c = realloc(a->c, (size_t)a->cap * sizeof(int));
    }
    a->r[a->len] = i;
    a->c[a->len] = j;
    a->len++;
}

static sv_sparse_pattern *finish(coo *a, int n)
{
    sv_sparse_pattern *p = NULL;
    if (sv_sparse_pattern_from_coo(NULL, n, a->len, a->r, a->c, &p) != SV_OK) p = NULL;
    free(a->r);
    free(a->c);
    return p;
}

sv_sparse_pattern *tp_tridiagonal(int n)
{
    coo a = {0};
    for (int i = 0; i < n; i++)
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) add(&a, i, j);
    return finish(&a, n);
}

sv_sparse_pattern *tp_block_tridiagonal(int nb, int bs)
{
    coo a = {0};
    for (int I = 0; I < nb; I++)
        for (int J = I - 1; J <= I + 1; J++) {
            if (J < 0 || J >= nb) continue;
            for (int x = 0; x < bs; x++)
                for (int y = 0; y < bs; y++) add(&a, I * bs + x, J * bs + y);
        }
    return finish(&a, nb * bs);
}

/* Brusselator reaction-diffusion (Hairer–Wanner II, IV.1): u' = 1 + u²v − 4.4u
 * + α∇²u, v' = 3.4u − u²v + α∇²v; each species couples to its own 5-point
 * periodic stencil and to the other species at the same point. */
sv_sparse_pattern *tp_brusselator2d(int N)
{
    coo a = {0};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int s = 0; s < 2; s++) {
                int row = 2 * (i * N + j) + s;
                int nb[5][2] = {{i, j}, {(i + 1) % N, j}, {(i + N - 1) % N, j}, {i, (j + 1) % N}, {i, (j + N - 1) % N}};
                for (int x = 0; x < 5; x++) add(&a, row, 2 * (nb[x][0] * N + nb[x][1]) + s);
                add(&a, row, 2 * (i * N + j) + (1 - s));
            }
    return finish(&a, 2 * N * N);
}

sv_sparse_pattern *tp_random(int n, int per_row, uint64_t seed)
{
    coo a = {0};
    uint64_t x = seed ? seed : 1;
    char *used = calloc((size_t)n, 1);
    for (int i = 0; i < n; i++) {
        int got = 0;
        used[i] = 1;
        int cols[64];
        while (got < per_row && got < n - 1) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int j = (int)(x % (uint64_t)n);
            if (used[j]) continue;
            used[j] = 1;
            cols[got++] = j;
            add(&a, i, j);
        }
        for (int g = 0; g < got; g++) used[cols[g]] = 0;
        used[i] = 0;
    }
    free(used);
    return finish(&a, n);
}

/* EB-50 (docs/ode.md, EB-50): dense 11 × 11 core plus
 * three tridiagonal tails T3..T15, E3..E15, N3..N15, each tied to its parent
 * T2, E2, N2 by one entry in each direction. */
static const int eb_core[11] = {0, 1, 2, 3, 4, 5, 6, 20, 34, 35, 36};

sv_sparse_pattern *tp_eb50_declared(void)
{
    coo a = {0};
    for (int x = 0; x < 11; x++)
        for (int y = 0; y < 11; y++) add(&a, eb_core[x], eb_core[y]);
    const int parent[3] = {6, 20, 36}, first[3] = {7, 21, 37};
    for (int t = 0; t < 3; t++) {
        for (int l = 0; l < 13; l++) {
            int i = first[t] + l;
            add(&a, i, i);
            if (l > 0) add(&a, i, i - 1);
            if (l < 12) add(&a, i, i + 1);
        }
        add(&a, parent[t], first[t]);
        add(&a, first[t], parent[t]);
    }
    return finish(&a, 50);
}

/* True structure of the equations in docs/ode.md (160 nonzeros; the
 * diagonal, added by the pattern constructor, makes 175 slots). */
sv_sparse_pattern *tp_eb50_true(void)
{
    coo a = {0};
    enum { ETA = 0, DC = 1, DB = 2, VB = 3, T0 = 4, T1 = 5, T2 = 6, E2 = 20, N0 = 34, N1 = 35, N2 = 36 };
    const int rows[11][12] = {
        {ETA, VB, T1, N1, -1},
        {DC, ETA, DC, DB, T0, N0, -1},
        {DB, ETA, DC, DB, VB, T0, N0, -1},
        {VB, DB, VB, T1, -1},
        {T0, ETA, DC, DB, T0, T1, N0, -1},
        {T1, VB, T0, T1, T2, -1},
        {T2, ETA, DC, DB, VB, T0, T1, T2, E2, N0, N1, 7},
        {E2, T2, E2, 21, -1},
        {N0, ETA, DC, DB, T0, N0, N1, -1},
        {N1, N0, N2, -1},
        {N2, ETA, DC, DB, VB, T0, T1, N0, N1, 37, -1},
    };
    for (int r = 0; r < 11; r++)
        for (int x = 1; x < 12 && rows[r][x] >= 0; x++) add(&a, rows[r][0], rows[r][x]);
    /* Tails: T_l and E_l couple to l-1, l, l+1 (the last one to l-1, l);
     * N_l to l-1, l+1 (no self-coupling) and N_15 to N_14, N_15. */
    for (int l = 3; l <= 15; l++) {
        int t = 4 + l, e = 20 + l - 2, nn = 34 + l;
        add(&a, t, t - 1);
        add(&a, t, t);
        add(&a, e, e - 1);
        add(&a, e, e);
        add(&a, nn, nn - 1);
        if (l < 15) {
            add(&a, t, t + 1);
            add(&a, e, e + 1);
            add(&a, nn, nn + 1);
        } else {
            add(&a, nn, nn);
        }
    }
    return finish(&a, 50);
}

/* POLLU (Bari test set, Verwer 1994): 25 reactions among 20 species.
 * Reaction r depends on the species in reac[r]; it appears in the
 * equations of the species in spec[r]. J(s, c) ≠ 0 for c in reac[r], s in
 * spec[r]. 0-based species. */
sv_sparse_pattern *tp_pollu(void)
{
    static const int reac[25][3] = {
        {0, -1},  {1, 3, -1}, {4, 1, -1}, {6, -1},  {6, -1},     {6, 5, -1},  {8, -1},     {8, 5, -1},  {10, 1, -1},
        {10, 0, -1}, {12, -1}, {9, 1, -1}, {13, -1}, {0, 5, -1}, {2, -1},     {3, -1},     {3, -1},     {15, -1},
        {15, -1}, {16, 5, -1}, {18, -1}, {18, -1},   {0, 3, -1}, {18, 0, -1}, {19, -1}};
    /* Species equations (dy_s/dt) and the reactions (1-based) in each. */
    static const int eq[20][13] = {
        {1, 10, 14, 23, 24, 2, 3, 9, 11, 12, 22, 25, 0}, {2, 3, 9, 12, 1, 21, 0}, {15, 1, 17, 19, 22, 0},
        {2, 16, 17, 23, 15, 0}, {3, 4, 6, 7, 13, 20, 0}, {6, 8, 14, 20, 3, 18, 0}, {4, 5, 6, 13, 0},
        {4, 5, 6, 7, 0}, {7, 8, 0}, {12, 7, 9, 0}, {9, 10, 8, 11, 0}, {9, 0}, {11, 10, 0}, {13, 12, 0},
        {14, 0}, {18, 19, 16, 0}, {20, 0}, {20, 0}, {21, 22, 24, 23, 25, 0}, {25, 24, 0}};
    coo a = {0};
    for (int s = 0; s < 20; s++)
        for (int x = 0; eq[s][x]; x++) {
            int r = eq[s][x] - 1;
            for (int y = 0; y < 3 && reac[r][y] >= 0; y++) add(&a, s, reac[r][y]);
        }
    return finish(&a, 20);
}

/* HIRES (Bari test set; docs/ode.md): 25 nonzeros. */
sv_sparse_pattern *tp_hires(void)
{
    static const int rows[8][6] = {{0, 1, 2, -1},    {0, 1, -1},    {2, 3, 4, -1}, {1, 2, 3, -1},
                                   {4, 5, 6, -1},    {3, 4, 5, 6, 7, -1}, {5, 6, 7, -1}, {5, 6, 7, -1}};
    coo a = {0};
    for (int i = 0; i < 8; i++)
        for (int x = 0; x < 6 && rows[i][x] >= 0; x++) add(&a, i, rows[i][x]);
    return finish(&a, 8);
}
