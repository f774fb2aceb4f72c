// vta_err_pkg: error codes the VTA core reports on error_o (see docs/rtl.md).
// A nonzero code halts the core: no new instruction starts, no new memory request is
// issued, outstanding AXI transactions complete (write bursts already announced are
// finished with all strobes low), then done_o rises. error_insn_o names the instruction.
package vta_err_pkg;

  localparam logic [7:0] ERR_NONE       = 8'h00;  // no error
  localparam logic [7:0] ERR_OPCODE     = 8'h01;  // opcode 5..7
  localparam logic [7:0] ERR_MEM_TYPE   = 8'h02;  // illegal memory type / routing / token flag / pad
  localparam logic [7:0] ERR_ALU_OP     = 8'h03;  // ALU opcode 5..7, or ALU with reset_reg = 1
  localparam logic [7:0] ERR_FINISH     = 8'h04;  // FINISH misuse (not last, twice, missing, flags set)
  localparam logic [7:0] ERR_ALIGN      = 8'h05;  // insn_base_i not 16-byte / dram_base_i not bus aligned
  localparam logic [7:0] ERR_SRAM_LOAD  = 8'h10;  // LOAD INP/WGT/ACC/ACC_8BIT writes past its buffer
  localparam logic [7:0] ERR_SRAM_STORE = 8'h11;  // STORE reads past the out buffer
  localparam logic [7:0] ERR_SRAM_UOP   = 8'h12;  // LOAD UOP past the uop buffer; uop_bgn > uop_end
                                                  // or uop_end > uop depth in GEMM / ALU
  localparam logic [7:0] ERR_SRAM_GEMM  = 8'h13;  // GEMM dst / src / wgt index outside its buffer
  localparam logic [7:0] ERR_SRAM_ALU   = 8'h14;  // ALU dst / src index outside the acc buffer
  localparam logic [7:0] ERR_DRAM_RANGE = 8'h20;  // LOAD / STORE touches bytes beyond dram_size_i
  localparam logic [7:0] ERR_AXI_RD     = 8'h30;  // SLVERR / DECERR on a read response
  localparam logic [7:0] ERR_AXI_WR     = 8'h31;  // SLVERR / DECERR on a write response

endpackage : vta_err_pkg
