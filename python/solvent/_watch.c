/* The progress watch of the Python package (see _watch.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "_watch.h"

struct sv_py_watch {
    pthread_mutex_t lock; /* guards fraction and phase: reports may come from a loop's thread */
    double fraction;
    char phase[96];
    atomic_int stop;
};

static int watch_report(void *user, const char *phase, double fraction)
{
    sv_py_watch *w = user;
    pthread_mutex_lock(&w->lock);
    w->fraction = fraction;
    strncpy(w->phase, phase ? phase : "", sizeof w->phase - 1);
    pthread_mutex_unlock(&w->lock);
    return atomic_load(&w->stop);
}

sv_py_watch *sv_py_watch_create(void)
{
    sv_py_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_mutex_init(&w->lock, NULL);
    w->fraction = -1;
    return w;
}

void sv_py_watch_destroy(sv_py_watch *w)
{
    if (!w) return;
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void sv_py_watch_attach(sv_ctx *ctx, sv_py_watch *w) { sv_ctx_set_progress(ctx, watch_report, w); }

void sv_py_watch_detach(sv_ctx *ctx) { sv_ctx_set_progress(ctx, NULL, NULL); }

void sv_py_watch_stop(sv_py_watch *w) { atomic_store(&w->stop, 1); }

double sv_py_watch_read(sv_py_watch *w, char *phase, size_t cap)
{
    pthread_mutex_lock(&w->lock);
    double f = w->fraction;
    if (cap) {
        strncpy(phase, w->phase, cap - 1);
        phase[cap - 1] = '\0';
    }
    pthread_mutex_unlock(&w->lock);
    return f;
}
