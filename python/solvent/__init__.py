"""Solvent: planar EM sweeps and ODE ensembles (solvent.ode) from Python,
over the Solvent C library; pixelated circuits designed against masks
(solvent.design). docs/python.md is the guide."""
from ._core import ArgumentError, BudgetError, ParseError, SolventError
from ._native import ffi as _ffi
from ._native import lib as _lib
from . import ode
from .planar import Project, SweepResult, sweep
from .distributed import ManyResult, sweep_many
from .planar_batch import BatchResult, batch
from .design_search import DesignResult, design

__version__ = _ffi.string(_lib.sv_version_string()).decode()

__all__ = ["ode", "Project", "SweepResult", "sweep", "sweep_many", "ManyResult", "batch", "BatchResult", "design", "DesignResult", "SolventError", "ArgumentError",
           "ParseError", "BudgetError", "__version__"]
