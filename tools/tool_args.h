/* Command-line values shared by the subcommands. */
#ifndef SV_TOOL_ARGS_H
#define SV_TOOL_ARGS_H

#include "solvent/em.h"

/* A decimal number, the whole of s: [+-]digits[.digits][e[+-]digits]; no
 * hexadecimal, inf or nan, no blanks; subnormal values kept, a value that
 * overflows or underflows to zero refused. Returns 0, or -1. */
int tool_parse_number(const char *s, double *out);
/* The same at the start of s, *rest pointing past it (to a unit). */
int tool_parse_number_prefix(const char *s, double *out, const char **rest);
/* What they accept, for messages. */
#define TOOL_NUMBER_EXPECTED "a decimal number (e.g. 0.5, 1e-3; no hexadecimal, inf or nan)"

/* "2.5GHz", "800 MHz", "1e9", "1e9Hz" (Hz, kHz, MHz, GHz, THz; any case)
 * -> hertz, > 0 and at most SV_EM_MAX_FREQ_HZ after the unit is applied.
 * Returns 0, or -1 if s is not such a value. */
int tool_parse_freq(const char *s, double *out);
/* What tool_parse_freq accepts, for messages. */
#define TOOL_FREQ_EXPECTED "a decimal frequency > 0 and <= 1e15 Hz (e.g. 1e9, 2.5GHz, 800MHz)"
/* The same, 0 (DC) allowed. */
int tool_parse_freq_dc(const char *s, double *out);
#define TOOL_FREQ_DC_EXPECTED "a decimal frequency >= 0 and <= 1e15 Hz (e.g. 0, 1e9, 2.5GHz, 800MHz)"

/* The single-valued options a command has seen so far: one given twice
 * is refused rather than the last silently winning. */
typedef struct tool_seen {
    const char *opt[32];
    int n;
} tool_seen;
/* 0 the first time `opt` (its canonical spelling) is seen, else 2 after a
 * message naming it. */
int tool_seen_once(tool_seen *seen, const char *cmd, const char *opt);

/* "1500000000", "1.5G", "800M", "2GiB" (K, M, G, T: powers of 1024) ->
 * bytes, at least 1. Returns 0, or -1 if s is not such a value. */
int tool_parse_bytes(const char *s, size_t *out);
/* What tool_parse_bytes accepts, for messages. */
#define TOOL_BYTES_EXPECTED "a number of bytes >= 1, optionally with K, M, G or T"
/* The limit a command checks its memory estimate against: `option`
 * (--memory-limit; 0: the available memory), never past the room left under
 * ulimit -v (start.c); *which (unless NULL) names it for messages:
 * "--memory-limit", "available memory" or tool_ulimit_room. */
extern const char tool_ulimit_room[];
size_t tool_command_memory_limit(size_t option, const char **which);

/* An output may not be one of the inputs: 0 when `out` (named by option
 * `opt`) is not the same file as any of the n regular files in `inputs`
 * (device and inode: also through symlinks and hard links), else 2 after
 * a message on stderr. */
int tool_check_not_input(const char *cmd, const char *opt, const char *out, const char *const *inputs, int n);

/* The one rule for Touchstone outputs (`sweep -o`, `solve -o`): the name
 * ends in .sNp for the model's N ports (any case), unless it is a device
 * or FIFO that streams the file. Returns 0, or 2 after a message. */
int tool_check_touchstone_name(const char *cmd, const char *path, int ports);

/* A log callback for sv_ctx_set_log (user: the command's name): the
 * library's warnings (a project's switches that do nothing, ...) on stderr
 * as "solvent CMD: warning: ...", the rest dropped. */
void tool_log_warnings(void *cmd, sv_log_level level, const char *message);

/* A library call on `project` failed: its message on stderr, prefixed with
 * the project's name unless the message names it already (the library's
 * message says why and what to do: no tool adds its own diagnosis). */
void tool_say_model_failure(const char *cmd, const char *project);

/* "solvent CMD: " and the formatted message on stderr, escaped as the
 * library's messages are (sv_escape_text): values echoed from the command
 * line or a file never reach the terminal raw. */
void tool_say(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
