/* Projects from a JSON tree (project.c): the file reader's one validator,
 * shared by projects built in memory (project_build.c). */
#ifndef SV_EM_PROJECT_JSON_H
#define SV_EM_PROJECT_JSON_H

#include <cjson/cJSON.h>

#include "solvent/em.h"

/* The project `root` describes, read as a project file named `name` (for
 * messages; relative paths are taken from the current folder). */
sv_status sv_em_project_from_json(sv_ctx *ctx, const cJSON *root, const char *name, sv_em_project **out);

#endif
