/* Calibrated edge ports (docs/em.md, "Calibrated ports"): each port's own
 * discontinuity is measured on two thru lines of the port's feed (same
 * width, grid, stack-up and physics as the circuit, lengths ℓ and 2ℓ),
 * modelled as a series Zs at the terminal and a shunt Yp on the line side,
 * and removed; a port may then move its reference plane along its feed line
 * by a length (de-embedding a section of the line the standards measured).
 *
 * Extraction, per frequency: γ comes from cosh(γ·Δℓ) = tr(M2·M1⁻¹)/2
 * (whatever the boxes are). In even and odd modes a standard's impedances
 * are the box's Möbius map E∘z = (a·z + b)/(c·z + d) of the half line's,
 * open (Zc·coth(γℓ/2)) and shorted (Zc·tanh(γℓ/2)): four points fix E once
 * Zc is known. Zc is what leaves a box and a line indistinguishable (an
 * ideal transformer moves between them), so it is fixed once, at a low
 * reference frequency where the box is lumped — a series Zs at the
 * terminal and a shunt Yp, z_e = Zs + 1/(t/Zc + Yp), z_o = Zs + 1/(1/(t·Zc)
 * + Yp), t = tanh(γℓ/2), which leaves a quadratic in Zs whose small root is
 * the port's. The model's line has no dispersion of its own, but its metal
 * loss makes Zc = Z'/γ complex and larger at low frequencies; its shunt
 * admittance per length Y' = γ/Zc is the quasi-static charge term's, exactly
 * proportional to f, so below f_ref Zc(f) = Zc·(γ(f)/γ_ref)·(f_ref/f) (a
 * fixed Zc would leave the mismatch in the box as an ideal transformer:
 * 2.4 % at 3 MHz). Above it the radiation terms' conductance breaks that
 * proportion and the loss is a small part of Z': Zc stays. On lossless
 * metal Z' = jωL' has no resistance to change Zc at any frequency, and the
 * scaling would carry radiation's share of γ_ref down to frequencies where
 * the line has none: the box would then remove more loss than the line
 * has (S active by 3e-6 on a lossless 50 Ω line at 0.6 GHz), so Zc stays
 * there too.
 *
 * Far below the reference frequency cosh(γ·Δℓ) − 1 sinks towards the
 * standards' own rounding and the extraction is noise; there the box is the
 * one at an eighth of the reference frequency (still well conditioned) with
 * Zs's reactance and Yp scaled by f (a lumped box), the line's γ from the
 * same Z' and Y'. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "em_internal.h"

typedef struct standard {
    int axis, width;       /* feed axis (0: x, 1: y) and width in cells */
    double complex *box;   /* per frequency: a, b, c, d (ABCD, det 1), Zc, γ */
} standard;

struct sv_em_calibration {
    sv_ctx *ctx;
    int nf, np;
    int nstd;
    standard *std;
    int *port_std;          /* per port: its standard, −1 = raw port */
    double *shift;          /* per port: reference-plane shift, m (into the circuit > 0) */
    /* what the standards were made from besides their feeds (line_project,
     * line_y): a model alike in these gets the same boxes (sv_em_calibration_fits) */
    sv_em_project made_from;    /* its st, grid (dx, dy) and switches; no arrays */
    sv_em_options opts;         /* the standards' options (line_y) */
    double *freq;               /* nf */
};

/* The options of a model's standards: the circuit's, its radiation terms'
 * design frequency as their top (not the line's own limit). */
static sv_em_options standard_options(const sv_em_model *dut)
{
    sv_em_options o = dut->opts;
    o.max_freq_hz = sv_em_radiation_design_hz(dut);
    return o;
}

/* The feed of port k: axis and width in cells. */
static void feed_of(const sv_em_port_def *d, int *axis, int *width)
{
    *axis = d->side >= SV_EM_BOTTOM;
    *width = d->k1 - d->k0;
}

/* A straight line of `len` cells of the feed, ports at both ends, with the
 * circuit's grid, stack-up and switches. */
