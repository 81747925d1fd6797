# The cffi extension is declared here (setuptools reads cffi_modules only
# from setup()); everything else is in pyproject.toml.
from setuptools import setup

setup(cffi_modules=["solvent/_build.py:ffibuilder"])
