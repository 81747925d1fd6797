/* The design evaluator against fresh solves: S of a map after any
 * sequence of flips (trials and accepted ones, by low-rank updates) equals
 * S of the same map built as its own project and solved from scratch by a
 * planar job (LAPACK's zgesv on the full matrix) to 1e-10. The sequences
 * flip single pixels and mirror classes, at the region's edge (beside the
 * launches and the empty border), and connect and cut the launches' path.
 * Effects the updates do not follow are refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_design.h"
#include "sv_test.h"

enum { NF = 3, NC = 13 * 7 };
static const double freq[NF] = {1e9, 4.5e9, 9e9};

static void full_map(unsigned char *map)
{
    for (int c = 0; c < NC; c++) {
        int i = c % 13, j = c / 13;
        map[c] = design_test_in_region(c) || (j >= 2 && j <= 4 && (i <= 3 || i >= 9));
    }
}

static sv_design_eval *make_eval(const design_board *b, unsigned char *region)
{
    unsigned char map[NC];
    full_map(map);
    for (int c = 0; c < NC; c++) region[c] = (unsigned char)design_test_in_region(c);
    sv_em_project *p = design_test_project(b, map);
    sv_design_eval *ev = NULL;
    sv_status st = sv_design_eval_create(NULL, p, region, NF, freq, &ev);
    if (st) fail_msg("evaluator: %s", sv_last_error());
    sv_em_project_destroy(p); /* the evaluator keeps its own copy */
    return ev;
}

/* Mirror partners about the region's centre (i ↔ 12 − i, j ↔ 6 − j). */
static int partners(int c, int sym, int *out)
{
    int i = c % 13, j = c / 13, n = 0;
    int cand[4] = {c, sym & 1 ? (12 - i) + 13 * j : -1, sym & 2 ? i + 13 * (6 - j) : -1, sym == 3 ? (12 - i) + 13 * (6 - j) : -1};
    for (int t = 0; t < 4; t++) {
        int dup = cand[t] < 0;
        for (int u = 0; u < n; u++) dup |= out[u] == cand[t];
        if (!dup) out[n++] = cand[t];
    }
    return n;
}

static double worst;

static void check_against_fresh(const design_board *b, const unsigned char *map, const double complex *s, const char *what)
{
    double complex ref[4 * NF];
    design_test_fresh_s(b, map, NF, freq, ref);
    double d = design_test_maxdiff(4 * NF, s, ref);
    worst = fmax(worst, d);
    if (!(d <= 1e-10)) /* the map, for the record */
        for (int j = 6; j >= 0; j--) {
            for (int i = 0; i < 13; i++) putchar(map[i + 13 * j] ? '#' : '.');
            putchar('\n');
        }
    if (!(d <= 1e-10)) fail_msg("%s: |S - S_fresh| = %.3g > 1e-10", what, d);
}

/* A random walk of `steps` flips (mirror classes under sym), each trial
 * and each accepted map checked against a fresh solve. */
static void walk(const design_board *b, int sym, int steps, uint64_t seed)
{
    unsigned char region[NC], map[NC];
    sv_design_eval *ev = make_eval(b, region);
    sv_test_rng rng;
    sv_test_rng_seed(&rng, seed);
    /* a symmetric random start */
    full_map(map);
    for (int c = 0; c < NC; c++)
        if (region[c]) {
            int q[4], n = partners(c, sym, q), lowest = 1;
            for (int t = 1; t < n; t++) lowest &= q[t] > c;
            if (lowest) {
                int v = (int)(sv_test_rng_next(&rng) & 1);
                for (int t = 0; t < n; t++) map[q[t]] = (unsigned char)v;
            }
        }
    assert_int_equal(sv_design_eval_set_map(ev, map), SV_OK);
    double complex s[4 * NF];
    assert_int_equal(sv_design_eval_s(ev, s), SV_OK);
    check_against_fresh(b, map, s, "start");
    int accepted = 0, joined_changes = 0;
    for (int k = 0; k < steps; k++) {
        int c;
        do c = (int)(sv_test_rng_next(&rng) % NC);
        while (!region[c]);
        int q[4], n = partners(c, sym, q);
        unsigned char trial[NC];
        memcpy(trial, map, NC);
        for (int t = 0; t < n; t++) trial[q[t]] ^= 1;
        assert_int_equal(sv_design_eval_trial(ev, n, q, s), SV_OK);
        char what[64];
        snprintf(what, sizeof what, "trial %d", k);
        check_against_fresh(b, trial, s, what);
        /* S21 at the lowest frequency tells joined (near 1) from apart: count the walk's changes of it */
        if (sv_test_rng_next(&rng) % 2) {
            double complex before[4 * NF];
            assert_int_equal(sv_design_eval_s(ev, before), SV_OK);
            assert_int_equal(sv_design_eval_accept(ev, n, q), SV_OK);
            memcpy(map, trial, NC);
            accepted++;
            assert_int_equal(sv_design_eval_s(ev, s), SV_OK);
            snprintf(what, sizeof what, "accepted %d", k);
            check_against_fresh(b, map, s, what);
            joined_changes += (cabs(before[1]) > 0.5) != (cabs(s[1]) > 0.5);
        }
        assert_memory_equal(sv_design_eval_map(ev), map, NC);
    }
    double drift = -1;
    assert_int_equal(sv_design_eval_refresh(ev, &drift), SV_OK);
    assert_true(drift >= 0 && drift <= 1e-10);
    printf("  sym %d: %d flips, %d accepted, %d connect/cut the launches, %ld frequencies rebuilt; worst |S - S_fresh| "
           "%.2e, drift at the end %.2e\n", sym, steps, accepted, joined_changes, sv_design_eval_rebuilds(ev), worst, drift);
    assert_true(accepted > 0);
    sv_design_eval_destroy(ev);
}