static sv_status line_project(sv_ctx *ctx, const sv_em_project *dut, int axis, int width, int len,
                              sv_em_project **out)
{
    sv_em_project *p = sv_calloc(ctx, 1, sizeof *p, "calibration standard");
    if (!p) return sv_last_status();
    p->ctx = ctx;
    p->st = dut->st;
    p->grid = dut->grid;
    p->grid.x0 = p->grid.y0 = 0;
    p->grid.nx = axis ? width : len;
    p->grid.ny = axis ? len : width;
    p->radiation = dut->radiation;
    p->edge_profile = dut->edge_profile; /* a feed one cell wide is such a strip */
    p->edge_cells = dut->edge_cells;     /* and a wider feed has edge cells */
    p->dispersion = dut->dispersion;
    p->dispersion_far = dut->dispersion_far;
    p->nports = 2;
    p->metal = sv_alloc(ctx, (size_t)len * width, "calibration standard metal");
    p->ports = sv_calloc(ctx, 2, sizeof *p->ports, "calibration standard ports");
    if (!p->metal || !p->ports) {
        sv_status s = sv_last_status();
        sv_em_project_destroy(p);
        return s;
    }
    memset(p->metal, 1, (size_t)len * width);
    for (int k = 0; k < 2; k++) {
        sv_em_port_def *d = &p->ports[k];
        snprintf(d->name, sizeof d->name, "%s", k ? "b" : "a");
        d->z0 = 50;
        d->side = axis ? (k ? SV_EM_TOP : SV_EM_BOTTOM) : (k ? SV_EM_RIGHT : SV_EM_LEFT);
        d->line = k ? len : 0;
        d->k0 = 0;
        d->k1 = width;
    }
    *out = p;
    return SV_OK;
}

/* The shares of a line standard's progress (rough costs): its model (the
 * mesh, the walls' shares, the radiation terms), its affine model, its
 * sweep. */
#define SHARE_MODEL 0.2
#define SHARE_AFFINE 0.4
#define SHARE_SWEEP 0.4

/* Y (2 × 2 per frequency) of a line standard, swept with the circuit's
 * options. It has the circuit's cell, stack-up, effects and options, so
 * its model shares the circuit's wall tables and edge memo (its assembly
 * uses the changes the circuit's found and adds its own). */
static sv_status line_y(sv_ctx *ctx, const sv_em_model *dut, int axis, int width, int len, int nf, const double *freq,
                        double complex *y)
{
    sv_em_project *p = NULL;
    sv_em_model *m = NULL;
    sv_em_affine *a = NULL;
    sv_sweep_result *res = NULL;
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_MODEL + SHARE_AFFINE + SHARE_SWEEP);
    sv_em_part(&parts, SHARE_MODEL);
    sv_status s = line_project(ctx, dut->prj, axis, width, len, &p);
    sv_em_options o = standard_options(dut);
    if (!s) s = sv_em_model_create_sharing(ctx, p, &o, dut, &m);
    if (!s) s = sv_progress(ctx, "calibration standards", 1.0);
    sv_em_part(&parts, SHARE_AFFINE);
    if (!s) s = sv_em_affine_create(ctx, m, &a);
    sv_em_part(&parts, SHARE_SWEEP);
    if (!s) {
        sv_sweep_options so;
        sv_sweep_options_default(&so);
        so.tolerance = 1e-6;
        s = sv_em_sweep_run(ctx, a, nf, freq, &so, &res);
    }
    sv_em_parts_end(&parts);
    if (!s) memcpy(y, res->h, sizeof(double complex) * 4 * (size_t)nf);
    sv_sweep_result_destroy(res);
    sv_em_affine_destroy(a);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
    return s;
}

/* Z = Y⁻¹ of a symmetric two-port, as even and odd mode impedances. */
static void even_odd(const double complex *y, double complex *ze, double complex *zo)
{
    double complex y11 = 0.5 * (y[0] + y[3]), y21 = 0.5 * (y[1] + y[2]);
    *ze = 1 / (y11 + y21);
    *zo = 1 / (y11 - y21);
}

/* ABCD from a two-port's Y (column-major [y11 y21 y12 y22]). */
static void y_to_abcd(const double complex *y, double complex t[4])
{
    double complex y11 = y[0], y21 = y[1], y12 = y[2], y22 = y[3];
    t[0] = -y22 / y21;
    t[2] = -1 / y21;
    t[1] = -(y11 * y22 - y12 * y21) / y21;
    t[3] = -y11 / y21;
}

