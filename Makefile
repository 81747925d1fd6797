# Everyday commands. Each target runs scripts/setup first, so a fresh
# Debian 12 machine needs nothing else.
BUILD      ?= build
BUILD_SAN  ?= build-sanitize
BUILD_BENCH ?= build-bench
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local
BENCH      ?=
RUN_ARGS   ?=
# The GPU back end: AUTO (on when the CUDA toolkit is found), ON or OFF (docs/gpu.md).
# It is a module loaded only when a GPU run asks for it: CPU runs and CPU
# benchmarks pay nothing for it, so CUDA=OFF is not needed to measure them.
CUDA       ?= AUTO

# The Python package's virtual environment and the interpreter that makes it
# (docs/python.md).
VENV       ?= .venv
PYTHON     ?= python3

FUZZ_SECONDS ?= 1800
FUZZ_SEED  ?= 2

.PHONY: all setup build run test test-sanitize fuzz bench install clean python validation

all: build

setup:
	@scripts/setup

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DSOLVENT_CUDA=$(CUDA)

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main job on the bundled example.
run: build
	@scripts/run-example $(BUILD)/solvent

# The library's tests and the Python package's (a ctest entry, so both run
# side by side).
test: build python
	cmake -S . -B $(BUILD) -DSOLVENT_PYTHON=$(abspath $(VENV))/bin/python > /dev/null
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The Python package, built against $(BUILD) and installed into $(VENV).
python: build
	@PYTHON=$(PYTHON) scripts/python-env $(VENV) $(BUILD)

# Unit and tool tests under AddressSanitizer and UndefinedBehaviorSanitizer,
# with the allocation-failure campaign (CI runs this too).
test-sanitize: setup
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DSOLVENT_SANITIZE=ON -DSOLVENT_FAULT_INJECTION=ON -DSOLVENT_CUDA=OFF
	cmake --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE slow

# The long fuzz campaign (tests/fuzz/README.md): the harness of the fuzz test
# under AddressSanitizer and UBSan for FUZZ_SECONDS, seed FUZZ_SEED (the
# test itself runs 40 s with seed 1). Failing inputs stay in
# $(BUILD_SAN)/fuzz-long/failures.
fuzz: setup
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DSOLVENT_SANITIZE=ON -DSOLVENT_CUDA=OFF
	cmake --build $(BUILD_SAN) -j $(JOBS) --target solvent fuzz_tool
	ASAN_OPTIONS=detect_leaks=1 $(BUILD_SAN)/tests/fuzz/fuzz_tool --tool $(BUILD_SAN)/solvent --src . \
	  --work $(BUILD_SAN)/fuzz-long --seed $(FUZZ_SEED) --seconds $(FUZZ_SECONDS) --timeout 300

# The Python benchmarks (bench/python/bench_NAME.py): BENCH=python, the package
# against the tool of the same build; distributed, Dask with 1 and 2 workers
# against the direct call; jax, the numba and JAX routes against the built-in
# and diffrax.
PY_BENCHES := python distributed jax
bench:
ifneq ($(filter $(BENCH),$(PY_BENCHES)),)
	@$(MAKE) --no-print-directory python
	@mkdir -p bench/results
	$(VENV)/bin/python bench/python/bench_$(BENCH).py $(if $(filter python,$(BENCH)),--tool $(BUILD)/solvent) \
	  > bench/results/$(BENCH).jsonl.tmp
	@cat bench/results/$(BENCH).jsonl.tmp && mv bench/results/$(BENCH).jsonl.tmp bench/results/$(BENCH).jsonl
else
	@scripts/setup --bench
	cmake -S . -B $(BUILD_BENCH) -DCMAKE_BUILD_TYPE=Release -DSOLVENT_BUILD_BENCH=ON -DSOLVENT_BUILD_TESTS=OFF -DSOLVENT_CUDA=$(CUDA)
	cmake --build $(BUILD_BENCH) -j $(JOBS)
	@scripts/run-bench $(BUILD_BENCH)/bench-bin "$(BENCH)"
endif

# The dated validation reports of docs/validation/ and their plots, from the
# committed reference data (scripts/validation/run; not part of `make test`;
# about ten minutes on two cores).
validation: build python
	@scripts/setup --bench
	@scripts/validation/run $(BUILD) $(VENV)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_BENCH) out $(VENV)
