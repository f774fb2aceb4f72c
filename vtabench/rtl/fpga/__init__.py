"""The FPGA implementation flow (``vtabench fpga``, ``make fpga``; commands and results in
docs/fpga.md).

- :mod:`.ecp5`: synthesis + place and route + timing on a Lattice ECP5. Yosys ``synth_ecp5`` of
  the harness ``vta_fpga_top`` (tb/core/vta_fpga_top.sv: the shell behind registered ports, so
  that ~1400 port bits fit a package's pins and every timed path starts and ends inside the
  device), then nextpnr-ecp5 places and routes it for the device at the target frequency. Fmax
  is nextpnr's static timing analysis of the routed design (its ``--report``); the report's
  critical path says what limits it.
- :mod:`.estimate`: the deepest register-to-register paths of a synthesized netlist under a
  table of assumed delays, to rank paths where no routed report exists.
- :mod:`.xilinx`: ``synth_xilinx -family xcup`` (UltraScale+) of the shell, synthesis only (there
  is no open place and route for it), for resource estimates: LUT, FF, DSP48E2, BRAM36.
- :mod:`.tools`: running the tools and the sources they read.

Both tools are the PyPI YoWASP builds (WebAssembly, single-threaded, the same on every machine).
Netlists, logs and nextpnr's report go to build/fpga/<config>/. The command line
(:mod:`vtabench.cli.fpga`) runs the steps, has :mod:`vtabench.report.fpga_map` draw the routed
die and writes the summary to results/fpga/<config>.json.
"""