/* γ from the standards of ℓ1 and ℓ2: cosh(γ·(ℓ2 − ℓ1)) = tr(M2·M1⁻¹)/2,
 * the branch with β ≥ 0 (the lengths keep β·Δℓ below π). */
static double complex propagation(const double complex *y1, const double complex *y2, double l1, double l2)
{
    double complex t1m[4], t2m[4];
    y_to_abcd(y1, t1m);
    y_to_abcd(y2, t2m);
    double complex det = t1m[0] * t1m[3] - t1m[1] * t1m[2];
    double complex tr = (t2m[0] * t1m[3] - t2m[2] * t1m[1] - t2m[1] * t1m[2] + t2m[3] * t1m[0]) / det;
    double complex g = cacosh(tr / 2);
    if (cimag(g) < 0) g = -g;
    return g / (l2 - l1);
}

/* Zc of the feed line from a lumped box (see the top of the file). */
static double complex lumped_zc(const double complex *y1, const double complex *y2, double l1, double l2)
{
    double complex gamma = propagation(y1, y2, l1, l2);
    double complex ta = ctanh(gamma * l1 / 2), tb = ctanh(gamma * l2 / 2);
    double complex ze1, zo1, ze2, zo2;
    even_odd(y1, &ze1, &zo1);
    even_odd(y2, &ze2, &zo2);
    double complex al = (ze1 - zo1) * (1 / tb - tb), be = (ze2 - zo2) * (1 / ta - ta);
    double complex qa = al - be, qb = -(al * (zo2 + ze2) - be * (zo1 + ze1)), qc = al * zo2 * ze2 - be * zo1 * ze1;
    double complex zs;
    if (cabs(qa) <= 1e-14 * (cabs(qb) + cabs(qc))) {
        zs = -qc / qb;
    } else {
        double complex disc = csqrt(qb * qb - 4 * qa * qc), r1 = (-qb + disc) / (2 * qa), r2 = (-qb - disc) / (2 * qa);
        zs = cabs(r1) < cabs(r2) ? r1 : r2;
    }
    double complex ue1 = 1 / (ze1 - zs), uo1 = 1 / (zo1 - zs), ue2 = 1 / (ze2 - zs), uo2 = 1 / (zo2 - zs);
    double complex A = 0.5 * ((uo1 - ue1) / (1 / ta - ta) + (uo2 - ue2) / (1 / tb - tb));
    return 1 / A;
}

/* The box E = [a b; c d] (det 1) and γ at one frequency, Zc given: the
 * Möbius map through the four (half line, standard) impedance pairs, as
 * the null vector of a·z + b − c·z·w − d·w = 0 (LAPACK SVD). */
static sv_status extract(const double complex *y1, const double complex *y2, double l1, double l2, double f,
                         double complex zc, double complex box[6])
{
    double complex gamma = propagation(y1, y2, l1, l2), z[4], w[4];
    even_odd(y1, &w[0], &w[1]);
    even_odd(y2, &w[2], &w[3]);
    z[0] = zc / ctanh(gamma * l1 / 2);
    z[1] = zc * ctanh(gamma * l1 / 2);
    z[2] = zc / ctanh(gamma * l2 / 2);
    z[3] = zc * ctanh(gamma * l2 / 2);
    /* rows scaled to unit size: the points differ by orders of magnitude */
    double complex m[16], sv_u[1], vt[16];
    double sg[4], sup[3];
    for (int i = 0; i < 4; i++) {
        double complex row[4] = {z[i], 1, -z[i] * w[i], -w[i]};
        double nr = 0;
        for (int q = 0; q < 4; q++) nr += creal(row[q] * conj(row[q]));
        nr = sqrt(nr);
        for (int q = 0; q < 4; q++) m[i + 4 * q] = row[q] / nr;
    }
    sv_threads_saved serial = sv_threads_serial_begin(); /* LAPACK on this thread (threads.c) */
    lapack_int info = LAPACKE_zgesvd(LAPACK_COL_MAJOR, 'N', 'A', 4, 4, m, 4, sg, sv_u, 1, vt, 4, sup);
    sv_threads_restore(serial);
    double complex a = conj(vt[3]), b = conj(vt[3 + 4]), c = conj(vt[3 + 8]), d = conj(vt[3 + 12]);
    double complex det = csqrt(a * d - b * c);
    box[0] = a / det;
    box[1] = b / det;
    box[2] = c / det;
    box[3] = d / det;
    box[4] = zc;
    box[5] = gamma;
    int bad = info != 0;
    for (int q = 0; q < 6; q++) bad |= !isfinite(creal(box[q])) || !isfinite(cimag(box[q]));
    if (bad)
        return sv_error(SV_ERR_NONFINITE, "port calibration: the thru standards gave no error box at %g Hz "
                                          "(standards of %g and %g m)",
                        f, l1, l2);
    return SV_OK;
}

