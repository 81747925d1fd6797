/* Solvent ODE ensembles: Rodas5P (Rosenbrock, order 5, stiff) and Tsit5
 * (explicit Runge–Kutta, order 5) over many trajectories of one system.
 *
 * Workflow:
 *   sv_ode_problem_desc d = {0};  d.n = ...; d.f = ...;   describe the system
 *   sv_ode_problem_create(ctx, &d, &prob);                 validate, analyse the pattern
 *   sv_ode_options o; sv_ode_options_default(&o);          tolerances, method, LU precision
 *   sv_ode_ensemble e = {...};                             y0, parameters, save times, outputs
 *   sv_ode_solve(ctx, prob, &o, &e);                       run every trajectory
 *
 * Trajectories run W at a time in SIMD lanes (each lane with its own step
 * size; a lane that finishes takes the next trajectory at once) and lanes
 * run across cores with OpenMP. A trajectory's result does not depend on
 * which lane, batch or thread ran it: every arithmetic operation of a lane
 * involves that lane's data only.
 *
 * Slot-major ("batched") arrays hold W lanes side by side: entry i of lane w
 * is at [i·W + w]. A batched callback's loop over w then vectorises.
 *
 * Rodas5P is NOT a W-method: it keeps order 5 only with the exact Jacobian.
 * The analytic, complex-step and J·v sources are exact (to rounding);
 * finite differences are an inexact fallback that can cost the method its
 * order (many more steps, lower accuracy) — see docs/ode.md. */
#ifndef SOLVENT_ODE_H
#define SOLVENT_ODE_H

#include "solvent/core.h"

/* The complex type of the complex-step callback, spelled without
 * <complex.h> so that including Solvent does not define the macros `I` and
 * `complex` in the user's code (C: double _Complex is the same type as
 * double complex; C++: GCC and Clang accept _Complex as an extension with
 * the layout of std::complex<double>). */
#define SV_ODE_COMPLEX double _Complex

