/* Helpers shared by the built-in problem files. */
#ifndef SV_ODE_BUILTIN_INTERNAL_H
#define SV_ODE_BUILTIN_INTERNAL_H

#include <stdlib.h>

#include "ode_internal.h"

/* Scalar callbacks from the batched ones: slot-major with W = 1 is a plain
 * vector, so one body serves both. */
#define SV_ODE_SCALAR_WRAPPERS(name)                                                                    \
    static int name##_f(double t, const double *y, const double *p, double *dy, void *u)               \
    {                                                                                                   \
        return name##_fb(1, &t, y, p, dy, u);                                                           \
    }                                                                                                   \
    static int name##_j(double t, const double *y, const double *p, double *jv, double *dfdt, void *u) \
    {                                                                                                   \
        return name##_jb(1, &t, y, p, jv, dfdt, u);                                                     \
    }

/* The same for the sensitivity callbacks (name_dfdp_b, name_tangent_b,
 * name_jac_dir_b → name_dfdp, name_tangent, name_jac_dir). */
#define SV_ODE_SENS_DFDP_WRAPPER(name)                                                                       \
    static int name##_dfdp(double t, const double *y, const double *p, int k, double *out, void *u)          \
    {                                                                                                        \
        return name##_dfdp_b(1, &t, y, p, k, out, u);                                                        \
    }
#define SV_ODE_SENS_TANGENT_WRAPPER(name)                                                                    \
    static int name##_tangent(double t, const double *y, const double *p, const double *v, const double *vp, \
                              double *out, void *u)                                                          \
    {                                                                                                        \
        return name##_tangent_b(1, &t, y, p, v, vp, out, u);                                                 \
    }
#define SV_ODE_SENS_JAC_DIR_WRAPPER(name)                                                                    \
    static int name##_jac_dir(double t, const double *y, const double *p, const double *v, const double *vp, \
                              double *dv, double *ddfdt, void *u)                                            \
    {                                                                                                        \
        return name##_jac_dir_b(1, &t, y, p, v, vp, dv, ddfdt, u);                                           \
    }
#define SV_ODE_SENS_WRAPPERS(name)      \
    SV_ODE_SENS_DFDP_WRAPPER(name)      \
    SV_ODE_SENS_TANGENT_WRAPPER(name)   \
    SV_ODE_SENS_JAC_DIR_WRAPPER(name)
#define SV_ODE_FILL_SENS(d, name)                 \
    do {                                          \
        (d)->dfdp = name##_dfdp;                  \
        (d)->dfdp_batch = name##_dfdp_b;          \
        (d)->tangent = name##_tangent;            \
        (d)->tangent_batch = name##_tangent_b;    \
        (d)->jac_dir = name##_jac_dir;            \
        (d)->jac_dir_batch = name##_jac_dir_b;    \
    } while (0)

/* Batched callbacks whose lane loop is compiled with W a constant for the
 * lane counts the solver uses most (4, 8 and 16: no remainder loop, no
 * overlap checks), the same body for any other W: name##_fb_lanes and
 * name##_jb_lanes are always-inline bodies taking W first. */
#define SV_ODE_BATCH_BY_LANES(name)                                                                        \
    static int name##_fb(int W, const double *t, const double *y, const double *p, double *dy, void *u)    \
    {                                                                                                      \
        switch (W) {                                                                                       \
        case 4: return name##_fb_lanes(4, t, y, p, dy, u);                                                 \
        case 8: return name##_fb_lanes(8, t, y, p, dy, u);                                                 \
        case 16: return name##_fb_lanes(16, t, y, p, dy, u);                                               \
        default: return name##_fb_lanes(W, t, y, p, dy, u);                                                \
        }                                                                                                  \
    }                                                                                                      \
    static int name##_jb(int W, const double *t, const double *y, const double *p, double *jv, double *dfdt, \
                         void *u)                                                                          \
    {                                                                                                      \
        switch (W) {                                                                                       \
        case 4: return name##_jb_lanes(4, t, y, p, jv, dfdt, u);                                           \
        case 8: return name##_jb_lanes(8, t, y, p, jv, dfdt, u);                                           \
        case 16: return name##_jb_lanes(16, t, y, p, jv, dfdt, u);                                         \
        default: return name##_jb_lanes(W, t, y, p, jv, dfdt, u);                                          \
        }                                                                                                  \
    }

