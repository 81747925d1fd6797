/* Rodas5P's tableau: the coefficients live in tableau_rodas5p.h. */
#include "ode_internal.h"
#include "tableau_rodas5p.h"

const rodas5p_tab sv_ode_rodas5p = ODE_RODAS5P_TABLEAU;
