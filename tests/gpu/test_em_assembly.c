/* The device's assembly of the bundled examples, through the CPU emulation
 * of its kernels, against the em module's CPU assembly: the pixelated
 * two-port (2042 unknowns, thick copper, tan δ as the loss ratio and as
 * Ψ_im of its own), the stub, the low-pass filter and a line — to 1e-12
 * relative (issue 15), and bit for bit. Slow (the CPU assembles each case
 * twice and the emulation runs one entry after another). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "support_asm.h"
#include "gpu/gpu_internal.h"

/* examples/NAME with `extra` (JSON members, may be "") added to the project. */
static sv_em_project *example(const char *name, const char *extra)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 256, f);
    fclose(f);
    text[len] = 0;
    char *end = strrchr(text, '}');
    assert_non_null(end);
    snprintf(end, 256, "%s%s}", extra[0] ? ", " : "", extra);
    return asm_project(text);
}

static void check(const char *name, const char *extra, int psi_im)
{
    sv_em_project *p = example(name, extra);
    sv_em_model *m;
    assert_int_equal(sv_em_model_create(NULL, p, NULL, &m), SV_OK);
    sv_gpu_device_info d;
    memset(&d, 0, sizeof d);
    d.built = d.available = 1;
    strcpy(d.name, "emulated device");
    d.total_bytes = d.free_bytes = (size_t)1 << 34;
    sv_gpu_assembler *a;
    assert_int_equal(sv_gpu_assembler_create_with(NULL, NULL, &d, sv_gpu_backend_emulated, NULL, &a), SV_OK);
    double t0 = sv_time_now();
    asm_diff r = asm_compare(m, 0, psi_im, sv_gpu_assembler_em(a));
    sv_gpu_assembly_report rep;
    sv_gpu_assembler_report(a, &rep);
    print_message("%-14s %-24s N = %5d: max rel diff %.1e (entrywise %.1e), %zu of %zu entries differ%s "
                  "(%.1f s both)\n",
                  name, extra[0] ? extra + 11 : "", r.n, r.rel, r.rel_entry, r.differing, r.entries,
                  r.identical ? ", bit for bit equal" : "", sv_time_now() - t0);
    assert_int_equal(rep.device_assemblies, 1);
    assert_true(r.rel <= 1e-12);
    assert_true(r.identical);
    sv_gpu_assembler_destroy(a);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_pixel2port(void **state)
{
    (void)state;
    check("pixel2port.json", "", 0);
    check("pixel2port.json", "\"effects\": {\"dielectric_loss\": \"exact\"}", 1);
}

static void test_other_examples(void **state)
{
    (void)state;
    check("stub.json", "", 0);
    check("pozar_lpf.json", "", 0);
    check("line_44.json", "", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pixel2port),
        cmocka_unit_test(test_other_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