/* The same for the sensitivity callbacks: name##_tangent_b and
 * name##_jac_dir_b from the always-inline bodies name##_tangent_lanes and
 * name##_jac_dir_lanes (the solver calls them once per direction and stage
 * or step, as often as f). */
#define SV_ODE_SENS_BATCH_BY_LANES(name)                                                                   \
    static int name##_tangent_b(int W, const double *t, const double *y, const double *p, const double *v, \
                                const double *vp, double *dy, void *u)                                     \
    {                                                                                                      \
        switch (W) {                                                                                       \
        case 4: return name##_tangent_lanes(4, t, y, p, v, vp, dy, u);                                     \
        case 8: return name##_tangent_lanes(8, t, y, p, v, vp, dy, u);                                     \
        case 16: return name##_tangent_lanes(16, t, y, p, v, vp, dy, u);                                   \
        default: return name##_tangent_lanes(W, t, y, p, v, vp, dy, u);                                    \
        }                                                                                                  \
    }                                                                                                      \
    static int name##_jac_dir_b(int W, const double *t, const double *y, const double *p, const double *v, \
                                const double *vp, double *jv, double *ddfdt, void *u)                      \
    {                                                                                                      \
        switch (W) {                                                                                       \
        case 4: return name##_jac_dir_lanes(4, t, y, p, v, vp, jv, ddfdt, u);                              \
        case 8: return name##_jac_dir_lanes(8, t, y, p, v, vp, jv, ddfdt, u);                              \
        case 16: return name##_jac_dir_lanes(16, t, y, p, v, vp, jv, ddfdt, u);                            \
        default: return name##_jac_dir_lanes(W, t, y, p, v, vp, jv, ddfdt, u);                             \
        }                                                                                                  \
    }

#define SV_ODE_LANES_INLINE static inline __attribute__((always_inline))

#define SV_ODE_FILL(d, name, N, NP)   \
    do {                              \
        (d)->n = (N);                 \
        (d)->nparams = (NP);          \
        (d)->f = name##_f;            \
        (d)->f_batch = name##_fb;     \
        (d)->jac = name##_j;          \
        (d)->jac_batch = name##_jb;   \
    } while (0)

/* free() every one of count pointers (built-in data is small and lives as
 * long as the problem, so it is not budgeted). */
static inline void ode_builtin_free_all(void *const *parts, int count)
{
    for (int k = 0; k < count; k++) free(parts[k]);
}

/* A built-in's record (builtin_record.c), zero-filled (NULL when out of
 * memory), and its release: the data it owns, its arrays, itself. */
sv_ode_builtin *ode_builtin_record_new(void);
void ode_builtin_record_free(sv_ode_builtin *b);
/* Copy the standard interval, state, parameters and tolerances into b. */
sv_status ode_builtin_set(sv_ode_builtin *b, const sv_ode_problem_desc *d, double t0, double t1, const double *y0,
                          const double *p, double rtol, double atol);
/* b owns data from now on: sv_ode_builtin_destroy frees it with free_data,
 * also when the creation fails later on. */
void ode_builtin_own(sv_ode_builtin *b, void *data, void (*free_data)(void *data));

/* Each returns SV_ERR_UNSUPPORTED for a name it does not know; otherwise
 * fills d (and b) and returns SV_OK or an error. */
sv_status ode_builtin_small(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);
sv_status ode_builtin_bruss(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);
sv_status ode_builtin_eb50(sv_ctx *ctx, sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);
sv_status ode_builtin_pollu(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);
sv_status ode_builtin_dae(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);
sv_status ode_builtin_ball(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg);

#endif