/* Below this |cosh(γ·Δℓ) − 1| the standards (solved to 1e-6) no longer fix
 * the box: it comes from the one at an eighth of the reference frequency
 * (lumped_box), one of the CAL_EXTRA frequencies the standards are solved at
 * beyond the circuit's (the other: the reference frequency, for Zc). */
#define CAL_CONDITIONED 1e-4
#define CAL_EXTRA 2

/* The box at f from the one at fref (lumped there), ref: E = [a b; c d]
 * with b = Zs, c = Yp, then Zc and γ; Im Zs and Yp scale with f/f_ref (a
 * series inductance and a shunt capacitance with their losses), Re Zs by
 * `loss` (loss_ratio), a and d (the residual ideal transformer) are kept,
 * det renormalised to 1. γ from the line's Z' (its resistance kept, its
 * reactance scaled) and Y' (scaled): γ² = Z'·Y'. */
static void lumped_box(const double complex ref[6], double fref, double f, double loss, double complex box[6])
{
    double r = f / fref;
    double complex a = ref[0], b = creal(ref[1]) * loss + I * cimag(ref[1]) * r, c = ref[2] * r, d = ref[3];
    double complex det = csqrt(a * d - b * c);
    box[0] = a / det;
    box[1] = b / det;
    box[2] = c / det;
    box[3] = d / det;
    double complex zl = ref[4] * ref[5], yl = ref[5] / ref[4]; /* Z', Y' at f_ref */
    double complex g = csqrt((creal(zl) + I * cimag(zl) * r) * yl * r);
    box[5] = cimag(g) < 0 ? -g : g;
    box[4] = box[5] / (yl * r);
}

/* How the box's series resistance scales from f_ref to f on lossy metal:
 * it is the port's excess loss over the feed's (the current crowding at
 * its edge), which goes as the metal's surface resistance above its DC
 * value and vanishes at DC, where the current is uniform and the DC limit
 * has none. On lossless metal it is the discontinuity's radiation, which
 * for a small source goes as (f/f_ref)² (a short dipole's R = 80π²(ℓ/λ)²;
 * Balanis, Antenna Theory, 3rd ed., eq. 4-37): kept constant, the
 * resistance removed at 1 Hz would exceed the line's and make S active. */
static double loss_ratio(const sv_em_stackup *st, double fref, double f)
{
    if (!isfinite(st->sigma)) return (f / fref) * (f / fref);
    double rdc = creal(sv_em_surface_impedance(st->sigma, st->t, 0));
    double at = creal(sv_em_surface_impedance(st->sigma, st->t, f)) - rdc;
    double ref = creal(sv_em_surface_impedance(st->sigma, st->t, fref)) - rdc;
    return ref > 0 && at >= 0 ? at / ref : 1;
}

/* Lengths of the standards in cells: the first at least three feed widths
 * (the port's local fields decay within about one), the difference under
 * 0.4 guided wavelengths at the top frequency (so that γ·Δℓ is not
 * ambiguous; λg ≥ λ0/√εr). */
