/* Solvent: everything in one include. */
#ifndef SOLVENT_H
#define SOLVENT_H

#include "solvent/core.h"
#include "solvent/dense.h"
#include "solvent/sparse.h"
#include "solvent/ode.h"

#endif
