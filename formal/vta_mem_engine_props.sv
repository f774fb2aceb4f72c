// vta_mem_engine as an AXI4 master, for any legal slave and any clients that keep the
// engine's contract: every input is free but for the assumptions below (clients) and in
// vta_mem_engine.sv's `ifdef FORMAL` block (the slave: any latency and back-pressure, R only
// for an ID with a burst outstanding, in any order and with RLAST anywhere, B only for a burst
// whose W is complete). Stated here, at the ports: VALID held until READY with the payload
// stable (AR, AW, W: WDATA's enabled bytes), every burst an aligned full-width INCR burst
// inside one 4 KiB window, R beats routed by RID to their client and drained under halt_i,
// nothing on the bus while idle. The rules that need a record of the traffic (WLAST, beat
// counts, bounds, responses, the bursts of each request) and the invariants that let
// k-induction close sit in the engine's `ifdef FORMAL` block: Yosys reads no hierarchical
// references, so they live where the engine's registers can be named.
module vta_mem_engine_props import vta_pkg::*; #(
  // the core's instance (vta_core.sv): 64-bit addresses, 4-bit IDs, 3 read clients
  parameter int unsigned  AxiAddrWidth = 64,
  parameter int unsigned  AxiIdWidth   = 4,
  parameter int unsigned  NumRd        = 3,
  parameter int unsigned  WindowBytes  = 4096,
  localparam int unsigned Aw           = AxiAddrWidth,
  localparam int unsigned Dw           = AXI_DATA_WIDTH,
  localparam int unsigned Sw           = Dw / 8,
  localparam int unsigned LogSw        = $clog2(Sw),
  localparam int unsigned LogWin       = $clog2(WindowBytes),
  localparam int unsigned WinBeats     = (WindowBytes / Sw > 256) ? 256 : WindowBytes / Sw
) (
  input logic                      clk_i,
  input logic                      rst_ni,
  input logic                      halt_i,
  input logic [NumRd-1:0]          rd_req_valid_i,
  input logic [NumRd-1:0][Aw-1:0]  rd_req_addr_i,
  input logic [NumRd-1:0][31:0]    rd_req_len_i,
  input logic [NumRd-1:0]          rd_ready_i,
  input logic                      wr_req_valid_i,
  input logic [Aw-1:0]             wr_req_addr_i,
  input logic [31:0]               wr_req_len_i,
  input logic                      wr_valid_i,
  input logic [Dw-1:0]             wr_data_i,
  input logic [Sw-1:0]             wr_strb_i,
  input logic                      m_axi_arready_i,
  input logic [AxiIdWidth-1:0]     m_axi_rid_i,
  input logic [Dw-1:0]             m_axi_rdata_i,
  input logic [1:0]                m_axi_rresp_i,
  input logic                      m_axi_rlast_i,
  input logic                      m_axi_rvalid_i,
  input logic                      m_axi_awready_i,
  input logic                      m_axi_wready_i,
  input logic [AxiIdWidth-1:0]     m_axi_bid_i,
  input logic [1:0]                m_axi_bresp_i,
  input logic                      m_axi_bvalid_i
);
  logic                  idle_o, wr_idle_o, rd_err_o, wr_req_ready_o, wr_ready_o;
  logic                  wr_err_o;
  logic [NumRd-1:0]      rd_req_ready_o, rd_valid_o;
  logic [Dw-1:0]         rd_data_o;
  logic [AxiIdWidth-1:0] m_axi_arid_o, m_axi_awid_o;
  logic [Aw-1:0]         m_axi_araddr_o, m_axi_awaddr_o;
  logic [7:0]            m_axi_arlen_o, m_axi_awlen_o;
  logic [2:0]            m_axi_arsize_o, m_axi_awsize_o;
  logic [1:0]            m_axi_arburst_o, m_axi_awburst_o;
  logic                  m_axi_arvalid_o, m_axi_rready_o, m_axi_awvalid_o, m_axi_wlast_o;
  logic                  m_axi_wvalid_o, m_axi_bready_o;
  logic [Dw-1:0]         m_axi_wdata_o;
  logic [Sw-1:0]         m_axi_wstrb_o;

  vta_mem_engine #(
    .AxiAddrWidth (AxiAddrWidth),
    .AxiDataWidth (Dw),
    .AxiIdWidth   (AxiIdWidth),
    .NumRd        (NumRd),
    .WindowBytes  (WindowBytes)
  ) dut (.*);

  // reset in the first cycle only (the slave is reset with the engine); f_past: a previous
  // cycle exists, out of reset
  logic f_init = 1'b1;
  logic f_past = 1'b0;
  always @(posedge clk_i) begin
    f_init <= 1'b0;
    f_past <= !f_init;
  end
  always @* assume (rst_ni == !f_init);

  // ---- the clients' contract (vta_mem_engine.sv's header): lengths > 0; the write client
  // holds wr_valid_i and its beat until wr_ready_o; halt_i (the core's error) ends only when
  // the engine is idle (a new run starts after the core has drained)
  always @* begin
    for (int unsigned i = 0; i < NumRd; i++) begin
      if (rd_req_valid_i[i]) assume (rd_req_len_i[i] != '0);
    end
    if (wr_req_valid_i) assume (wr_req_len_i != '0);
  end
  always @(posedge clk_i) begin
    if (f_past) begin
      if ($past(wr_valid_i && !wr_ready_o)) begin
        assume (wr_valid_i && wr_data_i == $past(wr_data_i) && wr_strb_i == $past(wr_strb_i));
      end
      if ($past(halt_i) && !halt_i) assume ($past(idle_o));
    end
  end

  // WDATA bits whose strobe is set (ARM's protocol checker holds only those stable)
  logic [Dw-1:0] w_bits;
  always_comb begin
    for (int unsigned i = 0; i < Sw; i++) begin
      w_bits[i*8 +: 8] = m_axi_wdata_o[i*8 +: 8] & {8{m_axi_wstrb_o[i]}};
    end
  end

  // the last byte of a burst, one bit wider than an address (a burst may not wrap either)
  logic [Aw:0] ar_end, aw_end;
  assign ar_end = (Aw + 1)'(m_axi_araddr_o) + ((Aw + 1)'(m_axi_arlen_o) + 1) * (Aw + 1)'(Sw)
                  - (Aw + 1)'(1);
  assign aw_end = (Aw + 1)'(m_axi_awaddr_o) + ((Aw + 1)'(m_axi_awlen_o) + 1) * (Aw + 1)'(Sw)
                  - (Aw + 1)'(1);

  // the client an R beat is for (none under halt_i)
  logic [NumRd-1:0] r_to;
  always_comb begin
    for (int unsigned i = 0; i < NumRd; i++) begin
      r_to[i] = m_axi_rvalid_i && !halt_i && m_axi_rid_i == AxiIdWidth'(i);
    end
  end

  always @* begin
    if (rst_ni) begin
      // aligned full-width INCR bursts whose first and last byte share a 4 KiB window
      if (m_axi_arvalid_o) begin
        ar_incr_full_width: assert (m_axi_arburst_o == 2'b01 && m_axi_arsize_o == 3'(LogSw)
                                    && m_axi_araddr_o[LogSw-1:0] == '0);
        ar_inside_4k: assert ((ar_end >> LogWin) == ((Aw + 1)'(m_axi_araddr_o) >> LogWin));
        ar_id_is_client: assert (32'(m_axi_arid_o) < 32'(NumRd));
      end
      if (m_axi_awvalid_o) begin
        aw_incr_full_width: assert (m_axi_awburst_o == 2'b01 && m_axi_awsize_o == 3'(LogSw)
                                    && m_axi_awaddr_o[LogSw-1:0] == '0);
        aw_inside_4k: assert ((aw_end >> LogWin) == ((Aw + 1)'(m_axi_awaddr_o) >> LogWin));
      end
      // an R beat goes to the client its RID names, and is taken only when that client takes
      // it; under halt_i every beat is taken (R and B drained) and none reaches a client
      r_routed: assert (rd_valid_o == r_to);
      if (r_to != '0) r_ready_is_client: assert (m_axi_rready_o == |(r_to & rd_ready_i));
      if (halt_i) r_b_drained: assert (m_axi_rready_o && m_axi_bready_o);
      if (idle_o) idle_bus_quiet: assert (!m_axi_arvalid_o && !m_axi_awvalid_o &&
                                          !m_axi_wvalid_o);
    end
  end

  always @(posedge clk_i) begin
    if (f_past) begin
      // VALID held until READY, the payload stable
      if ($past(m_axi_arvalid_o && !m_axi_arready_i)) begin
        ar_held: assert (m_axi_arvalid_o && $stable({m_axi_arid_o, m_axi_araddr_o,
            m_axi_arlen_o, m_axi_arsize_o, m_axi_arburst_o}));
      end
      if ($past(m_axi_awvalid_o && !m_axi_awready_i)) begin
        aw_held: assert (m_axi_awvalid_o && $stable({m_axi_awid_o, m_axi_awaddr_o,
            m_axi_awlen_o, m_axi_awsize_o, m_axi_awburst_o}));
      end
      if ($past(m_axi_wvalid_o && !m_axi_wready_i)) begin
        w_held: assert (m_axi_wvalid_o && $stable({m_axi_wstrb_o, m_axi_wlast_o, w_bits}));
      end

      // the triggers are reachable
      cover_ar_waits: cover ($past(m_axi_arvalid_o && !m_axi_arready_i) && m_axi_arready_i);
      cover_aw_waits: cover ($past(m_axi_awvalid_o && !m_axi_awready_i) && m_axi_awready_i);
      cover_w_waits: cover ($past(m_axi_wvalid_o && !m_axi_wready_i) && m_axi_wready_i &&
                            m_axi_wstrb_o != '0);
      // a burst cut at a window's end (it started inside the window), and a whole window
      cover_ar_ends_at_4k: cover (m_axi_arvalid_o && m_axi_araddr_o[LogWin-1:0] != '0 &&
                                  ar_end[LogWin-1:0] == '1);
      cover_aw_ends_at_4k: cover (m_axi_awvalid_o && m_axi_awaddr_o[LogWin-1:0] != '0 &&
                                  aw_end[LogWin-1:0] == '1);
      cover_ar_whole_window: cover (m_axi_arvalid_o && m_axi_arlen_o == 8'(WinBeats - 1));
      cover_r_to_last_client: cover (rd_valid_o[NumRd-1] && rd_ready_i[NumRd-1]);
      cover_halt_drains_r: cover (halt_i && m_axi_rvalid_i && !rd_ready_i[m_axi_rid_i]);
      cover_halt_w_no_strobes: cover (halt_i && m_axi_wvalid_o && m_axi_wready_i &&
                                      m_axi_wstrb_o == '0);
      cover_idle_after_b: cover ($past(m_axi_bvalid_i) && idle_o);
    end
  end

  logic unused;
  assign unused = ^{rd_err_o, wr_req_ready_o, wr_err_o, rd_data_o, m_axi_rdata_i,
                    m_axi_rresp_i, m_axi_bid_i, m_axi_bresp_i, wr_idle_o};
endmodule : vta_mem_engine_props