static void standard_lengths(const sv_em_model *m, int axis, int width, double fmax, int *n1, int *n2)
{
    const sv_em_grid *g = &m->prj->grid;
    double d = axis ? g->dy : g->dx, w = width * (axis ? g->dx : g->dy);
    int a = (int)ceil(3 * w / d);
    if (a < 6) a = 6;
    double lg = SV_EM_C0 / (fmax * sqrt(m->prj->st.eps_r));
    int dl = (int)floor(0.4 * lg / d);
    if (dl < 2) dl = 2;
    if (dl > a) dl = a;
    *n1 = a;
    *n2 = a + dl;
}

/* The reference frequency for Zc: β·Δℓ about 0.2 (well conditioned, the
 * box still lumped), from λg ≥ λ0/√εr. */
static double reference_hz(const sv_em_model *m, double dl)
{
    return 0.2 * SV_EM_C0 / (2 * SV_EM_PI * dl * sqrt(m->prj->st.eps_r));
}

/* Unknowns of a line standard `len` cells long and `width` wide: rooftops
 * along and across it, a half rooftop per cell edge of each port. */
static int line_unknowns(int width, int len) { return (len - 1) * width + len * (width - 1) + 2 * width; }

/* Bytes one line standard holds at most (line_y): its radiation terms while
 * they are made, L and Ψ (and Ψ_im, L₂), G, B, its assembly's tables, its sweep. */
static size_t standard_bytes(const sv_em_model *m, int axis, int width, int len, int nf)
{
    const sv_em_project *p = m->prj;
    const sv_em_stackup *st = &p->st;
    int n = line_unknowns(width, len), psi_im = st->tan_delta > 0 && st->exact_dielectric_loss;
    int packed = 2 + psi_im + p->dispersion;
    size_t N = (size_t)n, bytes = (size_t)packed * sv_dense_sym_bytes(n, SV_DENSE_R64, 0);
    bytes += (N + 1) * sizeof(int) + (7 * N + 1) * (sizeof(int) + sizeof(double)) + 2 * N * sizeof(double);
    bytes += sizeof(double) * 8 * (2 * (size_t)width + 1) * (2 * (size_t)len + 1);
    sv_sweep_shape shape = {.nterms = packed + isfinite(st->sigma)};
    if (p->radiation) {
        double along = axis ? p->grid.dy : p->grid.dx, across = axis ? p->grid.dx : p->grid.dy;
        int moments;
        bytes += sv_em_radiation_build_bytes(n, 0.5 * hypot(len * along, width * across),
                                             sv_em_radiation_design_hz(m), sv_em_radiation_tolerance(m), &moments);
        shape.nterms += SV_EM_RAD_MAX_TERMS;
        shape.lowrank = SV_EM_RAD_MAX_TERMS;
        shape.lowrank_cols = moments < n ? moments : n;
    }
    sv_sweep_options so;
    sv_sweep_options_default(&so);
    so.tolerance = 1e-6;
    return bytes + sv_sweep_estimate_bytes_shape(n, &shape, 2, 2, 0, nf, &so);
}

size_t sv_em_calibration_bytes(const sv_em_model *m, int nf, const double *freq_hz)
{
    if (!m || nf < 1 || !freq_hz) return 0;
    double fmax = 0;
    for (int i = 0; i < nf; i++) fmax = fmax < freq_hz[i] ? freq_hz[i] : fmax;
    size_t most = 0;
    for (int k = 0; k < m->prj->nports; k++) {
        const sv_em_port_def *d = &m->prj->ports[k];
        if (!d->calibrate) continue;
        int axis, width, n1, n2;
        feed_of(d, &axis, &width);
        standard_lengths(m, axis, width, fmax, &n1, &n2);
        size_t b = standard_bytes(m, axis, width, n2, nf + CAL_EXTRA); /* the longer; one at a time */
        most = b > most ? b : most;
    }
    /* each standard's frequencies, its boxes (the sum over ports at most) */
    return most ? most + sizeof(double complex) * (size_t)(nf + CAL_EXTRA) * (8 + 6 * (size_t)m->prj->nports) : 0;
}

