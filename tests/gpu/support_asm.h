/* Support for the assembly tests: a model's L, Ψ (and Ψ_im) by two
 * assemblers, compared entry by entry. */
#ifndef SUPPORT_ASM_H
#define SUPPORT_ASM_H

#include "solvent/em_assembly.h"

typedef struct asm_diff {
    int n;              /* unknowns */
    size_t entries;     /* stored entries compared (r ≥ c, each term) */
    size_t differing;   /* of which not bit for bit equal */
    double rel;         /* max |a − b| / max |b| over each term, the worst term */
    double rel_entry;   /* max |a − b| / |b| over entries with b ≠ 0 */
    int identical;      /* 1: the whole packed arrays (workspace too) are bit for bit equal */
} asm_diff;

/* Assemble m with block size nb by `a` and by the CPU (psi_im: Ψ_im too) and
 * compare the results. */
asm_diff asm_compare(const sv_em_model *m, int nb, int psi_im, const sv_em_assembler *a);

/* A project from JSON text (the test fails on an error). */
sv_em_project *asm_project(const char *json);

#endif
