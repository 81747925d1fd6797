/* Ctrl-C (SIGINT) and SIGTERM: the first asks the library to stop (the
 * progress callbacks pass it on as a cancel, the command exits 130 having
 * written nothing); a second one ends the process at once, as usual. */
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

void tool_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART; /* the second signal: the default action */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int tool_interrupted(void) { return interrupted; }

int tool_progress_quietly(void *user, const char *phase, double fraction)
{
    (void)user;
    (void)phase;
    (void)fraction;
    return tool_interrupted();
}