static sv_status make_standard(sv_ctx *ctx, const sv_em_model *m, int nf, const double *freq, standard *sd)
{
    double fmax = 0;
    for (int i = 0; i < nf; i++) fmax = fmax < freq[i] ? freq[i] : fmax;
    int n1, n2;
    standard_lengths(m, sd->axis, sd->width, fmax, &n1, &n2);
    double d = sd->axis ? m->prj->grid.dy : m->prj->grid.dx;
    int nall = nf + CAL_EXTRA;
    double complex *y1 = sv_alloc(ctx, sizeof(double complex) * 8 * (size_t)nall, "calibration standards");
    double *fall = sv_alloc(ctx, sizeof(double) * (size_t)nall, "calibration frequencies");
    sd->box = sv_alloc(ctx, sizeof(double complex) * 6 * (size_t)nf, "calibration error boxes");
    if (!y1 || !fall || !sd->box) {
        sv_free(ctx, y1);
        sv_free(ctx, fall);
        return sv_last_status();
    }
    memcpy(fall, freq, sizeof(double) * (size_t)nf);
    fall[nf] = reference_hz(m, (n2 - n1) * d);
    fall[nf + 1] = fall[nf] / 8; /* the lumped box's: cosh(γ·Δℓ) − 1 ≈ 3e-4, conditioned */
    double complex *y2 = y1 + 4 * (size_t)nall;
    /* the two lines, each its length's part of the standard's progress */
    sv_em_parts parts = sv_em_parts_begin(ctx, n1 + n2);
    sv_em_part(&parts, n1);
    sv_status s = line_y(ctx, m, sd->axis, sd->width, n1, nall, fall, y1);
    sv_em_part(&parts, n2);
    if (!s) s = line_y(ctx, m, sd->axis, sd->width, n2, nall, fall, y2);
    sv_em_parts_end(&parts);
    const double l1 = n1 * d, l2 = n2 * d, fref = fall[nf], flo = fall[nf + 1];
    const int lossy = isfinite(m->prj->st.sigma); /* Zc scales below f_ref (the top of the file) */
    double complex zc = 0, gref = 0, lo[6];
    if (!s) {
        const double complex *y1r = y1 + 4 * (size_t)nf, *y2r = y2 + 4 * (size_t)nf;
        zc = creal(lumped_zc(y1r, y2r, l1, l2));
        gref = propagation(y1r, y2r, l1, l2);
    }
    /* the box at flo, then at each frequency: extracted where the standards
     * fix it, lumped from flo's below */
    for (int i = nf + 1; i >= 0 && !s; i--) {
        if (i == nf) continue;
        const double complex *a = y1 + 4 * (size_t)i, *b = y2 + 4 * (size_t)i;
        double complex g = propagation(a, b, l1, l2), *box = i > nf ? lo : sd->box + 6 * (size_t)i;
        if (i < nf && cabs(ccosh(g * (l2 - l1)) - 1) < CAL_CONDITIONED)
            lumped_box(lo, flo, fall[i], loss_ratio(&m->prj->st, flo, fall[i]), box);
        else
            s = extract(a, b, l1, l2, fall[i], fall[i] < fref && lossy ? zc * (g / gref) * (fref / fall[i]) : zc, box);
    }
    sv_free(ctx, y1);
    sv_free(ctx, fall);
    return s;
}

/* Each calibrated port's standard: one per feed (axis and width), shared
 * by the ports with that feed; the ports' reference-plane shifts. */
static void plan_standards(sv_em_calibration *c, const sv_em_project *p)
{
    for (int k = 0; k < c->np; k++) {
        const sv_em_port_def *d = &p->ports[k];
        c->port_std[k] = -1;
        c->shift[k] = d->ref_shift;
        if (!d->calibrate) continue;
        int axis, width;
        feed_of(d, &axis, &width);
        for (int q = 0; q < c->nstd; q++)
            if (c->std[q].axis == axis && c->std[q].width == width) c->port_std[k] = q;
        if (c->port_std[k] >= 0) continue;
        c->std[c->nstd] = (standard){.axis = axis, .width = width};
        c->port_std[k] = c->nstd++;
    }
}

