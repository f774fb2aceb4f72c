// vta_mem_engine: the core's single AXI4 master.
// Read side: NumRd clients (index 0 = highest priority) each ask for a contiguous byte
// range; the engine takes one request at a time, splits it into INCR bursts of full
// bus beats that never cross an aligned WindowBytes (4 KiB) window nor 256 beats, and
// issues one AR per cycle with several bursts outstanding. ARID = client index; R beats
// are routed back by RID (each client sees its beats in order). Clients must accept
// their beats without waiting on anything but themselves.
// Write side: one client (store) asks for byte ranges the same way (one AW per burst)
// and streams beats + strobes; the engine adds WLAST per burst and sends W beats only
// for bursts whose AW was accepted. A beat goes straight to W, so the client holds
// wr_valid_i and its beat until wr_ready_o (AXI's rule for WVALID).
// halt_i (core error): no new request or burst starts; R and B are drained; write
// bursts already announced are completed with all strobes low. idle_o: nothing pending.
module vta_mem_engine #(
  parameter int unsigned AxiAddrWidth = 64,
  parameter int unsigned AxiDataWidth = 512,
  parameter int unsigned AxiIdWidth   = 4,
  parameter int unsigned NumRd        = 3,
  parameter int unsigned WindowBytes  = 4096,
  localparam int unsigned Aw          = AxiAddrWidth,
  localparam int unsigned Dw          = AxiDataWidth,
  localparam int unsigned Sw          = AxiDataWidth / 8
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      halt_i,
  output logic                      idle_o,
  output logic                      wr_idle_o,
  // read clients
  input  logic [NumRd-1:0]          rd_req_valid_i,
  output logic [NumRd-1:0]          rd_req_ready_o,
  input  logic [NumRd-1:0][Aw-1:0]  rd_req_addr_i,
  input  logic [NumRd-1:0][31:0]    rd_req_len_i,    // bytes, > 0
  output logic [NumRd-1:0]          rd_valid_o,
  input  logic [NumRd-1:0]          rd_ready_i,
  output logic [Dw-1:0]             rd_data_o,
  output logic                      rd_err_o,        // with rd_valid_o: SLVERR / DECERR
  // write client
  input  logic                      wr_req_valid_i,
  output logic                      wr_req_ready_o,
  input  logic [Aw-1:0]             wr_req_addr_i,
  input  logic [31:0]               wr_req_len_i,    // bytes, > 0
  input  logic                      wr_valid_i,
  output logic                      wr_ready_o,
  input  logic [Dw-1:0]             wr_data_i,
  input  logic [Sw-1:0]             wr_strb_i,
  output logic                      wr_err_o,        // pulse: SLVERR / DECERR on B
  // AXI4 master
  output logic [AxiIdWidth-1:0]     m_axi_arid_o,
  output logic [Aw-1:0]             m_axi_araddr_o,
  output logic [7:0]                m_axi_arlen_o,
  output logic [2:0]                m_axi_arsize_o,
  output logic [1:0]                m_axi_arburst_o,
  output logic                      m_axi_arvalid_o,
  input  logic                      m_axi_arready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_rid_i,
  input  logic [Dw-1:0]             m_axi_rdata_i,
  input  logic [1:0]                m_axi_rresp_i,
  input  logic                      m_axi_rlast_i,
  input  logic                      m_axi_rvalid_i,
  output logic                      m_axi_rready_o,
  output logic [AxiIdWidth-1:0]     m_axi_awid_o,
  output logic [Aw-1:0]             m_axi_awaddr_o,
  output logic [7:0]                m_axi_awlen_o,
  output logic [2:0]                m_axi_awsize_o,
  output logic [1:0]                m_axi_awburst_o,
  output logic                      m_axi_awvalid_o,
  input  logic                      m_axi_awready_i,
  output logic [Dw-1:0]             m_axi_wdata_o,
  output logic [Sw-1:0]             m_axi_wstrb_o,
  output logic                      m_axi_wlast_o,
  output logic                      m_axi_wvalid_o,
  input  logic                      m_axi_wready_i,
  input  logic [AxiIdWidth-1:0]     m_axi_bid_i,
  input  logic [1:0]                m_axi_bresp_i,
  input  logic                      m_axi_bvalid_i,
  output logic                      m_axi_bready_o
);

  localparam int unsigned LogSw      = $clog2(Sw);
  localparam int unsigned WinBeats   = (WindowBytes / Sw > 256) ? 256 : WindowBytes / Sw;
  localparam int unsigned WFifoDepth = 8;
  localparam int unsigned CntW       = 16;

  // ---------------------------------------------------------------- read side
  logic                   rd_act_q, rd_act_d;
  logic [AxiIdWidth-1:0]  rd_cli_q, rd_cli_d;
  logic [Aw-1:0]          rd_addr_q, rd_addr_d;    // beat-aligned address of the next burst
  logic [31:0]            rd_left_q, rd_left_d;    // beats still to request
  logic                   ar_valid_q, ar_valid_d;
  logic [AxiIdWidth-1:0]  ar_id_q, ar_id_d;
  logic [Aw-1:0]          ar_addr_q, ar_addr_d;
  logic [7:0]             ar_len_q, ar_len_d;
  logic [CntW-1:0]        rd_out_q, rd_out_d;      // bursts outstanding
  logic                   ar_free, rd_last_burst;
  logic [31:0]            rd_n, rd_to_win, rd_total;
  logic [Aw-1:0]          rd_first, rd_last;
  logic [AxiIdWidth-1:0]  rd_sel;

  assign ar_free = !ar_valid_q || m_axi_arready_i;

  // beats of the next burst: up to the window end, at most WinBeats, at most what is left
  assign rd_to_win = 32'(WinBeats) - 32'((rd_addr_q & Aw'(WindowBytes - 1)) >> LogSw);
  assign rd_n      = (rd_left_q < rd_to_win) ? rd_left_q : rd_to_win;
  // fixed priority: the lowest client index with a request
  always_comb begin
    rd_sel = '0;
    for (int i = NumRd - 1; i >= 0; i--) begin
      if (rd_req_valid_i[i]) rd_sel = AxiIdWidth'(i);
    end
  end
  // beats of a new request's byte range: its offset in the first beat plus its length,
  // rounded up to beats (one short carry chain, no address-wide arithmetic: the client's
  // request fields feed rd_left_q through it in the accepting cycle)
  assign rd_first  = Aw'(rd_req_addr_i[rd_sel][LogSw-1:0]);
  assign rd_last   = Aw'(rd_req_len_i[rd_sel]) + Aw'(Sw - 1);
  assign rd_total  = 32'((rd_first + rd_last) >> LogSw);
  assign rd_last_burst = (rd_n == rd_left_q);

  always_comb begin
    rd_act_d       = rd_act_q;
    rd_cli_d       = rd_cli_q;
    rd_addr_d      = rd_addr_q;
    rd_left_d      = rd_left_q;
    ar_valid_d     = ar_valid_q && !m_axi_arready_i;
    ar_id_d        = ar_id_q;
    ar_addr_d      = ar_addr_q;
    ar_len_d       = ar_len_q;
    rd_req_ready_o = '0;
    if (rd_act_q && ar_free && !halt_i) begin
      ar_valid_d = 1'b1;
      ar_id_d    = rd_cli_q;
      ar_addr_d  = rd_addr_q;
      ar_len_d   = 8'(rd_n - 32'd1);
      rd_addr_d  = rd_addr_q + (Aw'(rd_n) << LogSw);
      rd_left_d  = rd_left_q - rd_n;
      if (rd_last_burst) rd_act_d = 1'b0;
    end
    if (halt_i) begin
      rd_act_d = 1'b0;
    end else if (!rd_act_d) begin
      // take the highest-priority request (also in the cycle the previous one ends)
      if (|rd_req_valid_i) begin
        rd_cli_d = rd_sel;
        for (int unsigned i = 0; i < NumRd; i++) begin
          rd_req_ready_o[i] = (rd_sel == AxiIdWidth'(i));
        end
        rd_act_d  = 1'b1;
        rd_addr_d = (rd_req_addr_i[rd_sel] >> LogSw) << LogSw;
        rd_left_d = rd_total;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_act_q   <= 1'b0;
      rd_cli_q   <= '0;
      rd_addr_q  <= '0;
      rd_left_q  <= '0;
      ar_valid_q <= 1'b0;
      ar_id_q    <= '0;
      ar_addr_q  <= '0;
      ar_len_q   <= '0;
      rd_out_q   <= '0;
    end else begin
      rd_act_q   <= rd_act_d;
      rd_cli_q   <= rd_cli_d;
      rd_addr_q  <= rd_addr_d;
      rd_left_q  <= rd_left_d;
      ar_valid_q <= ar_valid_d;
      ar_id_q    <= ar_id_d;
      ar_addr_q  <= ar_addr_d;
      ar_len_q   <= ar_len_d;
      rd_out_q   <= rd_out_d;
    end
  end

  // bursts outstanding: +1 on an AR handshake, -1 on a burst's last R beat. The R handshake
  // (a client's rd_ready_i, late in its cycle) selects between values from the register
  // instead of entering a 16-bit add
  always_comb begin
    unique case ({ar_valid_q && m_axi_arready_i,
                  m_axi_rvalid_i && m_axi_rready_o && m_axi_rlast_i})
      2'b10:   rd_out_d = rd_out_q + CntW'(1);
      2'b01:   rd_out_d = rd_out_q - CntW'(1);
      default: rd_out_d = rd_out_q;
    endcase
  end

  assign m_axi_arid_o    = ar_id_q;
  assign m_axi_araddr_o  = ar_addr_q;
  assign m_axi_arlen_o   = ar_len_q;
  assign m_axi_arsize_o  = 3'(LogSw);
  assign m_axi_arburst_o = 2'b01;
  assign m_axi_arvalid_o = ar_valid_q;

  always_comb begin
    rd_valid_o     = '0;
    m_axi_rready_o = 1'b1;
    for (int unsigned i = 0; i < NumRd; i++) begin
      if (m_axi_rid_i == AxiIdWidth'(i)) begin
        rd_valid_o[i]  = m_axi_rvalid_i && !halt_i;
        m_axi_rready_o = rd_ready_i[i] || halt_i;
      end
    end
  end
  assign rd_data_o = m_axi_rdata_i;
  assign rd_err_o  = m_axi_rresp_i[1];

  // ---------------------------------------------------------------- write side
  logic              wr_act_q, wr_act_d;
  logic [Aw-1:0]     wr_addr_q, wr_addr_d;
  logic [31:0]       wr_left_q, wr_left_d;
  logic              aw_valid_q, aw_valid_d;
  logic [Aw-1:0]     aw_addr_q, aw_addr_d;
  logic [7:0]        aw_len_q, aw_len_d;
  logic [CntW-1:0]   wr_out_q;                 // bursts awaiting B
  logic [31:0]       wr_n, wr_to_win, wr_total;
  logic [Aw-1:0]     wr_first, wr_last;
  logic              aw_hs, w_hs, wf_ready, wf_valid, wf_pop, w_last;
  logic [7:0]        wf_len;
  logic [7:0]        w_beat_q;
  logic [$clog2(WFifoDepth+1)-1:0] wf_count;

  assign wr_to_win = 32'(WinBeats) - 32'((wr_addr_q & Aw'(WindowBytes - 1)) >> LogSw);
  assign wr_n      = (wr_left_q < wr_to_win) ? wr_left_q : wr_to_win;
  assign wr_first  = Aw'(wr_req_addr_i[LogSw-1:0]);
  assign wr_last   = Aw'(wr_req_len_i) + Aw'(Sw - 1);
  assign wr_total  = 32'((wr_first + wr_last) >> LogSw);
  assign aw_hs = aw_valid_q && m_axi_awready_i;

  always_comb begin
    wr_act_d       = wr_act_q;
    wr_addr_d      = wr_addr_q;
    wr_left_d      = wr_left_q;
    aw_valid_d     = aw_valid_q && !m_axi_awready_i;
    aw_addr_d      = aw_addr_q;
    aw_len_d       = aw_len_q;
    wr_req_ready_o = 1'b0;
    // a new AW only while the W-length FIFO has room for it (counting the one in flight)
    if (wr_act_q && (!aw_valid_q || m_axi_awready_i) && !halt_i &&
        (32'(wf_count) + 32'(aw_valid_q) < 32'(WFifoDepth))) begin
      aw_valid_d = 1'b1;
      aw_addr_d  = wr_addr_q;
      aw_len_d   = 8'(wr_n - 32'd1);
      wr_addr_d  = wr_addr_q + (Aw'(wr_n) << LogSw);
      wr_left_d  = wr_left_q - wr_n;
      if (wr_n == wr_left_q) wr_act_d = 1'b0;
    end
    if (halt_i) begin
      wr_act_d = 1'b0;
    end else if (!wr_act_d && wr_req_valid_i) begin
      wr_req_ready_o = 1'b1;
      wr_act_d       = 1'b1;
      wr_addr_d      = (wr_req_addr_i >> LogSw) << LogSw;
      wr_left_d      = wr_total;
    end
  end

  // Lengths of accepted bursts whose W beats are still to send.
  vta_fifo #(
    .Width (8),
    .Depth (WFifoDepth)
  ) u_wlen_fifo (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .clr_i    (1'b0),
    .wvalid_i (aw_hs),
    .wready_o (wf_ready),
    .wdata_i  (aw_len_q),
    .rvalid_o (wf_valid),
    .rready_i (wf_pop),
    .rdata_o  (wf_len),
    .count_o  (wf_count)
  );

  // A beat shown on W keeps its payload until accepted: after halt_i, beats still owed to
  // announced bursts carry no strobes, but a beat already waiting keeps the strobes it showed.
  logic w_wait_q, w_zero_q, w_zero;

  assign w_zero          = w_wait_q ? w_zero_q : halt_i;
  assign w_last          = (w_beat_q == wf_len);
  assign m_axi_wvalid_o  = wf_valid && (wr_valid_i || halt_i);
  assign m_axi_wdata_o   = wr_data_i;
  assign m_axi_wstrb_o   = w_zero ? '0 : wr_strb_i;
  assign m_axi_wlast_o   = w_last;
  assign wr_ready_o      = wf_valid && m_axi_wready_i && !halt_i;
  assign w_hs            = m_axi_wvalid_o && m_axi_wready_i;
  assign wf_pop          = w_hs && w_last;
  assign m_axi_bready_o  = 1'b1;
  assign wr_err_o        = m_axi_bvalid_i && m_axi_bresp_i[1];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_act_q   <= 1'b0;
      wr_addr_q  <= '0;
      wr_left_q  <= '0;
      aw_valid_q <= 1'b0;
      aw_addr_q  <= '0;
      aw_len_q   <= '0;
      wr_out_q   <= '0;
      w_beat_q   <= '0;
      w_wait_q   <= 1'b0;
      w_zero_q   <= 1'b0;
    end else begin
      wr_act_q   <= wr_act_d;
      wr_addr_q  <= wr_addr_d;
      wr_left_q  <= wr_left_d;
      aw_valid_q <= aw_valid_d;
      aw_addr_q  <= aw_addr_d;
      aw_len_q   <= aw_len_d;
      wr_out_q   <= wr_out_q + CntW'(aw_hs) - CntW'(m_axi_bvalid_i);
      w_wait_q   <= m_axi_wvalid_o && !m_axi_wready_i;
      w_zero_q   <= w_zero;
      if (w_hs) begin
        w_beat_q <= w_last ? 8'd0 : w_beat_q + 8'd1;
      end
    end
  end

  assign m_axi_awid_o    = '0;
  assign m_axi_awaddr_o  = aw_addr_q;
  assign m_axi_awlen_o   = aw_len_q;
  assign m_axi_awsize_o  = 3'(LogSw);
  assign m_axi_awburst_o = 2'b01;
  assign m_axi_awvalid_o = aw_valid_q;

  assign wr_idle_o = !wr_act_q && !aw_valid_q && !wf_valid && (wr_out_q == '0);
  assign idle_o    = wr_idle_o && !rd_act_q && !ar_valid_q && (rd_out_q == '0);

  logic unused;
  assign unused = ^{wf_ready, m_axi_bid_i, m_axi_bresp_i[0], m_axi_rresp_i[0]};

  // ---------------------------------------------------------------- assertions (simulation)
  // The AXI4 master rules this engine relies on (AMBA AXI4, A3.2.1 handshakes, A3.4.1 bursts):
  // VALID held until READY with a stable payload (WDATA: the bytes WSTRB enables, as ARM's
  // protocol checker reads it), INCR bursts of full-width beats that never cross 4 KiB, one
  // WLAST per burst on its last beat, W only for announced bursts.
`ifndef SYNTHESIS
`include "vta_assert.svh"
  `VTA_ASSERT_ARMED
  localparam int unsigned IncrBurst = 1;

  a_ar_held: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      m_axi_arvalid_o && !m_axi_arready_i |=> m_axi_arvalid_o &&
      $stable({m_axi_arid_o, m_axi_araddr_o, m_axi_arlen_o, m_axi_arsize_o, m_axi_arburst_o}))
    else $error("AR: ARVALID dropped or AR payload changed before ARREADY");
  a_aw_held: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      m_axi_awvalid_o && !m_axi_awready_i |=> m_axi_awvalid_o &&
      $stable({m_axi_awid_o, m_axi_awaddr_o, m_axi_awlen_o, m_axi_awsize_o, m_axi_awburst_o}))
    else $error("AW: AWVALID dropped or AW payload changed before AWREADY");

  logic [Dw-1:0] w_bits;   // WDATA bits whose strobe is set
  always_comb begin
    for (int unsigned i = 0; i < Sw; i++) begin
      w_bits[i*8 +: 8] = m_axi_wdata_o[i*8 +: 8] & {8{m_axi_wstrb_o[i]}};
    end
  end
  a_w_held: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      m_axi_wvalid_o && !m_axi_wready_i |=> m_axi_wvalid_o &&
      $stable({m_axi_wstrb_o, m_axi_wlast_o, w_bits}))
    else $error("W: WVALID dropped or W payload changed before WREADY");

  a_ar_burst: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      m_axi_arvalid_o |-> m_axi_arburst_o == 2'(IncrBurst) && m_axi_arsize_o == 3'(LogSw) &&
      (m_axi_araddr_o & Aw'(Sw - 1)) == '0 &&
      32'(m_axi_araddr_o & Aw'(WindowBytes - 1)) + ((32'(m_axi_arlen_o) + 1) << LogSw)
          <= 32'(WindowBytes))
    else $error("AR: not an aligned full-width INCR burst inside one 4 KiB window");
  a_aw_burst: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF)
      m_axi_awvalid_o |-> m_axi_awburst_o == 2'(IncrBurst) && m_axi_awsize_o == 3'(LogSw) &&
      (m_axi_awaddr_o & Aw'(Sw - 1)) == '0 &&
      32'(m_axi_awaddr_o & Aw'(WindowBytes - 1)) + ((32'(m_axi_awlen_o) + 1) << LogSw)
          <= 32'(WindowBytes))
    else $error("AW: not an aligned full-width INCR burst inside one 4 KiB window");

  // WLAST: an independent record of the accepted AW lengths, in order
  int unsigned aw_lens[$];
  int unsigned w_beats_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      aw_lens.delete();
      w_beats_q <= 0;
    end else if (rst_seen) begin
      if (w_hs) begin
        a_w_announced: assert (aw_lens.size() != 0)
          else $error("W: a beat with no accepted AW burst waiting for data");
        a_wlast: assert (aw_lens.size() == 0 || m_axi_wlast_o == (w_beats_q == aw_lens[0]))
          else $error("W: WLAST %0d on beat %0d of a %0d-beat burst", m_axi_wlast_o,
                      w_beats_q + 1, aw_lens[0] + 1);
        if (m_axi_wlast_o) begin
          if (aw_lens.size() != 0) void'(aw_lens.pop_front());
          w_beats_q <= 0;
        end else begin
          w_beats_q <= w_beats_q + 1;
        end
      end
      if (aw_hs) aw_lens.push_back(int'(m_axi_awlen_o));
    end
  end

  // the W-length FIFO never refuses an accepted AW (the AW credit check)
  a_wlen_room: assert property (@(posedge clk_i) disable iff (`VTA_ASSERT_OFF) aw_hs |-> wf_ready)
    else $error("an accepted AW found the W-length FIFO full");
`endif

`ifdef FORMAL
  // ---------------------------------------------------------------- formal (`vtabench formal`)
  // Read by the formal flow only. formal/vta_mem_engine_props.sv drives every input freely
  // (within the clients' contract above) and states the rules visible at the ports alone
  // (handshakes, burst shape). Here, where the engine's state can be named: a record of the
  // traffic on the AXI ports, kept from the handshakes (not from the engine's counters); the
  // legal slave stated on it (assume: any latency and back-pressure, but R only for an ID with a
  // burst outstanding, B only for a burst whose W is complete, at most 2^CntW - 1 bursts held);
  // the rules that need it (assert: WLAST, beat counts, bounds, idle, the bursts of each read
  // request); and the invariants over the engine's registers that let k-induction close.
  localparam int unsigned FMaxOut = (1 << CntW) - 1;
  localparam int unsigned FSumW   = CntW + 2;
  localparam int unsigned FWqW    = $clog2(WFifoDepth + 1);
  logic f_ar_hs, f_r_last_hs, f_w_last_hs, f_b_hs;
  assign f_ar_hs     = m_axi_arvalid_o && m_axi_arready_i;
  assign f_r_last_hs = m_axi_rvalid_i && m_axi_rready_o && m_axi_rlast_i;
  assign f_w_last_hs = w_hs && m_axi_wlast_o;
  assign f_b_hs      = m_axi_bvalid_i && m_axi_bready_o;

  // read bursts outstanding per ID: AR handshakes minus last R beats accepted
  logic [NumRd-1:0][CntW-1:0] f_rd_out_q;
  logic [FSumW-1:0]           f_rd_sum;
  logic                       f_rid_asked;   // RID names a client with a burst outstanding
  always_comb begin
    f_rd_sum    = '0;
    f_rid_asked = 1'b0;
    for (int unsigned i = 0; i < NumRd; i++) begin
      f_rd_sum = f_rd_sum + FSumW'(f_rd_out_q[i]);
      if (m_axi_rid_i == AxiIdWidth'(i) && f_rd_out_q[i] != '0) f_rid_asked = 1'b1;
    end
  end

  // write bursts: the AWLEN of each accepted burst whose W beats are owed ([0] the one W is
  // on), the beats of [0] already sent, and bursts whose W is done and whose B is awaited
  logic [WFifoDepth-1:0][7:0] f_wq_q, f_wq_d;
  logic [FWqW-1:0]            f_wq_n_q, f_wq_n_d;
  logic [7:0]                 f_wbeat_q;
  logic [CntW-1:0]            f_b_due_q;
  always_comb begin
    f_wq_d   = f_wq_q;
    f_wq_n_d = f_wq_n_q;
    if (f_w_last_hs && f_wq_n_q != '0) begin
      for (int unsigned i = 0; i + 1 < WFifoDepth; i++) f_wq_d[i] = f_wq_q[i + 1];
      f_wq_n_d = f_wq_n_q - FWqW'(1);
    end
    if (aw_hs && f_wq_n_d < FWqW'(WFifoDepth)) begin
      for (int unsigned i = 0; i < WFifoDepth; i++) begin
        if (FWqW'(i) == f_wq_n_d) f_wq_d[i] = m_axi_awlen_o;
      end
      f_wq_n_d = f_wq_n_d + FWqW'(1);
    end
  end

  // requests whose beats have not all appeared on AR (reads) or AW (writes) yet: entry 0 the
  // oldest (at most two: the engine takes the next request in the cycle it issues the last
  // burst of the current one, which shows on the bus one cycle later). A burst appears
  // ("fresh") in the first cycle its VALID is up; it takes its beats from entry 0, at its
  // address. halt_i drops what is left.

  // the beats a request touches: from its first byte's beat to its last byte's, inclusive
  // (in a bit more than address width: neither sum may wrap)
  function automatic logic [32:0] f_beats(input logic [Aw-1:0] addr, input logic [31:0] len);
    logic [Aw:0] last, first;
    last    = (Aw + 1)'(addr) + (Aw + 1)'(len) - (Aw + 1)'(1);
    first   = (Aw + 1)'(addr);
    f_beats = 33'((last >> LogSw) - (first >> LogSw)) + 33'd1;
  endfunction
  logic       f_ar_wait_q, f_fresh;
  // (entry 0: f_rq0_*, entry 1: f_rq1_*; valid, address of the next beat, beats left, ID)
  logic              f_rq0_v_q, f_rq0_v_d, f_rq1_v_q, f_rq1_v_d;
  logic [Aw-1:0]     f_rq0_addr_q, f_rq0_addr_d, f_rq1_addr_q, f_rq1_addr_d;
  logic [32:0]       f_rq0_left_q, f_rq0_left_d, f_rq1_left_q, f_rq1_left_d;
  logic [AxiIdWidth-1:0] f_rq0_id_q, f_rq0_id_d, f_rq1_id_q, f_rq1_id_d;
  logic              f_acc, f_rq_over;   // a request accepted; one found no free entry
  logic [AxiIdWidth-1:0] f_acc_id;
  logic [Aw-1:0]     f_acc_addr, f_ar_bytes;
  logic [31:0]       f_acc_len;
  logic [32:0]       f_acc_beats, f_ar_n;
  assign f_fresh    = m_axi_arvalid_o && !f_ar_wait_q;
  assign f_ar_n     = 33'(m_axi_arlen_o) + 33'd1;
  assign f_ar_bytes = Aw'(f_ar_n) << LogSw;
  always_comb begin
    f_acc      = 1'b0;
    f_acc_id   = '0;
    f_acc_addr = '0;
    f_acc_len  = '0;
    for (int unsigned i = 0; i < NumRd; i++) begin
      if (rd_req_valid_i[i] && rd_req_ready_o[i]) begin
        f_acc      = 1'b1;
        f_acc_id   = AxiIdWidth'(i);
        f_acc_addr = rd_req_addr_i[i];
        f_acc_len  = rd_req_len_i[i];
      end
    end
  end
  assign f_acc_beats = f_beats(f_acc_addr, f_acc_len);
  always_comb begin
    f_rq_over    = 1'b0;
    f_rq0_v_d    = f_rq0_v_q;
    f_rq0_addr_d = f_rq0_addr_q;
    f_rq0_left_d = f_rq0_left_q;
    f_rq0_id_d   = f_rq0_id_q;
    f_rq1_v_d    = f_rq1_v_q;
    f_rq1_addr_d = f_rq1_addr_q;
    f_rq1_left_d = f_rq1_left_q;
    f_rq1_id_d   = f_rq1_id_q;
    if (f_fresh && f_rq0_v_q) begin
      if (f_rq0_left_q == f_ar_n) begin
        // entry 0 has all its beats on AR: entry 1 moves up
        f_rq0_v_d    = f_rq1_v_q;
        f_rq0_addr_d = f_rq1_addr_q;
        f_rq0_left_d = f_rq1_left_q;
        f_rq0_id_d   = f_rq1_id_q;
        f_rq1_v_d    = 1'b0;
      end else begin
        f_rq0_addr_d = f_rq0_addr_q + f_ar_bytes;
        f_rq0_left_d = f_rq0_left_q - f_ar_n;
      end
    end
    if (halt_i) begin
      f_rq0_v_d = 1'b0;
      f_rq1_v_d = 1'b0;
    end
    if (f_acc) begin
      if (!f_rq0_v_d) begin
        f_rq0_v_d    = 1'b1;
        f_rq0_addr_d = (f_acc_addr >> LogSw) << LogSw;
        f_rq0_left_d = f_acc_beats;
        f_rq0_id_d   = f_acc_id;
      end else begin
        f_rq_over    = f_rq1_v_d;
        f_rq1_v_d    = 1'b1;
        f_rq1_addr_d = (f_acc_addr >> LogSw) << LogSw;
        f_rq1_left_d = f_acc_beats;
        f_rq1_id_d   = f_acc_id;
      end
    end
  end

  // the same for write requests (one ID)
  logic          f_aw_wait_q, f_aw_fresh, f_wacc, f_wrq_over;
  logic          f_wrq0_v_q, f_wrq0_v_d, f_wrq1_v_q, f_wrq1_v_d;
  logic [Aw-1:0] f_wrq0_addr_q, f_wrq0_addr_d, f_wrq1_addr_q, f_wrq1_addr_d, f_aw_bytes;
  logic [32:0]   f_wrq0_left_q, f_wrq0_left_d, f_wrq1_left_q, f_wrq1_left_d, f_aw_n;
  assign f_aw_fresh = m_axi_awvalid_o && !f_aw_wait_q;
  assign f_aw_n     = 33'(m_axi_awlen_o) + 33'd1;
  assign f_aw_bytes = Aw'(f_aw_n) << LogSw;
  assign f_wacc     = wr_req_valid_i && wr_req_ready_o;
  always_comb begin
    f_wrq_over    = 1'b0;
    f_wrq0_v_d    = f_wrq0_v_q;
    f_wrq0_addr_d = f_wrq0_addr_q;
    f_wrq0_left_d = f_wrq0_left_q;
    f_wrq1_v_d    = f_wrq1_v_q;
    f_wrq1_addr_d = f_wrq1_addr_q;
    f_wrq1_left_d = f_wrq1_left_q;
    if (f_aw_fresh && f_wrq0_v_q) begin
      if (f_wrq0_left_q == f_aw_n) begin
        f_wrq0_v_d    = f_wrq1_v_q;
        f_wrq0_addr_d = f_wrq1_addr_q;
        f_wrq0_left_d = f_wrq1_left_q;
        f_wrq1_v_d    = 1'b0;
      end else begin
        f_wrq0_addr_d = f_wrq0_addr_q + f_aw_bytes;
        f_wrq0_left_d = f_wrq0_left_q - f_aw_n;
      end
    end
    if (halt_i) begin
      f_wrq0_v_d = 1'b0;
      f_wrq1_v_d = 1'b0;
    end
    if (f_wacc) begin
      if (!f_wrq0_v_d) begin
        f_wrq0_v_d    = 1'b1;
        f_wrq0_addr_d = (wr_req_addr_i >> LogSw) << LogSw;
        f_wrq0_left_d = f_beats(wr_req_addr_i, wr_req_len_i);
      end else begin
        f_wrq_over    = f_wrq1_v_d;
        f_wrq1_v_d    = 1'b1;
        f_wrq1_addr_d = (wr_req_addr_i >> LogSw) << LogSw;
        f_wrq1_left_d = f_beats(wr_req_addr_i, wr_req_len_i);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      f_rd_out_q  <= '0;
      f_wq_q      <= '0;
      f_wq_n_q    <= '0;
      f_wbeat_q   <= '0;
      f_b_due_q   <= '0;
      f_ar_wait_q <= 1'b0;
      f_aw_wait_q <= 1'b0;
      f_wrq0_v_q    <= 1'b0;
      f_wrq0_addr_q <= '0;
      f_wrq0_left_q <= '0;
      f_wrq1_v_q    <= 1'b0;
      f_wrq1_addr_q <= '0;
      f_wrq1_left_q <= '0;
      f_rq0_v_q    <= 1'b0;
      f_rq0_addr_q <= '0;
      f_rq0_left_q <= '0;
      f_rq0_id_q   <= '0;
      f_rq1_v_q    <= 1'b0;
      f_rq1_addr_q <= '0;
      f_rq1_left_q <= '0;
      f_rq1_id_q   <= '0;
    end else begin
      for (int unsigned i = 0; i < NumRd; i++) begin
        f_rd_out_q[i] <= f_rd_out_q[i] + CntW'(f_ar_hs && m_axi_arid_o == AxiIdWidth'(i))
                                       - CntW'(f_r_last_hs && m_axi_rid_i == AxiIdWidth'(i));
      end
      f_wq_q      <= f_wq_d;
      f_wq_n_q    <= f_wq_n_d;
      if (w_hs) f_wbeat_q <= m_axi_wlast_o ? 8'd0 : f_wbeat_q + 8'd1;
      f_b_due_q   <= f_b_due_q + CntW'(f_w_last_hs) - CntW'(f_b_hs);
      f_ar_wait_q <= m_axi_arvalid_o && !m_axi_arready_i;
      f_aw_wait_q <= m_axi_awvalid_o && !m_axi_awready_i;
      f_wrq0_v_q    <= f_wrq0_v_d;
      f_wrq0_addr_q <= f_wrq0_addr_d;
      f_wrq0_left_q <= f_wrq0_left_d;
      f_wrq1_v_q    <= f_wrq1_v_d;
      f_wrq1_addr_q <= f_wrq1_addr_d;
      f_wrq1_left_q <= f_wrq1_left_d;
      f_rq0_v_q    <= f_rq0_v_d;
      f_rq0_addr_q <= f_rq0_addr_d;
      f_rq0_left_q <= f_rq0_left_d;
      f_rq0_id_q   <= f_rq0_id_d;
      f_rq1_v_q    <= f_rq1_v_d;
      f_rq1_addr_q <= f_rq1_addr_d;
      f_rq1_left_q <= f_rq1_left_d;
      f_rq1_id_q   <= f_rq1_id_d;
    end
  end

  // combinational: each state of a trace is checked as it is (see vta_fifo.sv)
  always @* begin
    if (rst_ni) begin
      // ---- the legal slave
      if (m_axi_rvalid_i) f_slave_r_asked: assume (f_rid_asked);
      if (m_axi_bvalid_i) f_slave_b_asked: assume (f_b_due_q != '0);
      if (f_ar_hs) f_slave_rd_room: assume (f_rd_sum < FSumW'(FMaxOut));
      if (aw_hs) f_slave_wr_room: assume (32'(f_wq_n_q) + 32'(f_b_due_q) < FMaxOut);
      // vta_fifo's data order (proven by its own jobs, fifo-4 and fifo-8-lutram): the head
      // of the W-length FIFO is the oldest AWLEN it was given and has not given out
      if (wf_valid && f_wq_n_q != '0) f_wlen_fifo_order: assume (wf_len == f_wq_q[0]);

      // ---- AXI4 master rules that need the record
      // W only for a burst whose AW was accepted; WLAST exactly on its AWLEN + 1-th beat
      if (m_axi_wvalid_o) begin
        f_w_announced: assert (f_wq_n_q != '0);
        f_wlast_exact: assert (m_axi_wlast_o == (f_wbeat_q == f_wq_q[0]));
      end
      // beats sent of a burst never exceed its AWLEN + 1
      if (f_wq_n_q != '0) begin
        f_w_beats_le_len: assert (f_wbeat_q <= f_wq_q[0]);
      end else begin
        f_w_no_beats: assert (f_wbeat_q == 8'd0);
      end
      // outstanding: bursts owing W beats (with the AW on the bus) at most WFifoDepth; the
      // engine's counts of reads and writes outstanding exact (no burst counted that the
      // slave does not hold, none forgotten)
      f_w_owed_bound: assert (32'(f_wq_n_q) + 32'(aw_valid_q) <= 32'(WFifoDepth));
      f_rd_out_exact: assert (FSumW'(rd_out_q) == f_rd_sum);
      f_wr_out_exact: assert (32'(wr_out_q) == 32'(f_wq_n_q) + 32'(f_b_due_q));
      // idle: no request left, no burst outstanding, no response due
      if (wr_idle_o) begin
        f_wr_idle_nothing_due: assert (f_wq_n_q == '0 && f_b_due_q == '0 && !f_wrq0_v_q &&
                                       !f_wrq1_v_q);
      end
      if (idle_o) f_idle_nothing_due: assert (f_rd_sum == '0 && !f_rq0_v_q && !f_rq1_v_q);
      // every read request's bursts: contiguous from its first beat, within its beats, all
      if (f_fresh) begin
        f_ar_of_request: assert (f_rq0_v_q && m_axi_araddr_o == f_rq0_addr_q &&
                                 m_axi_arid_o == f_rq0_id_q && f_ar_n <= f_rq0_left_q);
      end
      f_request_room: assert (!f_rq_over);
      if (f_aw_fresh) begin
        f_aw_of_request: assert (f_wrq0_v_q && m_axi_awaddr_o == f_wrq0_addr_q &&
                                 f_aw_n <= f_wrq0_left_q);
      end
      f_wr_request_room: assert (!f_wrq_over);

      // ---- invariants (the engine's registers against the record)
      f_wq_is_fifo: assert (f_wq_n_q == wf_count);
      // a beat that waits with its strobes is the client's, still offered (the client holds
      // it until wr_ready_o, which halt_i keeps low)
      if (w_wait_q && !w_zero_q) f_w_wait_is_clients: assert (wr_valid_i && wf_valid);
      f_wbeat_is_engine: assert (f_wbeat_q == w_beat_q);
      if (f_wrq0_v_q) begin
        f_wrq0_sane: assert (f_wrq0_left_q != '0 && f_wrq0_addr_q[LogSw-1:0] == '0);
      end
      if (f_wrq1_v_q) begin
        f_wrq1_sane: assert (f_wrq1_left_q != '0 && f_wrq1_addr_q[LogSw-1:0] == '0);
      end
      if (f_aw_fresh) begin
        if (f_wrq0_left_q == f_aw_n) begin
          f_wrq_next: assert (f_wrq1_v_q == wr_act_q && (!wr_act_q ||
              (f_wrq1_addr_q == wr_addr_q && f_wrq1_left_q == 33'(wr_left_q))));
        end else begin
          f_wrq_rest: assert (wr_act_q && !f_wrq1_v_q &&
              f_wrq0_addr_q + f_aw_bytes == wr_addr_q && f_wrq0_left_q - f_aw_n == 33'(wr_left_q));
        end
      end else begin
        f_wrq_engine: assert (!f_wrq1_v_q && f_wrq0_v_q == wr_act_q && (!wr_act_q ||
            (f_wrq0_addr_q == wr_addr_q && f_wrq0_left_q == 33'(wr_left_q))));
      end
      if (f_rq0_v_q) begin
        f_rq0_sane: assert (f_rq0_left_q != '0 && 32'(f_rq0_id_q) < 32'(NumRd) &&
                            f_rq0_addr_q[LogSw-1:0] == '0);
      end
      if (f_rq1_v_q) begin
        f_rq1_sane: assert (f_rq1_left_q != '0 && 32'(f_rq1_id_q) < 32'(NumRd) &&
                            f_rq1_addr_q[LogSw-1:0] == '0);
      end
      if (f_fresh) begin
        if (f_rq0_left_q == f_ar_n) begin
          f_rq_next: assert (f_rq1_v_q == rd_act_q && (!rd_act_q ||
              (f_rq1_addr_q == rd_addr_q && f_rq1_left_q == 33'(rd_left_q) &&
               f_rq1_id_q == rd_cli_q)));
        end else begin
          f_rq_rest: assert (rd_act_q && !f_rq1_v_q && f_rq0_addr_q + f_ar_bytes == rd_addr_q &&
              f_rq0_left_q - f_ar_n == 33'(rd_left_q) && f_rq0_id_q == rd_cli_q);
        end
      end else begin
        f_rq_engine: assert (!f_rq1_v_q && f_rq0_v_q == rd_act_q && (!rd_act_q ||
            (f_rq0_addr_q == rd_addr_q && f_rq0_left_q == 33'(rd_left_q) &&
             f_rq0_id_q == rd_cli_q)));
      end
    end
  end

  // covers of the triggers the record's rules need (the port-level ones: the props module)
  always @(posedge clk_i) begin
    if (rst_ni) begin
      f_cover_w_bound: cover (32'(f_wq_n_q) + 32'(aw_valid_q) == 32'(WFifoDepth));
      f_cover_wlast_long: cover (f_w_last_hs && f_wbeat_q >= 8'd2);
      f_cover_wlast_single: cover (f_w_last_hs && f_wbeat_q == 8'd0 && f_wq_n_q >= FWqW'(2));
      f_cover_rd_two_ids: cover (f_rd_out_q[0] != '0 && f_rd_out_q[NumRd - 1] != '0);
      f_cover_r_last_one_of_two: cover (f_r_last_hs && f_rd_sum >= FSumW'(2));
      f_cover_b_after_w: cover (f_b_hs && f_wq_n_q != '0);
      f_cover_request_split: cover (f_fresh && f_ar_n < f_rq0_left_q);
      f_cover_request_queued: cover (f_acc && f_fresh && f_rq0_left_q == f_ar_n);
      f_cover_wr_request_split: cover (f_aw_fresh && f_aw_n < f_wrq0_left_q);
      f_cover_wr_request_queued: cover (f_wacc && f_aw_fresh && f_wrq0_left_q == f_aw_n);
    end
  end
`endif

endmodule : vta_mem_engine
