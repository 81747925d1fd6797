#!/usr/bin/env python3
"""Bayesian inference of rate constants with NumPyro's NUTS sampler, the
ODE solved by Solvent (docs/how-to/python-jax.md, "NumPyro").

A consecutive reaction A -> B -> C with rates k1 and k2 = 40·k1 is
observed through noisy concentrations of B and C; NUTS samples the
posterior of (log k1, log k2). Each gradient the sampler takes is one
library solve with forward sensitivities, called from inside NumPyro's
jit-compiled model through `solvent.jax.solve`; with chains run
"vectorized", jax.vmap joins all chains into one ensemble call.

    .venv/bin/python examples/python/fit_numpyro.py [--samples N] [--chains C]

prints the posterior mean and standard deviation of each rate against the
value that made the data.
"""
import argparse

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

import solvent.jax as sj

TRUE_K = np.array([0.5, 20.0])
SIGMA = 0.002
T_SAVE = np.concatenate([np.linspace(0.0, 0.5, 11), np.linspace(1.0, 8.0, 15)])
Y0 = jnp.array([1.0, 0.0, 0.0])


def chain_reaction(y, t, k):
    """A -> B -> C, first order: modax's argument order (y, t, params)."""
    return (-k[0] * y[0], k[0] * y[0] - k[1] * y[1], k[1] * y[1])


def closed_form(k, t):
    """The exact concentrations (k1 != k2): B = k1/(k2 - k1)·(e^{-k1 t} − e^{-k2 t})."""
    a = np.exp(-k[0] * t)
    b = k[0] / (k[1] - k[0]) * (np.exp(-k[0] * t) - np.exp(-k[1] * t))
    return np.stack([a, b, 1 - a - b], axis=-1)


def synthetic_data(seed=0):
    """B and C at T_SAVE from the closed form, with Gaussian noise SIGMA."""
    rng = np.random.default_rng(seed)
    return closed_form(TRUE_K, T_SAVE)[:, 1:] + SIGMA * rng.standard_normal((len(T_SAVE), 2))


def model(data):
    log_k = numpyro.sample("log_k", dist.Normal(jnp.zeros(2), 3.0))
    y = sj.solve(chain_reaction, Y0, jnp.asarray(T_SAVE), jnp.exp(log_k), rtol=1e-8, atol=1e-10)[0]
    numpyro.sample("obs", dist.Normal(y[:, 1:], SIGMA), obs=data)


def sample(data, samples=400, warmup=400, chains=2, seed=0):
    """The posterior draws of log k: (chains·samples, 2)."""
    numpyro.set_host_device_count(1)
    mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=samples, num_chains=chains,
                chain_method="vectorized", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), data)
    return np.asarray(mcmc.get_samples()["log_k"]), mcmc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--chains", type=int, default=2)
    args = ap.parse_args()
    draws, mcmc = sample(synthetic_data(), samples=args.samples, warmup=args.samples, chains=args.chains)
    k = np.exp(draws)
    for i, name in enumerate(("k1", "k2")):
        print(f"{name}: posterior {k[:, i].mean():.4g} ± {k[:, i].std():.2g}, true {TRUE_K[i]:g}")
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    print(f"divergent transitions: {divergences}")


if __name__ == "__main__":
    main()
