// The ECP5 cell simulation models a synth_ecp5 netlist needs, for `make gls` (vtabench/rtl/gls.py):
// Yosys' own models of the logic cells (LUT4, PFUMX, L6MUX21, CCU2C, TRELLIS_FF and its FD1*
// wrappers, TRELLIS_DPR16X4 distributed RAM; common_sim.vh includes cells_ff.vh and cells_io.vh),
// from the Yosys the flow synthesises with (the build passes +incdir+ of its share/lattice
// folder); this folder's models of the two cells Yosys ships as black boxes (DP16KD block RAM,
// MULT18X18D multiplier) follow in vta_gls.f.
`include "common_sim.vh"
`include "ccu2c_sim.vh"