#ifdef __cplusplus
extern "C" {
#endif

/* ---- callbacks ------------------------------------------------------------
 * Every callback returns 0 on success. A negative return is unrecoverable:
 * the trajectory ends with SV_ODE_F_FAILED (the solve goes on with the
 * others). A positive return from f (or a sensitivity callback) at a stage
 * of a step refuses that trial state: the step is rejected and retried 5×
 * smaller (counted in sv_ode_stats.nrefused, at most max_refusals times in
 * a row), as CVODE does; at an accepted state (the start of a step, y0)
 * and from the Jacobian callbacks a positive return is unrecoverable too.
 * `p` points to the trajectory's parameters (nparams values; NULL when
 * nparams = 0). */

/* dy/dt = f(t, y, p) for one trajectory. Required. */
typedef int (*sv_ode_rhs_fn)(double t, const double *y, const double *p, double *dydt, void *user);
/* The same over W lanes, slot-major: t[w], y[i·W+w], p[k·W+w], dydt[i·W+w].
 * Optional; when given it is used for every stage evaluation. */
typedef int (*sv_ode_rhs_batch_fn)(int W, const double *t, const double *y, const double *p, double *dydt,
                                   void *user);
/* Analytic Jacobian: values[e] = ∂f_i/∂y_j for pattern entry e = (i, j) in
 * CSR order (dense problems: row-major, e = i·n + j). dfdt (n values) is
 * non-NULL only for non-autonomous problems and then receives ∂f/∂t. */
typedef int (*sv_ode_jac_fn)(double t, const double *y, const double *p, double *values, double *dfdt, void *user);
/* The same over W lanes, slot-major (values[e·W+w], dfdt[i·W+w]). Optional. */
typedef int (*sv_ode_jac_batch_fn)(int W, const double *t, const double *y, const double *p, double *values,
                                   double *dfdt, void *user);
/* Complex version of f for complex-step differentiation (write f once with
 * <tgmath.h> and instantiate it for double and double complex: docs/ode.md). */
typedef int (*sv_ode_rhs_complex_fn)(SV_ODE_COMPLEX t, const SV_ODE_COMPLEX *y, const double *p,
                                     SV_ODE_COMPLEX *dydt, void *user);
/* Directional derivative: jv = (∂f/∂t)·vt + (∂f/∂y)·v. */
typedef int (*sv_ode_jvp_fn)(double t, const double *y, const double *p, double vt, const double *v, double *jv,
                             void *user);

/* ---- sensitivity callbacks (forward sensitivities, docs/ode.md) ----------
 * S = ∂y/∂θ obeys S' = (∂f/∂y)·S + ∂f/∂θ. The first four give the
 * right-hand side; Rodas5P also needs, exactly, how the Jacobian changes
 * along a sensitivity (jac_dir, or complex step on tangent_complex). */
/* ∂f/∂p_k at (t, y): n values. */
typedef int (*sv_ode_dfdp_fn)(double t, const double *y, const double *p, int k, double *dfdp_k, void *user);
/* f with complex parameters as well, for complex-step ∂f/∂p (one body
 * with <tgmath.h>, as for f_complex). */
typedef int (*sv_ode_rhs_complex_p_fn)(SV_ODE_COMPLEX t, const SV_ODE_COMPLEX *y, const SV_ODE_COMPLEX *p,
                                       SV_ODE_COMPLEX *dydt, void *user);
/* Directional derivative in (y, p): out = (∂f/∂y)·v + (∂f/∂p)·vp (vp:
 * nparams values, NULL = 0): CVODES's sensitivity right-hand side. */
typedef int (*sv_ode_tangent_fn)(double t, const double *y, const double *p, const double *v, const double *vp,
                                 double *out, void *user);
/* The same at complex t and y (p, v, vp real): write it once with
 * <tgmath.h>; complex step on it gives the second derivatives exactly. */
typedef int (*sv_ode_tangent_complex_fn)(SV_ODE_COMPLEX t, const SV_ODE_COMPLEX *y, const double *p,
                                         const double *v, const double *vp, SV_ODE_COMPLEX *out, void *user);
/* The Jacobian's derivative along (v, vp), pattern order (as jac writes):
 * dvals[e] = Σ_l ∂J_e/∂y_l·v_l + Σ_k ∂J_e/∂p_k·vp_k (vp NULL = 0); ddfdt
 * (n values, non-NULL only for non-autonomous problems) the same for ∂f/∂t. */
typedef int (*sv_ode_jac_dir_fn)(double t, const double *y, const double *p, const double *v, const double *vp,
                                 double *dvals, double *ddfdt, void *user);

/* The same three over W lanes, slot-major (y[i·W+w], p[k·W+w], v[i·W+w],
 * vp[k·W+w], out[i·W+w], dvals[e·W+w]; vp NULL = 0). Optional: given, they
 * are used for every lane at once, as f_batch is. */
typedef int (*sv_ode_dfdp_batch_fn)(int W, const double *t, const double *y, const double *p, int k, double *dfdp_k,
                                    void *user);
typedef int (*sv_ode_tangent_batch_fn)(int W, const double *t, const double *y, const double *p, const double *v,
                                       const double *vp, double *out, void *user);
typedef int (*sv_ode_jac_dir_batch_fn)(int W, const double *t, const double *y, const double *p, const double *v,
                                       const double *vp, double *dvals, double *ddfdt, void *user);

typedef enum sv_ode_sens_source {
    SV_ODE_SENS_ANALYTIC = 0,     /* dfdp; J·S from the Jacobian source at every stage          */
    SV_ODE_SENS_COMPLEX_STEP = 1, /* f_complex_p: one complex f per direction and stage, exact  */
    SV_ODE_SENS_TANGENT = 2,      /* tangent: one call per direction and stage, exact           */
    SV_ODE_SENS_FD = 3            /* differences of f along (S, e_k): INEXACT                   */
} sv_ode_sens_source;

typedef enum sv_ode_jac_source {
    SV_ODE_JAC_ANALYTIC = 0,     /* jac (or jac_batch)                                     */
    SV_ODE_JAC_COMPLEX_STEP = 1, /* f_complex, one evaluation per colour, exact           */
    SV_ODE_JAC_JVP = 2,          /* jvp, one call per colour, exact                        */
    SV_ODE_JAC_FD = 3            /* finite differences of f: INEXACT, Rodas5P loses order */
} sv_ode_jac_source;

/* ---- the problem ------------------------------------------------------- */
typedef struct sv_ode_problem_desc {
    const char *name;  /* for messages; may be NULL */
    int n;             /* state dimension, 1 .. INT_MAX/2 − 1 (dense: n² ≤ INT_MAX, n ≤ 46340) */
    int nparams;       /* parameters per trajectory, >= 0 */
    sv_ode_rhs_fn f;
    sv_ode_rhs_batch_fn f_batch;
    /* Sparsity pattern of ∂f/∂y in CSR (rowptr: n+1, colind: rowptr[n]
     * entries, sorted, no duplicates; rowptr[n] + n ≤ INT_MAX). NULL rowptr
     * = dense. The diagonal need not be listed (M = I/(hγ) − J has it anyway). */
    const int *rowptr;
    const int *colind;
    sv_ode_jac_source jac_source;
    sv_ode_jac_fn jac;
    sv_ode_jac_batch_fn jac_batch;
    sv_ode_rhs_complex_fn f_complex;
    sv_ode_jvp_fn jvp;
    int nonautonomous; /* 1: f depends on t explicitly (∂f/∂t from the same source) */
    void *user;        /* passed to every callback */
    /* Forward sensitivities (optional): the directions θ are the parameters
     * p[sens_params[k]] (k < nsens_params), then the initial values
     * y0[sens_y0[k]] (k < nsens_y0); nsens = their sum. Computed when an
     * ensemble asks for them (sv_ode_ensemble.sens_out). */
    int nsens_params;
    const int *sens_params;
    int nsens_y0;
    const int *sens_y0;
    sv_ode_sens_source sens_source;
    sv_ode_dfdp_fn dfdp;                     /* analytic (or dfdp_batch) */
    sv_ode_rhs_complex_p_fn f_complex_p;     /* complex step */
    sv_ode_tangent_fn tangent;               /* tangent (or tangent_batch) */
    /* Rodas5P only, one of: jac_dir (or jac_dir_batch), used when given,
     * or tangent_complex */
    sv_ode_jac_dir_fn jac_dir;
    sv_ode_tangent_complex_fn tangent_complex;
    sv_ode_dfdp_batch_fn dfdp_batch;
    sv_ode_tangent_batch_fn tangent_batch;
    sv_ode_jac_dir_batch_fn jac_dir_batch;
    /* Constant mass matrix M of M·y' = f(t, y, p) (docs/how-to/ode-dae.md).
     * mass NULL: the identity (an ODE). Otherwise its values: in the CSR
     * pattern mass_rowptr / mass_colind (n + 1 and mass_rowptr[n] entries,
     * columns sorted, no duplicates), or, with both NULL, dense row-major
     * (n² values). M may be singular (an index-1 DAE): in semi-explicit
     * form (its zero rows the algebraic equations, as many zero columns
     * the algebraic variables, the rest non-singular) at any n, in any
     * other form (e.g. circuits' (−C, C) rows) up to n = 1024, where its
     * null spaces are found by SVD. A DAE needs Rodas5P; Tsit5 takes a
     * non-singular M only. Forward sensitivities are refused with any M. */
    const double *mass;
    const int *mass_rowptr;
    const int *mass_colind;
    /* Linear invariants (optional; docs/explanation/simd-lanes.md,
     * "Conserved combinations of small components"): ninvariants rows c_k
     * of n values, row-major (invariants[k·n + i]), with c_k·f(t, y, p) = 0
     * for every t, y and p, so that c_k·y stays at its initial value. After
     * every accepted step (both methods, every path) the state is moved
     * back onto c_k·y = c_k·y0 by the least change weighted by the
     * tolerances, y ← y − D Cᵀ (C D Cᵀ)⁻¹ (C y − C y0), D = diag(sc_i²),
     * sc_i = atol_i + rtol·|y_i|; every saved output (at a step's end or
     * from the dense output between steps) is projected the same way, and
     * an event handler that changes y sets new values c_k·y. This keeps
     * rounding from accumulating along the combinations, which nothing in
     * the equations damps. Declared on the problem, not the options,
     * because they are a property of f, like the pattern and the mass
     * matrix. The rows must be finite, not all zero and linearly
     * independent (sv_ode_problem_create names the row that is not);
     * invariants are refused with a mass matrix or sensitivity directions.
     * ninvariants = 0 (the default): none, and nothing changes. */
    int ninvariants;
    const double *invariants;
} sv_ode_problem_desc;

typedef struct sv_ode_problem sv_ode_problem;

sv_status sv_ode_problem_create(sv_ctx *ctx, const sv_ode_problem_desc *desc, sv_ode_problem **out);
void sv_ode_problem_destroy(sv_ode_problem *prob);
int sv_ode_problem_n(const sv_ode_problem *prob);
int sv_ode_problem_nparams(const sv_ode_problem *prob);
/* Structural nonzeros of ∂f/∂y as given (n² when dense) and the number of
 * colours used to recover J from directional derivatives. */
int sv_ode_problem_nnz(const sv_ode_problem *prob);
int sv_ode_problem_ncolors(const sv_ode_problem *prob);
/* Sensitivity directions (nsens_params + nsens_y0). */
int sv_ode_problem_nsens(const sv_ode_problem *prob);
/* Algebraic constraints: n − rank M (M's zero rows in semi-explicit
 * form; 0 without a mass matrix). */
int sv_ode_problem_nalg(const sv_ode_problem *prob);
/* Declared linear invariants (ninvariants; 0 without). */
int sv_ode_problem_ninvariants(const sv_ode_problem *prob);
/* A new problem: prob's description (callbacks, pattern, sources) with
 * these sensitivity directions, e.g. for a built-in problem. */
sv_status sv_ode_problem_with_sens(sv_ctx *ctx, const sv_ode_problem *prob, int nsens_params, const int *sens_params,
                                   int nsens_y0, const int *sens_y0, sv_ode_problem **out);
/* A new problem: prob's description with these linear invariants in place
 * of its own (ninvariants rows of n values, as sv_ode_problem_desc's). */
sv_status sv_ode_problem_with_invariants(sv_ctx *ctx, const sv_ode_problem *prob, int ninvariants,
                                         const double *invariants, sv_ode_problem **out);

/* ---- options ----------------------------------------------------------- */
typedef enum sv_ode_method { SV_ODE_RODAS5P = 0, SV_ODE_TSIT5 = 1 } sv_ode_method;
typedef enum sv_ode_lu_precision {
    SV_ODE_LU_DOUBLE = 0, /* factor M in double                                     */
    SV_ODE_LU_SINGLE = 1  /* factor in single, refine each stage solve to double    */
} sv_ode_lu_precision;

/* sv_ode_options_default fills in the defaults below. In a zero-filled
 * struct every field means its default except the tolerances: rtol and
 * atol are values (0 is pure absolute or pure relative control), so a
 * zero-filled struct sets no tolerance and sv_ode_solve refuses it. */
typedef enum sv_ode_check {
    SV_ODE_CHECK_ON = 0, /* the default */
    SV_ODE_CHECK_OFF = 1
} sv_ode_check;

typedef enum sv_ode_sens_errcon {
    SV_ODE_SENS_ERR_FULL = 0, /* the default: state and sensitivities */
    SV_ODE_SENS_ERR_STATE = 1 /* the state alone (the state's steps as without sensitivities) */
} sv_ode_sens_errcon;

/* The tolerances' bounds (sv_ode_solve refuses values past them): rtol at
 * most SV_ODE_RTOL_MAX (a larger relative error allowed per step leaves no
 * digit of the solution controlled; at least 4 machine epsilons with step
 * control), and every absolute tolerance at most SV_ODE_ATOL_MAX_SCALE
 * times the ensemble's state scale, max(1, the largest |y0| of any
 * trajectory): an error allowed as large as the state itself controls
 * nothing. */
#define SV_ODE_RTOL_MAX 0.1
#define SV_ODE_ATOL_MAX_SCALE 1.0

/* Initial values of a DAE (M with zero rows): the algebraic equations
 * 0 = f_i(t0, y0, p) must hold at t0. */
typedef enum sv_ode_init {
    /* the default: checked; sv_ode_solve fails (SV_ERR_ARG) naming the
     * trajectory, the equation (or constraint), its residual and the
     * variable's change when one Newton correction of the algebraic
     * variables exceeds their tolerance (atol_i + rtol·|y_i|) */
    SV_ODE_INIT_CHECK = 0,
    /* computed: Newton's method on the algebraic variables from the given
     * values, the differential ones kept (IDA's IDACalcIC, IDA_YA_YDP_INIT;
     * for a non-semi-explicit M, y moves in M's null space, so M·y0 is
     * kept); the values used are in sv_ode_ensemble.y0_out */
    SV_ODE_INIT_COMPUTE = 1
} sv_ode_init;

/* ---- events ------------------------------------------------------------
 * Event functions g(t, y, p) → m values per trajectory, watched at every
 * accepted step of every lane: function j fires where g_j changes sign in
 * its direction, located on the method's dense output by the Illinois
 * bracketing root finder, and then acts (docs/how-to/ode-events.md).
 * A crossing is seen from the signs at a step's two ends: at most one
 * action per step and function (two crossings inside one step cancel). */
typedef int (*sv_ode_event_fn)(double t, const double *y, const double *p, double *g, void *user);
/* The same over W lanes, slot-major: t[w], y[i·W+w], p[k·W+w], g[j·W+w]
 * (every lane, as f_batch). Optional; when given it tests each accepted
 * step of the fused lanes at once, and g (required) serves the rest. A
 * non-zero return hands the lanes to g one at a time. */
typedef int (*sv_ode_event_batch_fn)(int W, const double *t, const double *y, const double *p, double *g,
                                     void *user);
/* Called at an event of a function whose action is SV_ODE_EVENT_HANDLE,
 * with the trajectory's state and parameters at the event (y: n values,
 * p: nparams values, both writable, which: the function): it may change
 * them; the trajectory then goes on from (t, y, p) with a new step (f and
 * the Jacobian evaluated afresh). Returns SV_ODE_HANDLER_CONTINUE,
 * SV_ODE_HANDLER_STOP (the trajectory ends there, as a stop event), or a
 * negative value (the trajectory ends with SV_ODE_F_FAILED). */
typedef int (*sv_ode_event_handler_fn)(double t, double *y, double *p, int which, void *user);
enum { SV_ODE_HANDLER_CONTINUE = 0, SV_ODE_HANDLER_STOP = 1 };

typedef enum sv_ode_event_direction {
    SV_ODE_EVENT_EITHER = 0,  /* the default: any sign change */
    SV_ODE_EVENT_RISING = 1,  /* g from negative to zero or positive */
    SV_ODE_EVENT_FALLING = 2  /* g from positive to zero or negative */
} sv_ode_event_direction;

typedef enum sv_ode_event_action {
    SV_ODE_EVENT_RECORD = 0,  /* the default: time, function and state recorded; the step goes on */
    SV_ODE_EVENT_STOP = 1,    /* recorded, and the trajectory ends there (status SV_ODE_STOPPED) */
    SV_ODE_EVENT_HANDLE = 2   /* recorded, then the handler is called and the step restarts there */
} sv_ode_event_action;

typedef struct sv_ode_events {
    int m;                                    /* event functions, >= 1 */
    sv_ode_event_fn g;                        /* required; its user is the problem's */
    const sv_ode_event_direction *direction;  /* m values, or NULL: every one EITHER */
    const sv_ode_event_action *action;        /* m values, or NULL: every one RECORD */
    sv_ode_event_handler_fn handler;          /* required when any action is HANDLE */
    /* The event time's tolerance: the root finder stops when its bracket is
     * at most this wide. 0 = default: the bracket shrunk to adjacent
     * doubles (the root of the dense output to rounding). */
    double tol;
    sv_ode_event_batch_fn g_batch;            /* optional: g over W lanes (it must compute g's values) */
} sv_ode_events;

typedef struct sv_ode_options {
    sv_ode_method method;     /* default (0) Rodas5P */
    double rtol;              /* default 1e-6; 0 is a value; at most SV_ODE_RTOL_MAX */
    double atol;              /* default 1e-8 (used when atol_vec is NULL); 0 is a value; bounded as above */
    const double *atol_vec;   /* per-component atol (n values) or NULL */
    const double *weights;    /* per-component error weights (n values, >= 0) or NULL = 1 */
    double first_step;        /* 0: Hairer–Wanner estimate per trajectory */
    double max_step;          /* 0: t_end − t0 */
    long max_steps;           /* accepted + rejected per trajectory; 0 = default 1e6 */
    double fixed_step;        /* > 0: no step control, constant h (convergence tests) */
    /* PI controller (OrdinaryDiffEq defaults for order 5): on acceptance
     * h_new = h / q, q = E^β1 · E_old^−β2 · E_older^β3 / safety (clamped);
     * β3 ≠ 0 makes it a PID controller (Söderlind's digital filters).
     * beta1 = 0 means the default gains (beta2 and beta3 are then ignored):
     * set beta1 > 0 to choose all three (beta2 = 0 is an I controller). */
    double beta1, beta2;      /* 0.14, 0.08 */
    double beta3;             /* 0: PI */
    double safety;            /* 0 = default 0.9 */
    double qmin, qmax;        /* 0 = defaults 0.2, 10: the step shrinks at most 5×, grows at most 10× */
    double qsteady_max;       /* 0 = the method's 1.2 (Rodas5P) or 1.0 (Tsit5): keep h when h/h_new in [1, this] */
    double min_step_rel;      /* step too small when h < min_step_rel·|t|; 0 = default 1e-14, < 0: no relative limit */
    sv_ode_lu_precision lu;   /* default (0) double */
    /* W: 1, 2, 4, 8 or 16; 0 = the solver's choice: one vector register
     * of doubles (8 with AVX-512, else 4), two for tiny dense systems
     * (n ≤ 8, double LU, no sensitivities: the fused step). More than 8
     * only there (16 asked for elsewhere runs 8). */
    int lanes;
    /* Times where f may be discontinuous: steps end exactly there, and a
     * step ending at a stop sees f's left limit (t just below the stop). */
    const double *tstops;
    int ntstops;
    /* Consecutive refused step attempts (a callback returned > 0) before
     * the trajectory ends with SV_ODE_F_FAILED; 0 = default 30. */
    int max_refusals;
    /* At the first Jacobian of a solve, probe ∂f/∂y column by column and
     * fail (SV_ERR_PATTERN, naming the missing (row, column) pairs) when an
     * entry outside the pattern is non-zero. Default (0) on. */
    sv_ode_check check_pattern;
    /* Sensitivities (when computed): whether they enter the error norm
     * (default (0) yes, as CVODES and modax do: the step is accepted when
     * the state and every direction pass), and the scale |θ_j| of each
     * direction (nsens values, NULL = |p_k| for parameters, 1 when p_k = 0
     * or for initial values): direction j's absolute tolerance is atol/scale_j,
     * so that θ_j·S_j is held like y. */
    sv_ode_sens_errcon sens_errcon;
    const double *sens_scale;
    /* Straight-line LU kernels compiled at run time for the problem's
     * pattern (sparse.h's sv_sparse_lu_compile): a directory for the
     * compiled objects (reused across runs) and the C compiler's absolute
     * path (NULL: /usr/bin/cc). NULL kernel_cache_dir (default): the
     * table-driven kernels. The same results either way; when compiling
     * fails the table-driven kernels stay and the context's log says why. */
    const char *kernel_cache_dir;
    const char *kernel_cc;
    /* A DAE's initial values: checked (default) or computed (sv_ode_init). */
    sv_ode_init init;
    /* Event functions and their actions, or NULL: none (the outputs go to
     * sv_ode_ensemble's event_* arrays). Not with forward sensitivities. */
    const sv_ode_events *events;
} sv_ode_options;

void sv_ode_options_default(sv_ode_options *opt);

/* ---- an ensemble solve ------------------------------------------------- */
typedef enum sv_ode_traj_status {
    SV_ODE_SUCCESS = 0,
    SV_ODE_MAX_STEPS = 1,      /* max_steps reached before the last save time */
    SV_ODE_STEP_TOO_SMALL = 2, /* the controller asked for h below min_step_rel·|t|   */
    SV_ODE_NONFINITE = 3,      /* y, f or the error norm stayed non-finite             */
    SV_ODE_F_FAILED = 4,       /* a callback failed (< 0), or refused too often (> 0)   */
    SV_ODE_NOT_RUN = 5,        /* the solve stopped (cancelled, error) before this one  */
    SV_ODE_STOPPED = 6         /* a stop event (or a handler) ended it at stats.t_reached */
} sv_ode_traj_status;

const char *sv_ode_traj_status_string(sv_ode_traj_status s);

typedef struct sv_ode_stats {
    long accepted, rejected;   /* steps */
    long nf;                   /* f evaluations (one lane = one evaluation) */
    long njac;                 /* Jacobian evaluations */
    long nfactor;              /* LU factorisations */
    long nsolve;               /* stage solves (refinement sweeps not counted) */
    long nrefine;              /* refinement sweeps (single-precision LU) */
    long nrefused;             /* step attempts (and start-up probes) a callback refused (returned > 0) */
    long nexact;               /* factorisations in double-double: M numerically singular in double */
    long nsens_rhs;            /* sensitivity right-hand sides (one per direction and stage) */
    long nsens_jac;            /* Jacobian derivatives along a sensitivity (one per direction and Jacobian) */
    double t_reached;          /* last time reached */
} sv_ode_stats;

typedef struct sv_ode_ensemble {
    int ntraj;
    double t0;
    int nsave;                 /* >= 1; tsave increasing, tsave[0] >= t0; integrates to tsave[nsave-1] */
    const double *tsave;
    const double *y0;          /* ntraj·n values, or n when y0_shared */
    int y0_shared;
    const double *params;      /* ntraj·nparams, or nparams when params_shared; NULL when nparams = 0 */
    int params_shared;
    double *out;               /* ntraj·nsave·n: out[(traj·nsave + s)·n + i]; save times a
                                  trajectory did not reach (it failed or never ran) hold NaN */
    /* Sensitivities ∂y/∂θ_j at the save times, ntraj·nsave·n·nsens:
     * sens_out[((traj·nsave + s)·n + i)·nsens + j], or NULL: none computed;
     * NaN where out is NaN. */
    double *sens_out;
    /* Initial sensitivities ∂y0/∂θ_j (ntraj·n·nsens in the same order, or
     * n·nsens when sens0_shared), or NULL: 0 for parameters, e_i for y0_i. */
    const double *sens0;
    int sens0_shared;
    sv_ode_traj_status *status;/* ntraj (may be NULL) */
    sv_ode_stats *stats;       /* ntraj (may be NULL) */
    /* ntraj·n: each trajectory's initial values as used (a DAE's
     * consistent ones when options.init computes them), or NULL */
    double *y0_out;
    /* Per-trajectory spans (each NULL: the shared t0 and tsave above):
     * t0_traj[tr] is trajectory tr's start, tsave_traj[tr·nsave + s] its
     * save times (increasing, >= its t0; it integrates to the last). */
    const double *t0_traj;
    const double *tsave_traj;
    /* Events (options.events): per trajectory the first event_capacity
     * events in time order — when (event_t), which function fired
     * (event_which) and, if event_y is not NULL, the state there (n values,
     * before a handler changes it) at [tr·event_capacity + e] (event_y: times
     * n) — and in nevents[tr] how many occurred: more than event_capacity
     * means the rest were not stored (the trajectory ran on regardless).
     * nevents is required with events, the arrays when event_capacity > 0. */
    int event_capacity;
    double *event_t;
    int *event_which;
    double *event_y;
    int *nevents;
} sv_ode_ensemble;

/* Run every trajectory. Returns SV_OK when the solve ran (even if some
 * trajectories failed: read status[]), SV_ERR_ARG for bad input,
 * SV_ERR_BUDGET/NOMEM for memory, SV_ERR_CANCELLED if the progress callback
 * asked to stop. Progress is reported as phase "ode". */
sv_status sv_ode_solve(sv_ctx *ctx, const sv_ode_problem *prob, const sv_ode_options *opt, sv_ode_ensemble *ens);

/* The weighted least-squares loss of a solved ensemble and its gradient,
 * per trajectory: loss[tr] = Σ_{s,i} ((y − data)/σ_i)² over the entries where
 * data (ntraj·nsave·n, the layout of out) is not NaN, and
 * grad[tr·nsens + j] = ∂loss[tr]/∂θ_j = Σ 2 (y − data)/σ_i² · S_j, from
 * ens->sens_out (grad may be NULL; it needs sens_out otherwise). sigma: n
 * values, or NULL = 1. Trajectories that did not succeed get NaN. */
sv_status sv_ode_loss_gradient(const sv_ode_problem *prob, const sv_ode_ensemble *ens, const double *data,
                               const double *sigma, double *loss, double *grad);

/* ---- built-in problems --------------------------------------------------
 * Definitions in docs/ode.md (Bari test set, SciMLBenchmarks' 2D
 * Brusselator, the DISCO-EB-like Einstein–Boltzmann system, Lorenz). */
typedef struct sv_ode_builtin {
    const char *name;
    sv_ode_problem *prob;
    double t0, t1;             /* the standard interval */
    double *y0;                /* n values: the standard initial state */
    double *params;            /* nparams values: the standard parameters */
    double *tstops;            /* discontinuities (may be NULL) */
    int ntstops;
    double rtol, atol;         /* suggested tolerances */
    double *atol_vec;          /* suggested per-component atol, or NULL */
    void *data;                /* owned problem data */
    const sv_ode_events *events; /* the problem's events (options.events), or NULL */
    double max_step;           /* the largest step its events need (options.max_step), or 0 */
} sv_ode_builtin;

/* name: "rober", "hires", "orego", "vdpol", "bruss2d" (arg = grid N, default 8),
 * "eb50" (arg = k in Mpc⁻¹ stored as its parameter, default 0.01), "lorenz",
 * "pollu" (Bari test set, 25 rate constants as parameters), the DAEs
 * "akzo" (Bari test set's Chemical Akzo Nobel, index 1, its nine constants
 * as parameters), "rober_dae" (ROBER with y3 from the conservation law)
 * and "transamp" (Bari test set's transistor amplifier, a non-diagonal
 * singular M; docs/how-to/ode-dae.md), and "ball" (a bouncing ball: an
 * event with a handler, in b->events; docs/how-to/ode-events.md); arg = 0 means
 * the default, and the problems without an argument refuse any other.
 * jac selects the Jacobian source (complex-step where the problem
 * provides a complex f: rober, hires, vdpol, lorenz, bruss2d). */
sv_status sv_ode_builtin_create(sv_ctx *ctx, const char *name, double arg, sv_ode_jac_source jac,
                                sv_ode_builtin **out);
void sv_ode_builtin_destroy(sv_ode_builtin *b);
/* EB-50's standard initial state at τ0 = 0.1 for wavenumber k (50 values):
 * an ensemble over k gives each trajectory its own y0 and parameter k. */
void sv_ode_eb50_initial(double k, double *y0);
/* Names of the built-in problems, NULL-terminated. */
const char *const *sv_ode_builtin_names(void);

#ifdef __cplusplus
}
#endif
#endif
