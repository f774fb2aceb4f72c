// Properties of the BAR0 register block (hdl/gen/vta_regs.sv, peakrdl-regblock, as generated)
// at its ports, for any AXI4-Lite master and any hardware side (hwif_i free every cycle).
// Assumptions are the master's AXI rules only: VALIDs low in reset, AWVALID / WVALID / ARVALID
// held until READY with the payload stable; BREADY and RREADY free. One reset, at the start.
//
// A scoreboard follows every request: the addresses and data of the outstanding writes and
// reads, in order (AXI4-Lite answers in order on each channel). When the slave applies a write
// or samples a read is not visible at the ports (somewhere between the request's handshakes and
// its response), so the reference state moves at each write's B handshake, and a read is
// compared only where nothing that could change its answer was in flight over its window:
//   - rw register A (the solver picks it): S follows the writes to A with their strobes; a read
//     of A answers S when no write to A was outstanding from its AR to its R;
//   - a hardware-driven read-only register H (picked too): a read answers its hardware value
//     when that value held over the window, whatever was written to H meanwhile;
//   - IRQ_STATUS: a set pulse sets a bit (sticky), a write of 1 clears it, a set in the cycle of
//     the clear wins; a pulse while a clear is in flight leaves the bit unknown until the next
//     pulse or clear; the interrupt output is |(IRQ_STATUS & IRQ_ENABLE) whenever both are known.
// The register map comes in as parameters from the generated view (vtabench.spec.contracts.regs,
// vtabench/verify/formal.py: regmap_params), so the properties follow regmap.rdl.
module vta_regs_props #(
  parameter bit          Data          = 1'b0, // the answers' values, else the protocol
  parameter logic [63:0] MappedWords   = '0,  // word indices of every register
  parameter logic [63:0] RwWords       = '0,  // ... of the read-write registers
  parameter logic [63:0] RoWords       = '0,  // ... of the hardware-driven read-only ones
  parameter logic [31:0] VersionValue  = '0,  // VERSION's value (its fields' resets)
  parameter logic [31:0] IrqEnableBits = '0,  // IRQ_ENABLE's defined bits
  parameter int unsigned AddrCtrl = 0, AddrCycles = 0, AddrInsnCount = 0, AddrInsnBaseLo = 0,
  parameter int unsigned AddrInsnBaseHi = 0, AddrAccWrites = 0, AddrVersion = 0,
  parameter int unsigned AddrConfigId = 0, AddrStatus = 0, AddrErrorCode = 0, AddrErrorInsn = 0,
  parameter int unsigned AddrIrqEnable = 0, AddrIrqStatus = 0, AddrDramBaseLo = 0,
  parameter int unsigned AddrDramBaseHi = 0, AddrDramSizeLo = 0, AddrDramSizeHi = 0,
  parameter int unsigned AddrLoadBusyCycles = 0, AddrComputeBusyCycles = 0,
  parameter int unsigned AddrStoreBusyCycles = 0, AddrLoadInsns = 0, AddrComputeInsns = 0,
  parameter int unsigned AddrStoreInsns = 0,
  // the stored words: read-write, no hardware port (proven through RwWords)
  parameter int unsigned AddrUopBaseLo = 0, AddrUopBaseHi = 0, AddrInpBaseLo = 0,
  parameter int unsigned AddrInpBaseHi = 0, AddrWgtBaseLo = 0, AddrWgtBaseHi = 0,
  parameter int unsigned AddrAccBaseLo = 0, AddrAccBaseHi = 0, AddrOutBaseLo = 0,
  parameter int unsigned AddrOutBaseHi = 0, AddrScratch = 0,
  parameter int unsigned CtrlLaunchLsb = 0, CtrlFinishLsb = 0,
  parameter int unsigned StatusBusyLsb = 0, StatusDoneLsb = 0, StatusErrorLsb = 0,
  parameter int unsigned StatusIrqLsb = 0,
  parameter int unsigned IrqFinishLsb = 0, IrqErrorLsb = 0,  // IRQ_STATUS (and IRQ_ENABLE)
  localparam int unsigned Depth = 4,  // scoreboard entries: more than the slave can take
  localparam int unsigned Cw    = 3
) (
  input logic             clk_i,
  input logic             rst_ni,
  input logic             awvalid_i,
  input logic [11:0]      awaddr_i,
  input logic [2:0]       awprot_i,
  input logic             wvalid_i,
  input logic [31:0]      wdata_i,
  input logic [3:0]       wstrb_i,
  input logic             bready_i,
  input logic             arvalid_i,
  input logic [11:0]      araddr_i,
  input logic [2:0]       arprot_i,
  input logic             rready_i,
  input vta_regs_pkg::vta_regs__in_t hwif_i
);
  logic        awready, wready, bvalid, arready, rvalid;
  logic [1:0]  bresp, rresp;
  logic [31:0] rdata;
  vta_regs_pkg::vta_regs__out_t hwif_o;

  vta_regs dut (
    .clk(clk_i), .arst_n(rst_ni),
    .s_axil_awready(awready), .s_axil_awvalid(awvalid_i), .s_axil_awaddr(awaddr_i),
    .s_axil_awprot(awprot_i), .s_axil_wready(wready), .s_axil_wvalid(wvalid_i),
    .s_axil_wdata(wdata_i), .s_axil_wstrb(wstrb_i), .s_axil_bready(bready_i),
    .s_axil_bvalid(bvalid), .s_axil_bresp(bresp), .s_axil_arready(arready),
    .s_axil_arvalid(arvalid_i), .s_axil_araddr(araddr_i), .s_axil_arprot(arprot_i),
    .s_axil_rready(rready_i), .s_axil_rvalid(rvalid), .s_axil_rdata(rdata),
    .s_axil_rresp(rresp), .hwif_in(hwif_i), .hwif_out(hwif_o)
  );

  localparam logic [1:0] Okay = 2'b00, SlvErr = 2'b10;
  localparam int unsigned IrqBits = 2;  // IRQ_STATUS: FINISH, ERROR

  function automatic logic in_words(logic [63:0] words, logic [9:0] idx);
    in_words = idx < 10'd64 && words[idx[5:0]];
  endfunction
  function automatic logic [9:0] word(int unsigned byte_addr);
    word = 10'(byte_addr / 4);
  endfunction
  function automatic int unsigned irq_lsb(int unsigned k);
    irq_lsb = (k == 0) ? IrqFinishLsb : IrqErrorLsb;
  endfunction
  function automatic logic [31:0] strobe_mask(logic [3:0] strb);
    strobe_mask = {{8{strb[3]}}, {8{strb[2]}}, {8{strb[1]}}, {8{strb[0]}}};
  endfunction

  // ---------------------------------------------------------------------------------------------
  // The master: AXI4-Lite rules (the only assumptions)
  logic f_past = 1'b0;
  always @(posedge clk_i) f_past <= 1'b1;
  initial assume (!rst_ni);
  always @* begin
    if (f_past) assume (rst_ni);
    if (!rst_ni) assume (!awvalid_i && !wvalid_i && !arvalid_i);
  end
  always @(posedge clk_i) begin
    if (f_past && $past(rst_ni)) begin
      if ($past(awvalid_i && !awready)) begin
        assume (awvalid_i && awaddr_i == $past(awaddr_i) && awprot_i == $past(awprot_i));
      end
      if ($past(wvalid_i && !wready)) begin
        assume (wvalid_i && wdata_i == $past(wdata_i) && wstrb_i == $past(wstrb_i));
      end
      if ($past(arvalid_i && !arready)) begin
        assume (arvalid_i && araddr_i == $past(araddr_i) && arprot_i == $past(arprot_i));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // The solver's picks: a read-write register A and a hardware-driven read-only register H
  (* anyconst *) logic [9:0] pick_rw;
  (* anyconst *) logic [9:0] pick_ro;
  always @* begin
    assume (in_words(RwWords, pick_rw));
    assume (in_words(RoWords, pick_ro) || pick_ro == word(AddrCtrl));
  end

  // H's value as the hardware drives it now (CTRL: FINISH; LAUNCH reads 0)
  logic [31:0] ro_value;
  always_comb begin
    ro_value = '0;
    if (pick_ro == word(AddrCtrl))                   ro_value[CtrlFinishLsb] = hwif_i.CTRL.FINISH.next;
    else if (pick_ro == word(AddrCycles))            ro_value = hwif_i.CYCLES.VALUE.next;
    else if (pick_ro == word(AddrAccWrites))         ro_value = hwif_i.ACC_WRITES.VALUE.next;
    else if (pick_ro == word(AddrConfigId))          ro_value = hwif_i.CONFIG_ID.VALUE.next;
    else if (pick_ro == word(AddrStatus)) begin
      ro_value[StatusBusyLsb]  = hwif_i.STATUS.BUSY.next;
      ro_value[StatusDoneLsb]  = hwif_i.STATUS.DONE.next;
      ro_value[StatusErrorLsb] = hwif_i.STATUS.ERROR.next;
      ro_value[StatusIrqLsb]   = hwif_i.STATUS.IRQ.next;
    end
    else if (pick_ro == word(AddrErrorCode))         ro_value[7:0] = hwif_i.ERROR_CODE.VALUE.next;
    else if (pick_ro == word(AddrErrorInsn))         ro_value = hwif_i.ERROR_INSN.VALUE.next;
    else if (pick_ro == word(AddrLoadBusyCycles))    ro_value = hwif_i.LOAD_BUSY_CYCLES.VALUE.next;
    else if (pick_ro == word(AddrComputeBusyCycles)) ro_value = hwif_i.COMPUTE_BUSY_CYCLES.VALUE.next;
    else if (pick_ro == word(AddrStoreBusyCycles))   ro_value = hwif_i.STORE_BUSY_CYCLES.VALUE.next;
    else if (pick_ro == word(AddrLoadInsns))         ro_value = hwif_i.LOAD_INSNS.VALUE.next;
    else if (pick_ro == word(AddrComputeInsns))      ro_value = hwif_i.COMPUTE_INSNS.VALUE.next;
    else if (pick_ro == word(AddrStoreInsns))        ro_value = hwif_i.STORE_INSNS.VALUE.next;
  end
  logic [31:0] ro_value_q;  // ... in the cycle before
  always @(posedge clk_i) ro_value_q <= ro_value;
  // every read-only register of the map has its hardware value above (a new one: add it)
  logic ro_known;
  assign ro_known = pick_ro == word(AddrCtrl) || pick_ro == word(AddrCycles)
                    || pick_ro == word(AddrAccWrites) || pick_ro == word(AddrConfigId)
                    || pick_ro == word(AddrStatus) || pick_ro == word(AddrErrorCode)
                    || pick_ro == word(AddrErrorInsn) || pick_ro == word(AddrLoadBusyCycles)
                    || pick_ro == word(AddrComputeBusyCycles)
                    || pick_ro == word(AddrStoreBusyCycles) || pick_ro == word(AddrLoadInsns)
                    || pick_ro == word(AddrComputeInsns) || pick_ro == word(AddrStoreInsns);

  // A's value as the core sees it (hwif_o), for the registers the core reads
  logic        rw_has_port;
  logic [31:0] rw_port;
  always_comb begin
    rw_has_port = 1'b1;
    rw_port = '0;
    if (pick_rw == word(AddrInsnCount))       rw_port = hwif_o.INSN_COUNT.VALUE.value;
    else if (pick_rw == word(AddrInsnBaseLo)) rw_port = hwif_o.INSN_BASE_LO.VALUE.value;
    else if (pick_rw == word(AddrInsnBaseHi)) rw_port = hwif_o.INSN_BASE_HI.VALUE.value;
    else if (pick_rw == word(AddrDramBaseLo)) rw_port = hwif_o.DRAM_BASE_LO.VALUE.value;
    else if (pick_rw == word(AddrDramBaseHi)) rw_port = hwif_o.DRAM_BASE_HI.VALUE.value;
    else if (pick_rw == word(AddrDramSizeLo)) rw_port = hwif_o.DRAM_SIZE_LO.VALUE.value;
    else if (pick_rw == word(AddrDramSizeHi)) rw_port = hwif_o.DRAM_SIZE_HI.VALUE.value;
    else                                      rw_has_port = 1'b0;
  end
  logic [31:0] rw_bits;  // A's defined bits
  assign rw_bits = (pick_rw == word(AddrIrqEnable)) ? IrqEnableBits : '1;

  // ---------------------------------------------------------------------------------------------
  // Scoreboard: outstanding writes (address, data) and reads, oldest at the read pointer
  logic aw_hs, w_hs, b_hs, ar_hs, r_hs;
  assign aw_hs = awvalid_i && awready;
  assign w_hs  = wvalid_i && wready;
  assign b_hs  = bvalid && bready_i;
  assign ar_hs = arvalid_i && arready;
  assign r_hs  = rvalid && rready_i;

  logic [Depth-1:0][9:0]  aw_addr_q, ar_addr_q;
  logic [Depth-1:0][31:0] w_data_q;
  logic [Depth-1:0][3:0]  w_strb_q;
  logic [Depth-1:0][IrqBits-1:0] aw_set_seen_q;  // IRQ set pulses while the write was in flight
  logic [Depth-1:0] ar_rw_dirty_q, ar_ro_dirty_q, ar_irq_dirty_q;  // answer not determined
  logic [1:0]    aw_wp_q = '0, aw_rp_q = '0, w_wp_q = '0, ar_wp_q = '0, ar_rp_q = '0;
  logic [Cw-1:0] aw_n_q = '0, w_n_q = '0, ar_n_q = '0;

  function automatic logic live(logic [1:0] rp, logic [Cw-1:0] n, int unsigned i);
    live = Cw'(2'(i - rp)) < n;
  endfunction

  // the write and the read the current response answers
  logic [9:0]  b_addr, r_addr;
  logic [31:0] b_data, b_mask;
  assign b_addr = aw_addr_q[aw_rp_q];
  assign b_data = w_data_q[aw_rp_q];
  assign b_mask = strobe_mask(w_strb_q[aw_rp_q]);
  assign r_addr = ar_addr_q[ar_rp_q];

  // in flight (address taken, no response yet): a write to A, to IRQ_STATUS, to IRQ_ENABLE
  logic wr_rw_busy, wr_irq_busy, wr_en_busy;
  always_comb begin
    wr_rw_busy = 1'b0;
    wr_irq_busy = 1'b0;
    wr_en_busy = 1'b0;
    for (int unsigned i = 0; i < Depth; i++) begin
      if (live(aw_rp_q, aw_n_q, i)) begin
        if (aw_addr_q[i] == pick_rw) wr_rw_busy = 1'b1;
        if (aw_addr_q[i] == word(AddrIrqStatus)) wr_irq_busy = 1'b1;
        if (aw_addr_q[i] == word(AddrIrqEnable)) wr_en_busy = 1'b1;
      end
    end
  end

  // reference state: A's value, IRQ_ENABLE, IRQ_STATUS (and which of its bits are unknown)
  logic [31:0]        rw_ref_q = '0, en_ref_q = '0;
  logic [IrqBits-1:0] irq_ref_q = '0, irq_unknown_q = '0;
  logic [IrqBits-1:0] irq_set;
  logic [31:0]        irq_lsbs;  // IRQ_STATUS read as its bits
  assign irq_set = {hwif_i.IRQ_STATUS.ERROR.next, hwif_i.IRQ_STATUS.FINISH.next};
  always_comb begin
    irq_lsbs = '0;
    irq_lsbs[IrqFinishLsb] = irq_ref_q[0];
    irq_lsbs[IrqErrorLsb]  = irq_ref_q[1];
  end
  logic [IrqBits-1:0] en_bits;
  assign en_bits = {en_ref_q[IrqErrorLsb], en_ref_q[IrqFinishLsb]};
  logic irq_known;  // IRQ_STATUS and IRQ_ENABLE as the reference says
  assign irq_known = !wr_irq_busy && irq_unknown_q == '0 && !wr_en_busy;

  always @(posedge clk_i) begin
    if (rst_ni) begin
      // writes
      if (aw_hs) begin
        aw_addr_q[aw_wp_q] <= awaddr_i[11:2];
        aw_set_seen_q[aw_wp_q] <= '0;
        aw_wp_q <= aw_wp_q + 2'd1;
      end
      if (w_hs) begin
        w_data_q[w_wp_q] <= wdata_i;
        w_strb_q[w_wp_q] <= wstrb_i;
        w_wp_q <= w_wp_q + 2'd1;
      end
      for (int unsigned i = 0; i < Depth; i++) begin
        if (live(aw_rp_q, aw_n_q, i)) aw_set_seen_q[i] <= aw_set_seen_q[i] | irq_set;
      end
      aw_n_q <= aw_n_q + Cw'(aw_hs) - Cw'(b_hs);
      w_n_q  <= w_n_q + Cw'(w_hs) - Cw'(b_hs);
      if (b_hs) aw_rp_q <= aw_rp_q + 2'd1;
      // reads: dirty while anything that changes the answer is in flight or moves
      if (ar_hs) begin
        ar_addr_q[ar_wp_q] <= araddr_i[11:2];
        ar_rw_dirty_q[ar_wp_q] <= wr_rw_busy;
        ar_ro_dirty_q[ar_wp_q] <= 1'b0;
        ar_irq_dirty_q[ar_wp_q] <= !irq_known;
        ar_wp_q <= ar_wp_q + 2'd1;
      end
      for (int unsigned i = 0; i < Depth; i++) begin
        if (live(ar_rp_q, ar_n_q, i)) begin
          if (wr_rw_busy) ar_rw_dirty_q[i] <= 1'b1;
          if (ro_value != ro_value_q) ar_ro_dirty_q[i] <= 1'b1;
          if (!irq_known || irq_set != '0) ar_irq_dirty_q[i] <= 1'b1;
        end
      end
      ar_n_q <= ar_n_q + Cw'(ar_hs) - Cw'(r_hs);
      if (r_hs) ar_rp_q <= ar_rp_q + 2'd1;
      // the reference moves at each write's response (a mapped register: OKAY)
      if (b_hs && bresp == Okay) begin
        if (b_addr == pick_rw) rw_ref_q <= (rw_ref_q & ~b_mask) | (b_data & b_mask);
        if (b_addr == word(AddrIrqEnable)) en_ref_q <= (en_ref_q & ~b_mask) | (b_data & b_mask);
      end
      for (int unsigned k = 0; k < IrqBits; k++) begin
        if (irq_set[k]) begin
          irq_ref_q[k] <= 1'b1;      // after any clear applied before or in this cycle
          irq_unknown_q[k] <= 1'b0;
        end else if (b_hs && b_addr == word(AddrIrqStatus) && b_data[irq_lsb(k)] && b_mask[irq_lsb(k)]) begin
          if (aw_set_seen_q[aw_rp_q][k]) irq_unknown_q[k] <= 1'b1;  // set before or after?
          else irq_ref_q[k] <= 1'b0;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Properties
  logic launch_pending, ctrl_pending;  // a write of 1 to LAUNCH / any write to CTRL in flight
  always_comb begin
    launch_pending = 1'b0;
    ctrl_pending = 1'b0;
    for (int unsigned i = 0; i < Depth; i++) begin
      if (live(aw_rp_q, aw_n_q, i) && live(aw_rp_q, w_n_q, i)
          && aw_addr_q[i] == word(AddrCtrl)) begin
        ctrl_pending = 1'b1;
        if (w_data_q[i][CtrlLaunchLsb] && w_strb_q[i][CtrlLaunchLsb / 8]) launch_pending = 1'b1;
      end
    end
  end
  logic launch_q = 1'b0;
  always @(posedge clk_i) launch_q <= hwif_o.CTRL.LAUNCH.value;

  // H held its value over the head read's window, this cycle included
  logic ro_clean;
  assign ro_clean = !ar_ro_dirty_q[ar_rp_q] && ro_value == ro_value_q;
  logic ro_written_q = 1'b0;  // a write to H was answered
  always @(posedge clk_i) if (rst_ni && b_hs && b_addr == pick_ro) ro_written_q <= 1'b1;

  logic [2:0] stuck_q = '0;  // cycles the slave has work and offers no response
  logic       slave_busy;
  assign slave_busy = ar_n_q != '0 || (aw_n_q != '0 && w_n_q != '0)
                      || (arvalid_i && !arready)
                      || (awvalid_i && !awready && aw_n_q <= w_n_q)
                      || (wvalid_i && !wready && w_n_q <= aw_n_q);
  always @(posedge clk_i) begin
    if (rst_ni) stuck_q <= (slave_busy && !bvalid && !rvalid) ? stuck_q + 3'd1 : '0;
  end

  if (!Data) begin : g_protocol
    always @(posedge clk_i) begin
      if (rst_ni) begin
        // handshakes: one response per request, held until taken with its payload stable
        outstanding_bounded: assert (aw_n_q < Cw'(Depth) && w_n_q < Cw'(Depth)
                                     && ar_n_q < Cw'(Depth));
        b_only_for_a_write: assert (!bvalid || (aw_n_q != '0 && w_n_q != '0));
        r_only_for_a_read: assert (!rvalid || ar_n_q != '0);
        never_stuck: assert (stuck_q < 3'd2);
        if (f_past && $past(rst_ni)) begin
          if ($past(bvalid && !bready_i)) begin
            b_held: assert (bvalid && bresp == $past(bresp));
          end
          if ($past(rvalid && !rready_i)) begin
            r_held: assert (rvalid && rresp == $past(rresp) && rdata == $past(rdata));
          end
        end
        // responses: SLVERR exactly for an offset that names no register
        if (bvalid) begin
          write_resp: assert (bresp == (in_words(MappedWords, b_addr) ? Okay : SlvErr));
        end
        if (rvalid) begin
          read_resp: assert (rresp == (in_words(MappedWords, r_addr) ? Okay : SlvErr));
        end
        // LAUNCH pulses only for a write of 1 to it still in flight; peakrdl-regblock's
        // singlepulse keeps the pulse one more cycle when another write to CTRL lands on it with
        // LAUNCH's byte strobe off (found here: docs/formal.md)
        if (hwif_o.CTRL.LAUNCH.value) begin
          launch_from_write: assert (launch_pending || (launch_q && ctrl_pending));
        end
      end
      if (rst_ni && f_past && $past(rst_ni)) begin
        cover_b_stalled: cover ($past(bvalid && !bready_i) && bvalid);
        cover_r_stalled: cover ($past(rvalid && !rready_i) && rvalid);
        cover_three_reads_out: cover (ar_n_q == 3'd3);
        cover_three_writes_out: cover (aw_n_q == 3'd3);
        cover_write_slverr: cover (bvalid && bresp == SlvErr);
        cover_read_slverr: cover (rvalid && rresp == SlvErr);
        cover_stuck_one: cover (stuck_q == 3'd1);
        cover_launch: cover (hwif_o.CTRL.LAUNCH.value);
        cover_launch_stretched: cover (hwif_o.CTRL.LAUNCH.value && launch_q && !launch_pending);
      end
    end
  end else begin : g_data
    always @(posedge clk_i) begin
      if (rst_ni) begin
        if (rvalid) begin
          if (r_addr == pick_rw && !ar_rw_dirty_q[ar_rp_q]) begin
            read_after_write: assert (rdata == (rw_ref_q & rw_bits));
          end
          if (r_addr == pick_ro && ro_clean) begin
            read_only_is_hardware: assert (rdata == ro_value);
          end
          if (r_addr == word(AddrVersion)) begin
            read_constant: assert (rdata == VersionValue);
          end
          if (r_addr == word(AddrIrqStatus) && !ar_irq_dirty_q[ar_rp_q]) begin
            irq_status_read: assert (rdata == irq_lsbs);
          end
        end
        ro_in_map: assert (ro_known);
        // what the core sees of A is what the host wrote
        if (rw_has_port && !wr_rw_busy) begin
          core_sees_write: assert (rw_port == rw_ref_q);
        end
        // the interrupt: |(IRQ_STATUS & IRQ_ENABLE)
        if (irq_known) begin
          irq_output: assert (hwif_o.IRQ_STATUS.intr == |(irq_ref_q & en_bits));
        end
      end
      if (rst_ni && f_past && $past(rst_ni)) begin
        cover_read_after_write: cover (rvalid && r_addr == pick_rw && !ar_rw_dirty_q[ar_rp_q]
                                       && rdata != '0 && rdata != '1);
        cover_read_after_partial_write: cover (b_hs && b_addr == pick_rw && b_mask != '1
                                               && b_mask != '0 && rw_ref_q != '0);
        cover_read_only_after_write: cover (rvalid && r_addr == pick_ro && ro_clean
                                            && rdata != '0 && ro_written_q);
        cover_read_constant: cover (rvalid && r_addr == word(AddrVersion));
        cover_irq_raised: cover (irq_known && hwif_o.IRQ_STATUS.intr);
        cover_irq_cleared: cover (irq_known && $past(irq_ref_q[0]) && !irq_ref_q[0]);
        cover_irq_set_wins: cover (irq_known && $past(b_hs && b_addr == word(AddrIrqStatus)
                                                      && irq_set[0]) && irq_ref_q[0]);
        cover_irq_status_read: cover (rvalid && r_addr == word(AddrIrqStatus)
                                      && !ar_irq_dirty_q[ar_rp_q] && rdata != '0);
        cover_core_sees_write: cover (rw_has_port && !wr_rw_busy && rw_port != '0);
      end
    end
  end
endmodule : vta_regs_props
