"""NumPyro's NUTS with the ODE solved by Solvent (examples/python/fit_numpyro.py):
the sampler runs through `solvent.jax.solve` under jit and vmap (two chains
joined into one ensemble), its warm-up proposals with overflowing rates fail
their own trajectories rather than the run, and the posterior it draws from
data made by the closed form of A -> B -> C covers the rates that made it."""
import importlib.util
import warnings

import numpy as np
import pytest

pytest.importorskip("numpyro")


def load_example(repo):
    spec = importlib.util.spec_from_file_location("fit_numpyro", repo / "examples/python/fit_numpyro.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_solve_matches_the_closed_form(repo):
    ex = load_example(repo)
    import jax.numpy as jnp
    import solvent.jax as sj

    y = sj.solve(ex.chain_reaction, ex.Y0, jnp.asarray(ex.T_SAVE), jnp.asarray(ex.TRUE_K), rtol=1e-8, atol=1e-10)
    assert np.max(np.abs(np.asarray(y[0]) - ex.closed_form(ex.TRUE_K, ex.T_SAVE))) < 1e-7


def test_posterior_covers_the_true_rates(repo):
    ex = load_example(repo)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # warm-up's failed proposals
        draws, mcmc = ex.sample(ex.synthetic_data(), samples=80, warmup=80, chains=2)
    assert draws.shape == (160, 2)
    mean, sd = draws.mean(axis=0), draws.std(axis=0)
    assert np.all(np.abs(mean - np.log(ex.TRUE_K)) < 4 * sd), (mean, sd)
    assert np.all(sd < 0.1)  # the data identify both rates (k to about 10 %)
