// Stand-in for vta_core with the same ports, used only by the DRAM-model self-test
// (tests/test_axi_dram.py), never with the real core: on launch it copies insn_count_i * 16 bytes
// from insn_base_i to dram_base_i in bursts of up to 8 beats (a memcpy engine), counting cycles.
// error_o = 1 when a response was not OKAY. It exercises AR/R/AW/W/B, bursts and back-pressure.
module vta_core #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = vta_pkg::AXI_DATA_WIDTH,
  parameter int unsigned AxiIdWidth   = 4
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      launch_i,
  input  logic [31:0]               insn_count_i,
  input  logic [AxiAddrWidth-1:0]   insn_base_i,
  input  logic [AxiAddrWidth-1:0]   dram_base_i,
  input  logic [AxiAddrWidth-1:0]   dram_size_i,
  output logic                      busy_o,
  output logic                      done_o,
  output logic [7:0]                error_o,
  output logic [31:0]               error_insn_o,
  output logic [31:0]               cycles_o,
  output logic [31:0]               load_busy_o,
  output logic [31:0]               compute_busy_o,
  output logic [31:0]               store_busy_o,
  output logic [31:0]               load_insns_o,
  output logic [31:0]               compute_insns_o,
  output logic [31:0]               store_insns_o,
  output logic [31:0]               acc_writes_o,
  output logic [AxiIdWidth-1:0]     m_axi_arid_o,
  output logic [AxiAddrWidth-1:0]   m_axi_araddr_o,
  output logic [7:0]                m_axi_arlen_o,
  output logic [2:0]                m_axi_arsize_o,
  output logic [1:0]                m_axi_arburst_o,
  output logic                      m_axi_arvalid_o,
  input  logic                      m_axi_arready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_rid_i,
  input  logic [AxiDataWidth-1:0]   m_axi_rdata_i,
  input  logic [1:0]                m_axi_rresp_i,
  input  logic                      m_axi_rlast_i,
  input  logic                      m_axi_rvalid_i,
  output logic                      m_axi_rready_o,
  output logic [AxiIdWidth-1:0]     m_axi_awid_o,
  output logic [AxiAddrWidth-1:0]   m_axi_awaddr_o,
  output logic [7:0]                m_axi_awlen_o,
  output logic [2:0]                m_axi_awsize_o,
  output logic [1:0]                m_axi_awburst_o,
  output logic                      m_axi_awvalid_o,
  input  logic                      m_axi_awready_i,
  output logic [AxiDataWidth-1:0]   m_axi_wdata_o,
  output logic [AxiDataWidth/8-1:0] m_axi_wstrb_o,
  output logic                      m_axi_wlast_o,
  output logic                      m_axi_wvalid_o,
  input  logic                      m_axi_wready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_bid_i,
  input  logic [1:0]                m_axi_bresp_i,
  input  logic                      m_axi_bvalid_i,
  output logic                      m_axi_bready_o
);
  localparam int unsigned Bytes = AxiDataWidth / 8;

  typedef enum logic [2:0] {Idle, Ar, R, Aw, W, B, Done} state_e;
  state_e state_q;
  logic [31:0] beats_left_q, cycles_q;
  logic [AxiAddrWidth-1:0] src_q, dst_q;
  logic [3:0] n_q, i_q;
  logic [AxiDataWidth-1:0] buf_q [8];
  logic [7:0] err_q;

  assign busy_o = (state_q != Idle) && (state_q != Done);
  assign done_o = (state_q == Done);
  assign error_o = err_q;
  assign error_insn_o = '0;
  assign cycles_o = cycles_q;
  assign load_busy_o = '0;
  assign compute_busy_o = '0;
  assign store_busy_o = '0;
  assign load_insns_o = '0;
  assign compute_insns_o = '0;
  assign store_insns_o = '0;
  assign acc_writes_o = '0;

  assign m_axi_arid_o = '0;
  assign m_axi_araddr_o = src_q;
  assign m_axi_arlen_o = 8'(n_q - 4'd1);
  assign m_axi_arsize_o = 3'($clog2(Bytes));
  assign m_axi_arburst_o = 2'b01;
  assign m_axi_arvalid_o = (state_q == Ar) && (n_q != 4'd0);
  assign m_axi_rready_o = (state_q == R);
  assign m_axi_awid_o = '0;
  assign m_axi_awaddr_o = dst_q;
  assign m_axi_awlen_o = 8'(n_q - 4'd1);
  assign m_axi_awsize_o = 3'($clog2(Bytes));
  assign m_axi_awburst_o = 2'b01;
  assign m_axi_awvalid_o = (state_q == Aw);
  assign m_axi_wdata_o = buf_q[i_q[2:0]];
  assign m_axi_wstrb_o = '1;
  assign m_axi_wlast_o = (i_q == n_q - 4'd1);
  assign m_axi_wvalid_o = (state_q == W);
  assign m_axi_bready_o = (state_q == B);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= Idle;
      beats_left_q <= '0;
      cycles_q <= '0;
      src_q <= '0;
      dst_q <= '0;
      n_q <= '0;
      i_q <= '0;
      err_q <= '0;
    end else begin
      if (busy_o) cycles_q <= cycles_q + 32'd1;
      unique case (state_q)
        Idle, Done: if (launch_i) begin
          beats_left_q <= (insn_count_i * 32'd16 + 32'(Bytes) - 32'd1) / 32'(Bytes);
          src_q <= insn_base_i;
          dst_q <= dram_base_i;
          cycles_q <= '0;
          err_q <= '0;
          state_q <= Ar;
          n_q <= '0;
        end
        Ar: begin
          if (n_q == 4'd0) begin
            if (beats_left_q == 32'd0) state_q <= Done;
            else n_q <= (beats_left_q > 32'd8) ? 4'd8 : 4'(beats_left_q);
          end else if (m_axi_arready_i) begin
            state_q <= R;
            i_q <= '0;
          end
        end
        R: if (m_axi_rvalid_i) begin
          buf_q[i_q[2:0]] <= m_axi_rdata_i;
          if (m_axi_rresp_i != 2'b00) err_q <= 8'd1;
          if (m_axi_rlast_i) state_q <= Aw;
          i_q <= i_q + 4'd1;
        end
        Aw: if (m_axi_awready_i) begin
          state_q <= W;
          i_q <= '0;
        end
        W: if (m_axi_wready_i) begin
          if (i_q == n_q - 4'd1) state_q <= B;
          i_q <= i_q + 4'd1;
        end
        B: if (m_axi_bvalid_i) begin
          if (m_axi_bresp_i != 2'b00) err_q <= 8'd1;
          src_q <= src_q + AxiAddrWidth'(32'(n_q) * Bytes);
          dst_q <= dst_q + AxiAddrWidth'(32'(n_q) * Bytes);
          beats_left_q <= beats_left_q - 32'(n_q);
          n_q <= '0;
          state_q <= Ar;
        end
        default: state_q <= Idle;
      endcase
    end
  end
endmodule : vta_core