/* The standards' error boxes, each standard an equal part of the progress. */
static sv_status make_standards(sv_ctx *ctx, const sv_em_model *m, int nf, const double *freq, sv_em_calibration *c)
{
    sv_em_parts parts = sv_em_parts_begin(ctx, c->nstd);
    sv_status s = SV_OK;
    for (int q = 0; q < c->nstd && !s; q++) {
        sv_em_part(&parts, 1);
        s = sv_progress(ctx, "calibration standards", 0);
        if (!s) s = make_standard(ctx, m, nf, freq, &c->std[q]);
    }
    sv_em_parts_end(&parts);
    return s ? s : sv_progress(ctx, "calibration standards", 1.0);
}

sv_status sv_em_calibration_create(sv_ctx *ctx, const sv_em_model *m, int nf, const double *freq,
                                   sv_em_calibration **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_calibration_create: out is NULL");
    *out = NULL;
    if (!m || nf < 1 || !freq) return sv_error(SV_ERR_ARG, "sv_em_calibration_create: NULL model or frequencies");
    for (int i = 0; i < nf; i++)
        if (!(freq[i] > 0) || !isfinite(freq[i]))
            return sv_error(SV_ERR_ARG, "sv_em_calibration_create: frequency %d = %g Hz: expected > 0", i, freq[i]);
    const sv_em_project *p = m->prj;
    int np = p->nports;
    /* refused before the first standard is made, not after its assembly */
    sv_status s = sv_mem_check(ctx, sv_em_calibration_bytes(m, nf, freq), "port calibration (its thru standards)");
    if (s) return s;
    sv_em_calibration *c = sv_calloc(ctx, 1, sizeof *c, "port calibration");
    if (!c) return sv_last_status();
    c->ctx = ctx;
    c->nf = nf;
    c->np = np;
    c->std = sv_calloc(ctx, (size_t)np, sizeof *c->std, "calibration standards");
    c->port_std = sv_alloc(ctx, sizeof(int) * (size_t)np, "calibration ports");
    c->shift = sv_alloc(ctx, sizeof(double) * (size_t)np, "calibration shifts");
    c->freq = sv_alloc(ctx, sizeof(double) * (size_t)nf, "calibration frequencies");
    s = (!c->std || !c->port_std || !c->shift || !c->freq) ? sv_last_status() : SV_OK;
    if (!s) {
        memcpy(c->freq, freq, sizeof(double) * (size_t)nf);
        c->made_from = *p;
        c->made_from.metal = NULL, c->made_from.ports = NULL, c->made_from.pixels_file = NULL;
        c->opts = standard_options(m);
        plan_standards(c, p);
    }
    sv_progress_span op = sv_progress_span_begin(ctx, 0, 1);
    if (!s) s = make_standards(ctx, m, nf, freq, c);
    sv_progress_span_end(ctx, op);
    if (s) {
        sv_em_calibration_destroy(c);
        return s;
    }
    *out = c;
    return SV_OK;
}

void sv_em_calibration_destroy(sv_em_calibration *c)
{
    if (!c) return;
    for (int q = 0; q < c->nstd; q++) sv_free(c->ctx, c->std[q].box);
    sv_free(c->ctx, c->std);
    sv_free(c->ctx, c->port_std);
    sv_free(c->ctx, c->shift);
    sv_free(c->ctx, c->freq);
    sv_free(c->ctx, c);
}

/* 1 when the stack-ups, cells, switches and options the standards see
 * (line_project, line_y) are the same. */
static int same_making(const sv_em_calibration *c, const sv_em_project *p, const sv_em_options *o)
{
    const sv_em_project *q = &c->made_from;
    const sv_em_stackup *s = &p->st, *t = &q->st;
    const sv_em_options *u = &c->opts;
    return s->h == t->h && s->eps_r == t->eps_r && s->sigma == t->sigma && s->t == t->t &&
           s->tan_delta == t->tan_delta && s->thick_metal == t->thick_metal &&
           s->exact_dielectric_loss == t->exact_dielectric_loss && p->grid.dx == q->grid.dx &&
           p->grid.dy == q->grid.dy && p->radiation == q->radiation && p->edge_profile == q->edge_profile &&
           p->edge_cells == q->edge_cells && p->dispersion == q->dispersion &&
           p->dispersion_far == q->dispersion_far && o->accuracy == u->accuracy && o->far_ratio == u->far_ratio &&
           o->max_freq_hz == u->max_freq_hz && o->wall_share == u->wall_share &&
           o->wall_current_share[0] == u->wall_current_share[0] &&
           o->wall_current_share[1] == u->wall_current_share[1] &&
           o->allow_beyond_validity == u->allow_beyond_validity;
}

