/* Solvent: everything in one include. */
#ifndef SOLVENT_H
#define SOLVENT_H

#include "solvent/core.h"
#include "solvent/dense.h"
#include "solvent/eft.h"
#include "solvent/sparse.h"
#include "solvent/gds.h"
#include "solvent/em.h"
#include "solvent/em_assembly.h"
#include "solvent/em_tables.h"
#include "solvent/ode.h"
#include "solvent/sweep.h"
#include "solvent/sweep_solver.h"
#include "solvent/gpu.h"
#include "solvent/planar.h"
#include "solvent/design.h"

#endif
