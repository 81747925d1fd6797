/* The tool's interrupts (interrupt.c). */
#ifndef SV_TOOL_INTERRUPT_H
#define SV_TOOL_INTERRUPT_H

/* The exit code of a command stopped by a signal: 128 + SIGINT. */
#define TOOL_EXIT_INTERRUPTED 130

/* Catch SIGINT and SIGTERM once (main does, before any command). */
void tool_catch_interrupts(void);
/* 1 once one arrived. */
int tool_interrupted(void);
/* A progress callback that draws nothing and stops the library's work once
 * interrupted (an sv_progress_fn). */
int tool_progress_quietly(void *user, const char *phase, double fraction);

#endif
