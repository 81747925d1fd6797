/* The spec reader's helpers: fields by name with messages that name the
 * spec, the field, the value and what was expected. */
#ifndef SV_DESIGN_SPEC_JSON_H
#define SV_DESIGN_SPEC_JSON_H

#include "design_internal.h"

typedef struct spec_reader {
    const char *file; /* the spec's name in messages */
    const char *dir;  /* its folder: relative paths resolve against it (NULL: the working folder) */
} spec_reader;

sv_status spec_bad(const spec_reader *r, const char *field, const cJSON *v, const char *expected);
sv_status spec_keys(const spec_reader *r, const cJSON *obj, const char *where, const char *const *allowed);
sv_status spec_number(const spec_reader *r, const cJSON *v, const char *field, double lo, double hi, double *out);
sv_status spec_int(const spec_reader *r, const cJSON *v, const char *field, int lo, int hi, int *out);
/* A path resolved against the spec's folder (malloc'ed into *out). */
sv_status spec_path(const spec_reader *r, const cJSON *v, const char *field, char **out);
/* A CSV of 0/1 values of the board's size (first line the top row) into
 * map[i + nx·j]. */
sv_status spec_csv_map(const char *path, const char *field, int nx, int ny, unsigned char *map);

/* The parts of a spec, each reading its field. */
sv_status spec_read_region(const spec_reader *r, const cJSON *v, sv_design_spec *s);
sv_status spec_read_symmetry(const spec_reader *r, const cJSON *v, sv_design_spec *s);
sv_status spec_read_masks(const spec_reader *r, const cJSON *v, double unit, sv_design_spec *s);
sv_status spec_read_constraints(const spec_reader *r, const cJSON *v, sv_design_spec *s);
sv_status spec_read_start(const spec_reader *r, const cJSON *v, sv_design_spec *s);
sv_status spec_read_frequencies(const spec_reader *r, const cJSON *v, double unit, sv_design_spec *s);

#endif
