/* Test helpers for em: projects from text, full (column-major) L and Ψ,
 * and port admittances by LAPACK solves on full copies (an independent
 * path from the library's solvers). */
#ifndef SUPPORT_EM_H
#define SUPPORT_EM_H

#include <complex.h>

#include "em/em_internal.h"

/* A 3-port irregular shape (12 × 9 cells, εr 10.2) with lossy metal. */
extern const char em_test_lossy_project[];
sv_em_project *em_test_project(const char *json);
sv_em_model *em_test_model(const sv_em_project *p);
/* A project from text, its mesh and its planar model, made and released together. */
typedef struct em_test_case {
    sv_em_project *p;
    sv_em_model *m;
    sv_em_affine *a;
} em_test_case;
void em_test_case_open(em_test_case *c, const char *json);
/* The project text with "radiation": false added unless it sets the switch (malloc'ed): the
 * quasi-static model, for checks against references that have none. */
char *em_test_quasistatic(const char *json);
/* The project text with `entry` (say "\"dispersion\": true") added to its
 * "effects" (malloc'ed). */
char *em_test_with_effect(const char *json, const char *entry);
void em_test_case_close(em_test_case *c);
/* Full n × n symmetric L and Ψ (malloc'ed). */
void em_test_full(const sv_em_model *m, double **L, double **Psi);
/* Y (P × P) at f: lossless (real symmetric dsysv on ω²L − Ψ) if G is NULL,
 * else complex zsysv with Zs·G. */
void em_test_y(const sv_em_model *m, const double *L, const double *Psi, const sv_em_csr *G, double f,
               double complex *Y);
/* Y at f with the model's radiation terms R(f) (radiation.c, full n × n,
 * column-major; NULL = none) added: complex zsysv of
 * jω·L − j·Ψ/ω (+ Zs·G) + R. */
void em_test_y_rad(const sv_em_model *m, const double *L, const double *Psi, const sv_em_csr *G, const double *R,
                   double f, double complex *Y);
/* R(f) = Σ_j c_j(f)·A_j as a full n × n matrix (malloc'ed). */
double *em_test_radiation_full(const sv_em_radiation *rad, int n, double f);
/* S for all-50 Ω (or the project's z0) references. */
void em_test_s(const sv_em_model *m, const double complex *Y, double complex *S);
/* Hammerstad–Jensen static Z0 and εeff for a thin strip. */
void em_test_hj(double w, double h, double er, double *z0, double *eeff);
/* The same with Hammerstad–Jensen's metal-thickness correction. */
void em_test_hj_thick(double w, double h, double t, double er, double *z0, double *eeff);
/* Kirschning and Jansen's εeff(f) of a thin strip (w, h in m, f in Hz). */
double em_test_kirschning_jansen(double w, double h, double er, double f);
/* Kirschning, Jansen and Koster's open-end extension Δl of a thin strip (m). */
double em_test_open_end_kj(double w, double h, double er);
/* Direct solve (sv_em_solve) of a project's quasi-static model (text, or a path under the source tree if
 * is_path) at f with the checks users apply; compare = 1 also checks Y
 * against LAPACK on a full copy (1e-9). */
void em_test_check_solve(const char *json_or_path, int is_path, double f, int compare);
/* A 2-port's S (S11, S21, S12, S22) at f, interpolated linearly on its grid. */
void em_test_touchstone_at(const sv_em_touchstone *t, double f, double complex S[4]);
/* The same for tests/em/data/openems/NAME; its lost power 1 − |S11|² − |S21|². */
void em_test_openems_s(const char *name, double f, double complex S[4]);
double em_test_openems_loss(const char *name, double f);
/* examples/stub.json with the stub's rectangle (its second) dropped: its
 * main line alone, same grid and ports (malloc'ed). */
char *em_test_stub_main_line(void);

#endif
