/* The device's assembly through the CPU emulation of its kernels, against
 * the CPU's assembly of the em module (itself checked against the closed
 * forms pair by pair in tests/em/test_assembly.c): small models that cover
 * every step — far and near table entries of P, Lx and Ly, a lossy
 * dielectric's P_im, ports on four sides, thick metal's side walls, odd
 * block sizes — must agree to 1e-12 relative (issue 15), and bit for bit
 * (the emulation runs the CPU's own formulas in the CPU's order); and the
 * assembler's fallbacks to the CPU: no device, too little
 * device memory, a device error in either half of the assembly. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sv_test.h"
#include "support_asm.h"
#include "gpu/gpu_internal.h"

/* A 30 × 24-cell block with holes and a slot, ports on four sides, dx ≠ dy,
 * thick copper; {tan} and {effects} filled in. */
static const char block_fmt[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.5, \"eps_r\": 6.15%s},"
    "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    "\"grid\": {\"dx\": 0.3, \"dy\": 0.2, \"nx\": 30, \"ny\": 24},"
    "\"rectangles\": [{\"x\": [0, 9], \"y\": [0, 1.8]}, {\"x\": [0, 9], \"y\": [2.2, 4.8]},"
    "               {\"x\": [3, 3.6], \"y\": [1.8, 2.2]}],"
    "\"ports\": [{\"name\": \"L\", \"side\": \"left\", \"x\": 0, \"y\": [0.4, 1.0]},"
    "          {\"name\": \"R\", \"side\": \"right\", \"x\": 9, \"y\": [3.0, 3.4]},"
    "          {\"name\": \"B\", \"side\": \"bottom\", \"y\": 0, \"x\": [6.0, 6.9]},"
    "          {\"name\": \"T\", \"side\": \"top\", \"y\": 4.8, \"x\": [1.2, 1.5]}]%s}";

typedef struct asm_case {
    sv_em_project *p;
    sv_em_model *m;
} asm_case;

static asm_case case_open(const char *tan, const char *effects, double far_ratio)
{
    char json[2048];
    snprintf(json, sizeof json, block_fmt, tan, effects);
    asm_case c;
    c.p = asm_project(json);
    sv_em_options o;
    sv_em_options_default(&o);
    o.far_ratio = far_ratio;
    assert_int_equal(sv_em_model_create(NULL, c.p, &o, &c.m), SV_OK);
    return c;
}

static void case_close(asm_case *c)
{
    sv_em_model_destroy(c->m);
    sv_em_project_destroy(c->p);
}

static sv_gpu_device_info fake_device(size_t free_bytes)
{
    sv_gpu_device_info d;
    memset(&d, 0, sizeof d);
    d.built = d.available = 1;
    strcpy(d.name, "emulated device");
    d.cc_major = 9;
    d.total_bytes = d.free_bytes = free_bytes;
    d.fp32_per_fp64 = 2;
    return d;
}

static sv_gpu_assembler *emulated(const sv_gpu_emu_options *eo, size_t free_bytes)
{
    sv_gpu_device_info d = fake_device(free_bytes);
    sv_gpu_assembler *a;
    assert_int_equal(sv_gpu_assembler_create_with(NULL, NULL, &d, sv_gpu_backend_emulated, (void *)eo, &a), SV_OK);
    return a;
}

/* How many table entries of each kind the plan leaves to the device, and
 * what its rows hold: the cases must exercise every step. */
static void plan_counts(const sv_em_model *m, int psi_im, int *far, int *near, size_t *walls)
{
    sv_em_assembly_plan *plan;
    assert_int_equal(sv_em_assembly_plan_create(NULL, m, psi_im, &plan), SV_OK);
    const sv_em_tables *t = sv_em_assembly_plan_tables(plan);
    far[0] = far[1] = far[2] = near[0] = near[1] = near[2] = 0;
    for (int q = 0; q < t->nx * t->ny; q++) {
        far[0] += t->far_P[q];
        far[1] += t->far_Lx[q];
        far[2] += t->far_Ly[q];
        near[0] += !t->far_P[q];
        near[1] += !t->far_Lx[q];
        near[2] += !t->far_Ly[q];
    }
    const sv_em_assembly_rows *rows;
    assert_int_equal(sv_em_assembly_plan_rows(plan, &rows), SV_OK);
    assert_true(rows->np > 0);
    walls[0] = rows->nl;
    walls[1] = rows->nps;
    sv_em_assembly_plan_destroy(plan);
}

static void check_case(const char *name, const char *tan, const char *effects, double far_ratio, int psi_im, int nb,
                       int thick)
{
    asm_case c = case_open(tan, effects, far_ratio);
    int far[3], near[3];
    size_t walls[2];
    plan_counts(c.m, psi_im, far, near, walls);
    sv_gpu_assembler *a = emulated(NULL, (size_t)1 << 34);
    asm_diff d = asm_compare(c.m, nb, psi_im, sv_gpu_assembler_em(a));
    sv_gpu_assembly_report rep;
    sv_gpu_assembler_report(a, &rep);
    print_message("%-28s N = %d, nb %d: far/near P %d/%d Lx %d/%d Ly %d/%d, walls %zu dL %zu dPsi; "
                  "max rel diff %.1e (entrywise %.1e), %zu of %zu entries differ%s\n",
                  name, d.n, nb, far[0], near[0], far[1], near[1], far[2], near[2], walls[0], walls[1], d.rel,
                  d.rel_entry, d.differing, d.entries, d.identical ? ", bit for bit equal" : "");
    assert_true(far[0] > 0 && near[0] > 0 && far[1] > 0 && near[1] > 0 && far[2] > 0 && near[2] > 0);
    if (thick) assert_true(walls[0] > 0 && walls[1] > 0);
    else assert_true(walls[0] == 0 && walls[1] == 0);
    assert_true(d.rel <= 1e-12);
    /* the emulation runs the CPU assembly's own formulas in its order: not a
     * bit may differ (a 1e-15 change of the far P shows as 1e-11 entrywise
     * in the folded Ψ) */
    assert_true(d.identical);
    assert_int_equal(rep.device_assemblies, 1);
    assert_int_equal(rep.cpu_assemblies, 0);
    assert_string_equal(rep.note, "");
    sv_gpu_assembler_destroy(a);
    case_close(&c);
}

static void test_sheet(void **state)
{
    (void)state;
    check_case("sheet, far ratio 2", "", ", \"effects\": {\"thick_metal\": false}", 2, 0, 0, 0);
}

static void test_thick_lossy_ratio(void **state)
{
    (void)state;
    check_case("thick, tan d 0.02 (ratio)", ", \"tan_delta\": 0.02", "", 2, 0, 5, 1);
}

static void test_thick_lossy_exact(void **state)
{
    (void)state;
    check_case("thick, tan d 0.02 (exact)", ", \"tan_delta\": 0.02", ", \"effects\": {\"dielectric_loss\": \"exact\"}",
               2, 1, 16, 1);
    check_case("thick, exact, far ratio 3", ", \"tan_delta\": 0.02", ", \"effects\": {\"dielectric_loss\": \"exact\"}",
               3, 1, 0, 1);
}

/* Every way the device cannot: the answer is the CPU's, and the report
 * says so. */
static void test_fallbacks(void **state)
{
    (void)state;
    asm_case c = case_open(", \"tan_delta\": 0.02", "", 2);
    sv_gpu_assembly_report rep;

    for (int fail = 1; fail <= 2; fail++) { /* a device error in either half; later ones on the CPU */
        sv_gpu_emu_options eo = {.fail_assembly = fail};
        sv_gpu_assembler *a = emulated(&eo, (size_t)1 << 34);
        for (int k = 0; k < 2; k++) {
            asm_diff d = asm_compare(c.m, 0, 0, sv_gpu_assembler_em(a));
            assert_true(d.identical);
        }
        sv_gpu_assembler_report(a, &rep);
        assert_false(rep.on_device);
        assert_int_equal(rep.assemblies, 2);
        assert_int_equal(rep.device_errors, 1);
        assert_int_equal(rep.cpu_assemblies, 2);
        assert_int_equal(rep.device_assemblies, 0);
        assert_non_null(strstr(rep.note, "launch failure"));
        sv_gpu_assembler_destroy(a);
    }

    /* too little device memory: this assembly on the CPU, the device kept */
    sv_gpu_assembler *a = emulated(NULL, (size_t)64 << 20);
    assert_true(asm_compare(c.m, 0, 0, sv_gpu_assembler_em(a)).identical);
    sv_gpu_assembler_report(a, &rep);
    assert_true(rep.on_device);
    assert_int_equal(rep.cpu_assemblies, 1);
    assert_non_null(strstr(rep.note, "GiB free"));
    sv_gpu_assembler_destroy(a);

    /* no device: created on the CPU unless the device is required */
    sv_gpu_device_info none;
    memset(&none, 0, sizeof none);
    strcpy(none.reason, "no CUDA-capable device is detected");
    assert_int_equal(sv_gpu_assembler_create_with(NULL, NULL, &none, sv_gpu_backend_emulated, NULL, &a), SV_OK);
    assert_true(asm_compare(c.m, 0, 0, sv_gpu_assembler_em(a)).identical);
    sv_gpu_assembler_report(a, &rep);
    assert_false(rep.on_device);
    assert_string_equal(rep.note, "no CUDA device: no CUDA-capable device is detected");
    sv_gpu_assembler_destroy(a);
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.required = 1;
    assert_int_equal(sv_gpu_assembler_create_with(NULL, &o, &none, sv_gpu_backend_emulated, NULL, &a),
                     SV_ERR_UNSUPPORTED);
    assert_null(a);

    /* the real back end on this machine: a device or a clean reason */
    assert_int_equal(sv_gpu_assembler_create(NULL, NULL, &a), SV_OK);
    sv_gpu_assembler_report(a, &rep);
    print_message("this machine: %s%s%s\n", rep.device, rep.note[0] ? "; " : "", rep.note);
    assert_true(asm_compare(c.m, 0, 0, sv_gpu_assembler_em(a)).rel <= 1e-12);
    sv_gpu_assembler_destroy(a);
    case_close(&c);
}

/* The plan's arguments. */
static void test_plan_arguments(void **state)
{
    (void)state;
    asm_case c = case_open("", "", 0);
    sv_em_assembly_plan *plan = NULL;
    assert_int_equal(sv_em_assembly_plan_create(NULL, c.m, 1, &plan), SV_ERR_ARG); /* Ψ_im of a lossless slab */
    assert_null(plan);
    assert_non_null(strstr(sv_last_error(), "lossless"));
    assert_int_equal(sv_em_assembly_plan_create(NULL, NULL, 0, &plan), SV_ERR_ARG);
    assert_int_equal(sv_em_assembly_plan_create(NULL, c.m, 0, NULL), SV_ERR_ARG);
    assert_int_equal(sv_em_assembly_plan_rows(NULL, NULL), SV_ERR_ARG);
    sv_dense_sym *L, *P, *PI;
    assert_int_equal(sv_em_assemble_with(NULL, c.m, 0, NULL, &L, &P, &PI, NULL), SV_ERR_ARG);
    case_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sheet),
        cmocka_unit_test(test_thick_lossy_ratio),
        cmocka_unit_test(test_thick_lossy_exact),
        cmocka_unit_test(test_fallbacks),
        cmocka_unit_test(test_plan_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
