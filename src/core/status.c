/* Status codes and the per-thread last-error message. */
#include "solvent/core.h"

#include <stdarg.h>
#include <stdio.h>

/* Thread-local, so two threads using two handles never see each other's
 * errors. This is the only mutable state outside handles. */
static _Thread_local char last_message[1024];
static _Thread_local sv_status last_status = SV_OK;

const char *sv_status_string(sv_status status)
{
    switch (status) {
    case SV_OK: return "success";
    case SV_ERR_ARG: return "invalid argument";
    case SV_ERR_NOMEM: return "out of memory";
    case SV_ERR_BUDGET: return "memory budget exceeded";
    case SV_ERR_NONFINITE: return "non-finite value";
    case SV_ERR_SINGULAR: return "singular matrix";
    case SV_ERR_NOCONV: return "no convergence";
    case SV_ERR_IO: return "input/output error";
    case SV_ERR_PARSE: return "malformed input";
    case SV_ERR_PATTERN: return "invalid sparsity pattern";
    case SV_ERR_CANCELLED: return "cancelled";
    case SV_ERR_UNSUPPORTED: return "not supported";
    case SV_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *sv_last_error(void) { return last_message; }

sv_status sv_last_status(void) { return last_status; }

void sv_clear_error(void)
{
    last_message[0] = '\0';
    last_status = SV_OK;
}

/* The message is formatted apart first (an argument may be the last
 * message itself), then escaped: text from files and command lines inside
 * it never reaches a terminal raw. */
sv_status sv_error(sv_status status, const char *fmt, ...)
{
    char raw[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    sv_escape_text(raw, last_message, sizeof last_message);
    last_status = status;
    return status;
}
