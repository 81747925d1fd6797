/* The accuracy target on the emulated device: the ~2000-unknown
 * pixelated example (examples/pixel2port.json, 2042 unknowns, lossy metal)
 * solved exactly at 21 frequencies by the GPU solver's host-side loop on the
 * CPU emulation of the device (the blocked single-precision LDLᵀ, the
 * device's products), against the EM module's direct double solve on the
 * CPU (sv_em_solve): max |ΔS| ≤ 1e-9 with double residuals; double-float
 * residuals at two frequencies (their products are slow on the CPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "gpu/gpu_internal.h"
#include "solvent/em.h"

typedef struct em_case {
    sv_em_project *prj;
    sv_em_model *em;
    sv_em_affine *model;
    sv_em_sweep sw;
    double *z0;
    int n, p;
    const sv_sweep_model *m;
} em_case;

/* The example as a project: quasi-static (radiation off: the device forms
 * packed and CSR terms only; a radiating model stays on the CPU, see
 * test_radiating_model_on_cpu) or as the file has it. */
static void em_case_open_as(em_case *c, const char *name, int quasi_static)
{
    memset(c, 0, sizeof(*c));
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    const char *sw = quasi_static ? "{\"effects\": {\"radiation\": false}, " : "{";
    strcpy(text, sw);
    size_t len = strlen(sw);
    int ch;
    while ((ch = fgetc(f)) != EOF && ch != '{') {
    }
    len += fread(text + len, 1, sizeof text - len - 1, f);
    text[len] = 0;
    fclose(f);
    assert_int_equal(sv_em_project_parse(NULL, text, len, name, &c->prj), SV_OK);
    assert_int_equal(sv_em_model_create(NULL, c->prj, NULL, &c->em), SV_OK);
    c->n = sv_em_model_unknowns(c->em);
    c->p = sv_em_model_ports(c->em);
    sv_em_project_sweep(c->prj, &c->sw);
    c->z0 = malloc(sizeof(double) * c->p);
    for (int k = 0; k < c->p; k++) c->z0[k] = sv_em_project_port_z0(c->prj, k);
    assert_int_equal(sv_em_affine_create(NULL, c->em, &c->model), SV_OK);
    c->m = sv_em_affine_model(c->model);
}

static void em_case_close(em_case *c)
{
    sv_em_affine_destroy(c->model);
    sv_em_model_destroy(c->em);
    sv_em_project_destroy(c->prj);
    free(c->z0);
}

/* max |S_gpu − S_ref| over nf frequencies of the band */
static double max_ds(em_case *c, sv_gpu_solver *g, int nf, int *fell_back)
{
    int n = c->n, p = c->p;
    double complex *x = malloc(sizeof(double complex) * n * p), y1[16], y2[16], s1[16], s2[16];
    double worst = 0;
    *fell_back = 0;
    for (int i = 0; i < nf; i++) {
        double f = c->sw.start_hz + (c->sw.stop_hz - c->sw.start_hz) * i / (nf > 1 ? nf - 1 : 1);
        sv_sweep_exact_info info;
        assert_int_equal(sv_gpu_exact_deriv(g, NULL, c->m, f, x, n, 0, NULL, 0, &info), SV_OK);
        *fell_back += info.fell_back;
        assert_int_equal(sv_em_port_admittance(c->em, x, n, y1), SV_OK);
        assert_int_equal(sv_em_solve(NULL, c->model, f, y2), SV_OK);
        assert_int_equal(sv_em_y_to_s(p, y1, c->z0, s1), SV_OK);
        assert_int_equal(sv_em_y_to_s(p, y2, c->z0, s2), SV_OK);
        for (int k = 0; k < p * p; k++) worst = fmax(worst, cabs(s1[k] - s2[k]));
    }
    free(x);
    return worst;
}

static void test_pixel2port(void **state)
{
    (void)state;
    em_case c;
    em_case_open_as(&c, "pixel2port.json", 1);
    assert_int_equal(c.n, 2042);
    sv_gpu_device_info d;
    memset(&d, 0, sizeof(d));
    d.built = d.available = 1;
    d.total_bytes = d.free_bytes = (size_t)1 << 34;
    d.fp32_per_fp64 = 2;
    for (int mode = 1; mode <= 2; mode++) {
        sv_gpu_options o;
        sv_gpu_options_default(&o);
        o.residual = (sv_gpu_residual)mode;
        sv_gpu_solver *g;
        assert_int_equal(sv_gpu_solver_create_with(NULL, c.m, 0, &o, &d, sv_gpu_backend_emulated, NULL, &g), SV_OK);
        assert_true(sv_gpu_solver_on_device(g));
        int fb, nf = mode == 1 ? 21 : 2;
        double ds = max_ds(&c, g, nf, &fb);
        sv_gpu_report rep;
        sv_gpu_solver_report(g, &rep);
        print_message("%s residuals: max |dS| = %.2e over %d frequencies, %d CPU fallbacks, %d iterations\n",
                      mode == 1 ? "double" : "double-float", ds, nf, rep.cpu_fallbacks, rep.iterations);
        assert_true(ds <= 1e-9);
        assert_int_equal(rep.device_solves + rep.cpu_fallbacks, nf);
        assert_true(rep.device_solves >= nf - 1); /* the low band edge may need the CPU (as on the CPU path) */
        sv_gpu_solver_destroy(g);
    }
    em_case_close(&c);
}

/* The radiating model (low-rank terms) is not formed on the device: the
 * solver says so and answers on the CPU, with the CPU's accuracy. */
static void test_radiating_model_on_cpu(void **state)
{
    (void)state;
    em_case c;
    em_case_open_as(&c, "pixel2port.json", 0);
    sv_gpu_device_info d;
    memset(&d, 0, sizeof(d));
    d.built = d.available = 1;
    d.total_bytes = d.free_bytes = (size_t)1 << 34;
    d.fp32_per_fp64 = 2;
    sv_gpu_solver *g;
    assert_int_equal(sv_gpu_solver_create_with(NULL, c.m, 0, NULL, &d, sv_gpu_backend_emulated, NULL, &g), SV_OK);
    assert_false(sv_gpu_solver_on_device(g));
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_non_null(strstr(rep.note, "low-rank"));
    int fb;
    double ds = max_ds(&c, g, 2, &fb);
    print_message("radiating model on the CPU: max |dS| = %.2e (%s)\n", ds, rep.note);
    assert_true(ds <= 1e-9);
    sv_gpu_solver_destroy(g);
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.required = 1;
    assert_int_equal(sv_gpu_solver_create_with(NULL, c.m, 0, &o, &d, sv_gpu_backend_emulated, NULL, &g),
                     SV_ERR_UNSUPPORTED);
    em_case_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pixel2port),
        cmocka_unit_test(test_radiating_model_on_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
