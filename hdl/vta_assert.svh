// Simulation-only helpers of the modules' assertions (included inside `ifndef SYNTHESIS).
// Registers start random in simulation (+verilator+rand+reset+2) and a bench may clock the
// core before its first reset, when nothing the properties state holds yet: VTA_ASSERT_ARMED
// declares rst_seen, set by the module's first reset, and VTA_ASSERT_OFF (the properties'
// `disable iff`) keeps every property off until then and during any reset.
`ifndef VTA_ASSERT_SVH
`define VTA_ASSERT_SVH
`define VTA_ASSERT_ARMED \
  logic rst_seen; \
  initial rst_seen = 1'b0; \
  always @(posedge clk_i or negedge rst_ni) if (!rst_ni) rst_seen <= 1'b1;
`define VTA_ASSERT_OFF (!rst_ni || !rst_seen)
`endif