static void test_walk_single(void **state)
{
    (void)state;
    walk(&design_test_board, 0, 60, 11);
}

static void test_walk_symmetric(void **state)
{
    (void)state;
    walk(&design_test_board, 1, 25, 12);
    walk(&design_test_board, 3, 25, 13);
}

static void test_walk_calibrated(void **state)
{
    (void)state;
    design_board b = design_test_board;
    b.calibration = "thru";
    walk(&b, 2, 12, 14);
}

/* Connecting and cutting the path on purpose: the middle row j = 3 laid
 * one pixel at a time from the left launch to the right one, then cut. */
static void test_connect_cut(void **state)
{
    (void)state;
    unsigned char region[NC], map[NC];
    sv_design_eval *ev = make_eval(&design_test_board, region);
    full_map(map);
    for (int c = 0; c < NC; c++)
        if (region[c]) map[c] = 0;
    assert_int_equal(sv_design_eval_set_map(ev, map), SV_OK);
    double complex s[4 * NF];
    for (int i = 4; i <= 8; i++) {
        int c = i + 13 * 3;
        assert_int_equal(sv_design_eval_accept(ev, 1, &c), SV_OK);
        map[c] = 1;
    }
    assert_int_equal(sv_design_eval_s(ev, s), SV_OK);
    check_against_fresh(&design_test_board, map, s, "joined");
    assert_true(cabs(s[1]) > 0.5); /* a through line at 1 GHz */
    int c = 6 + 13 * 3;
    assert_int_equal(sv_design_eval_trial(ev, 1, &c, s), SV_OK);
    map[c] = 0;
    check_against_fresh(&design_test_board, map, s, "cut");
    assert_true(cabs(s[1]) < 0.5);
    sv_design_eval_destroy(ev);
}

/* An evaluator made at a map (sv_design_eval_create_at) holds that map's
 * S as a fresh solve has it, and its flips are exact from there. */
static void test_create_at_map(void **state)
{
    (void)state;
    const design_board *b = &design_test_board;
    unsigned char full[NC], region[NC], map[NC];
    full_map(full);
    for (int c = 0; c < NC; c++) region[c] = (unsigned char)design_test_in_region(c);
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 7);
    memcpy(map, full, NC);
    for (int c = 0; c < NC; c++)
        if (region[c]) map[c] = sv_test_uniform(&rng) < 0.2; /* 60 % metal */
    sv_em_project *p = design_test_project(b, full);
    sv_design_eval *ev = NULL;
    if (sv_design_eval_create_at(NULL, p, region, NF, freq, map, &ev)) fail_msg("evaluator: %s", sv_last_error());
    sv_em_project_destroy(p);
    assert_memory_equal(sv_design_eval_map(ev), map, NC);
    double complex s[4 * NF];
    assert_int_equal(sv_design_eval_s(ev, s), SV_OK);
    check_against_fresh(b, map, s, "created at a random map");
    int pix = -1;
    for (int c = 0; c < NC && pix < 0; c++)
        if (region[c] && !map[c]) pix = c;
    assert_true(pix >= 0);
    assert_int_equal(sv_design_eval_trial(ev, 1, &pix, s), SV_OK);
    map[pix] = 1;
    check_against_fresh(b, map, s, "a flip of the created map");
    sv_design_eval_destroy(ev);
}

static void refused(const char *effects, const char *name)
{
    design_board b = design_test_board;
    b.effects = effects;
    unsigned char map[NC], region[NC];
    full_map(map);
    for (int c = 0; c < NC; c++) region[c] = (unsigned char)design_test_in_region(c);
    sv_em_project *p = design_test_project(&b, map);
    sv_design_eval *ev = NULL;
    sv_status st = sv_design_eval_create(NULL, p, region, NF, freq, &ev);
    if (st != SV_ERR_UNSUPPORTED || !strstr(sv_last_error(), name))
        fail_msg("expected a refusal naming %s, got %d: %s", name, st, sv_last_error());
    assert_null(ev);
    sv_em_project_destroy(p);
}

static void test_refused_effects(void **state)
{
    (void)state;
    refused("{\"dielectric_loss\": \"exact\", \"radiation\": false, \"edge_profile\": false, \"edge_cells\": false}",
            "effects.thick_metal");
    refused("{\"thick_metal\": false, \"dielectric_loss\": \"exact\", \"edge_profile\": false, \"edge_cells\": false}",
            "effects.radiation");
    refused("{\"thick_metal\": false, \"dielectric_loss\": \"exact\", \"radiation\": false}", "effects.edge_profile");
    refused("{\"thick_metal\": false, \"radiation\": false, \"edge_profile\": false, \"edge_cells\": false}",
            "effects.dielectric_loss");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_walk_single), cmocka_unit_test(test_walk_symmetric),
                                       cmocka_unit_test(test_walk_calibrated), cmocka_unit_test(test_connect_cut),
                                       cmocka_unit_test(test_create_at_map), cmocka_unit_test(test_refused_effects)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
