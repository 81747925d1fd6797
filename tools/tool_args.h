/* Command-line values shared by the subcommands. */
#ifndef SV_TOOL_ARGS_H
#define SV_TOOL_ARGS_H

/* "2.5GHz", "800 MHz", "1e9", "1e9Hz" (Hz, kHz, MHz, GHz, THz; any case)
 * -> hertz, finite and > 0. Returns 0, or -1 if s is not such a value. */
int tool_parse_freq(const char *s, double *out);
/* The same, 0 (DC) allowed. */
int tool_parse_freq_dc(const char *s, double *out);

#endif