int sv_em_calibration_fits(const sv_em_calibration *c, const sv_em_model *m, int nf, const double *freq_hz)
{
    if (!c || !m || !freq_hz || nf != c->nf || m->prj->nports != c->np) return 0;
    sv_em_options o = standard_options(m);
    if (!same_making(c, m->prj, &o) || memcmp(freq_hz, c->freq, sizeof(double) * (size_t)nf)) return 0;
    for (int k = 0; k < c->np; k++) {
        const sv_em_port_def *d = &m->prj->ports[k];
        int q = c->port_std[k];
        if ((q >= 0) != (d->calibrate != 0) || c->shift[k] != d->ref_shift) return 0;
        if (q < 0) continue;
        int axis, width;
        feed_of(d, &axis, &width);
        if (c->std[q].axis != axis || c->std[q].width != width) return 0;
    }
    return 1;
}

sv_status sv_em_calibration_box(const sv_em_calibration *c, int k, int i, double complex box[6])
{
    if (!c || k < 0 || k >= c->np || i < 0 || i >= c->nf)
        return sv_error(SV_ERR_ARG, "sv_em_calibration_box: port %d, frequency %d out of range", k, i);
    if (c->port_std[k] < 0) return sv_error(SV_ERR_ARG, "sv_em_calibration_box: port %d is not calibrated", k);
    memcpy(box, c->std[c->port_std[k]].box + 6 * (size_t)i, sizeof(double complex) * 6);
    return SV_OK;
}

/* ABCD of port k's box at frequency i: the discontinuity, then the feed
 * line up to the shifted reference plane. */
static void port_abcd(const sv_em_calibration *c, int k, int i, double complex e[4])
{
    e[0] = 1; e[1] = 0; e[2] = 0; e[3] = 1; /* column-major: e[row + 2·col] */
    if (c->port_std[k] < 0) return;
    const double complex *b = c->std[c->port_std[k]].box + 6 * (size_t)i;
    double complex zc = b[4], g = b[5];
    double complex lump[4] = {b[0], b[2], b[1], b[3]};
    double complex ch = ccosh(g * c->shift[k]), sh = csinh(g * c->shift[k]);
    double complex line[4] = {ch, sh / zc, zc * sh, ch};
    for (int r = 0; r < 2; r++)
        for (int q = 0; q < 2; q++) e[r + 2 * q] = lump[r] * line[2 * q] + lump[r + 2] * line[1 + 2 * q];
}

/* With every port's box [V_ext; I_ext] = E_k·[V; I], Y_raw = (C + D·Y)(A + B·Y)⁻¹
 * (A…D diagonal), so Y = (D − Y_raw·B)⁻¹·(Y_raw·A − C). */
sv_status sv_em_calibration_apply(const sv_em_calibration *c, int i, double complex *y)
{
    if (!c || !y || i < 0 || i >= c->nf) return sv_error(SV_ERR_ARG, "sv_em_calibration_apply: bad argument");
    int np = c->np;
    double complex *lhs = sv_alloc(c->ctx, sizeof(double complex) * 2 * (size_t)np * np, "calibration algebra");
    if (!lhs) return sv_last_status();
    double complex *rhs = lhs + (size_t)np * np;
    for (int q = 0; q < np; q++) {
        double complex e[4];
        port_abcd(c, q, i, e);
        for (int r = 0; r < np; r++) {
            double complex yrq = y[r + (size_t)np * q];
            lhs[r + (size_t)np * q] = (r == q ? e[3] : 0) - yrq * e[2];
            rhs[r + (size_t)np * q] = yrq * e[0] - (r == q ? e[1] : 0);
        }
    }
    sv_status s = sv_em_solve_small(np, lhs, rhs, "sv_em_calibration_apply", "D - Y_raw·B");
    if (!s) memcpy(y, rhs, sizeof(double complex) * (size_t)np * np);
    sv_free(c->ctx, lhs);
    return s;
}
