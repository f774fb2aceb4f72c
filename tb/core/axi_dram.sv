// AXI4 slave DRAM model for the Verilator benches. The storage is C++ (tb/csrc/dram.cpp): a file
// mapped into the simulator process, which the cocotb side maps too, so Python reads and writes
// the whole image in bulk. This module moves one whole bus beat per DPI call.
//
// Behaviour (all knobs are inputs, so a bench changes them between programs without a rebuild):
//   - several reads outstanding (MaxReads), each served after cfg_rd_latency_i cycles from its AR
//     handshake (latencies of outstanding bursts overlap): in order, one burst after the other,
//     or, with cfg_rd_reorder_i, out of order across IDs: every R beat comes from a random ready
//     burst that is the oldest of its ID (AXI4 allows reordering and interleaving across IDs,
//     never within one);
//   - read bandwidth: cfg_rd_gap_i idle cycles after every R beat (0 = one beat per cycle);
//   - back-pressure: each of ARREADY / AWREADY / WREADY and each R beat opportunity is withheld
//     in a cycle with probability cfg_stall_i / 256, from an xorshift generator seeded with
//     cfg_seed_i at reset;
//   - INCR (and FIXED) bursts of any length and size up to the bus width, byte strobes;
//   - a window of bus memory: byte 0 of the DRAM file is bus address cfg_win_base_i (a bench
//     places an image anywhere in the 64-bit bus space with a file of the window's size); beats
//     outside [cfg_win_base_i, cfg_win_base_i + file size) answer DECERR;
//   - a fault window: beats whose bus address lies in [cfg_fault_lo_i, cfg_fault_hi_i) answer
//     SLVERR (reads return zero, writes are dropped);
//   - B responses cfg_wr_latency_i cycles after the last W beat; cfg_wr_err_burst_i = N > 0
//     answers the N-th write burst since reset with SLVERR (its data is written: a pure response
//     error);
//   - stat_busy_o: a burst is open (an AR without its last R beat, an AW without its B), for
//     the bench's check that the core raises done only on a quiet bus;
//   - protocol checks counted in stat_proto_err_o (4 KiB crossing, WLAST mismatch, WRAP burst,
//     size wider than the bus) and reported with $display.
// The DRAM file is mapped at time 0 and again in the first cycle of every reset
// (+dram_file=PATH or VTA_DRAM_FILE).
module axi_dram #(
  parameter int unsigned AddrWidth = 64,
  parameter int unsigned DataWidth = 512,
  parameter int unsigned IdWidth   = 4,
  parameter int unsigned MaxReads  = 16,
  parameter int unsigned MaxWrites = 16
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // knobs
  input  logic [15:0]            cfg_rd_latency_i,
  input  logic [15:0]            cfg_wr_latency_i,
  input  logic [7:0]             cfg_rd_gap_i,
  input  logic [7:0]             cfg_stall_i,
  input  logic [31:0]            cfg_seed_i,
  input  logic [63:0]            cfg_fault_lo_i,
  input  logic [63:0]            cfg_fault_hi_i,
  // knobs only the core bench drives (a top that leaves them open gets the default behaviour)
  input  logic                   cfg_rd_reorder_i = 1'b0,
  input  logic [31:0]            cfg_wr_err_burst_i = 32'd0,
  input  logic [63:0]            cfg_win_base_i = 64'd0,
  // AXI4 slave
  input  logic [IdWidth-1:0]     s_axi_arid_i,
  input  logic [AddrWidth-1:0]   s_axi_araddr_i,
  input  logic [7:0]             s_axi_arlen_i,
  input  logic [2:0]             s_axi_arsize_i,
  input  logic [1:0]             s_axi_arburst_i,
  input  logic                   s_axi_arvalid_i,
  output logic                   s_axi_arready_o,
  output logic [IdWidth-1:0]     s_axi_rid_o,
  output logic [DataWidth-1:0]   s_axi_rdata_o,
  output logic [1:0]             s_axi_rresp_o,
  output logic                   s_axi_rlast_o,
  output logic                   s_axi_rvalid_o,
  input  logic                   s_axi_rready_i,
  input  logic [IdWidth-1:0]     s_axi_awid_i,
  input  logic [AddrWidth-1:0]   s_axi_awaddr_i,
  input  logic [7:0]             s_axi_awlen_i,
  input  logic [2:0]             s_axi_awsize_i,
  input  logic [1:0]             s_axi_awburst_i,
  input  logic                   s_axi_awvalid_i,
  output logic                   s_axi_awready_o,
  input  logic [DataWidth-1:0]   s_axi_wdata_i,
  input  logic [DataWidth/8-1:0] s_axi_wstrb_i,
  input  logic                   s_axi_wlast_i,
  input  logic                   s_axi_wvalid_i,
  output logic                   s_axi_wready_o,
  output logic [IdWidth-1:0]     s_axi_bid_o,
  output logic [1:0]             s_axi_bresp_o,
  output logic                   s_axi_bvalid_o,
  input  logic                   s_axi_bready_i,
  // statistics (since reset)
  output logic [31:0]            stat_rd_beats_o,
  output logic [31:0]            stat_wr_beats_o,
  output logic [31:0]            stat_rd_bursts_o,
  output logic [31:0]            stat_wr_bursts_o,
  output logic [31:0]            stat_max_rd_outstanding_o,
  output logic [31:0]            stat_proto_err_o,
  output logic [31:0]            stat_resp_err_o,
  output logic [63:0]            stat_mapped_bytes_o,
  output logic                   stat_busy_o
);

  localparam int unsigned Bytes = DataWidth / 8;
  localparam int unsigned LogBytes = $clog2(Bytes);
  localparam int unsigned RIdxW = (MaxReads > 1) ? $clog2(MaxReads) : 1;
  localparam int unsigned WIdxW = (MaxWrites > 1) ? $clog2(MaxWrites) : 1;

  localparam logic [1:0] RespOkay = 2'b00;
  localparam logic [1:0] RespSlvErr = 2'b10;
  localparam logic [1:0] RespDecErr = 2'b11;

  // DPI type mapping: string -> const char*, longint -> long long, bit [511:0] -> svBitVecVal*.
  import "DPI-C" function longint dram_map(input string path);
  import "DPI-C" function int dram_read(input longint addr, input int nbytes,
                                        output bit [511:0] data);
  import "DPI-C" function int dram_write(input longint addr, input int nbytes,
                                         input bit [511:0] data, input longint strb);

  initial begin
    if (DataWidth > 512 || DataWidth < 8) $fatal(1, "axi_dram: DataWidth must be 8..512");
  end

  string dram_file;
  longint init_map;
  initial begin
    if (!$value$plusargs("dram_file=%s", dram_file)) dram_file = "";
    init_map = dram_map(dram_file);  // again at every reset (the file may have been resized)
  end

  // ---------------------------------------------------------------------------------------------
  // Random stalls
  logic [31:0] rnd_q;
  logic stall_ar, stall_aw, stall_w, stall_r;
  assign stall_ar = rnd_q[7:0] < cfg_stall_i;
  assign stall_aw = rnd_q[15:8] < cfg_stall_i;
  assign stall_w  = rnd_q[23:16] < cfg_stall_i;
  assign stall_r  = rnd_q[31:24] < cfg_stall_i;

  function automatic logic [31:0] xorshift32(input logic [31:0] x);
    logic [31:0] y;
    y = x ^ (x << 13);
    y = y ^ (y >> 17);
    y = y ^ (y << 5);
    return y;
  endfunction

  function automatic logic [AddrWidth-1:0] beat_addr(input logic [AddrWidth-1:0] base,
                                                     input logic [2:0] size,
                                                     input logic [1:0] burst,
                                                     input logic [7:0] beat);
    logic [AddrWidth-1:0] aligned;
    aligned = (base >> size) << size;
    if (beat == 8'd0 || burst == 2'b00) return base;
    return aligned + (AddrWidth'(beat) << size);
  endfunction

  function automatic logic burst_bad(input logic [AddrWidth-1:0] base, input logic [7:0] len,
                                     input logic [2:0] size, input logic [1:0] burst);
    logic [AddrWidth-1:0] last;
    last = ((base >> size) << size) + ((AddrWidth'(len) + 1) << size) - 1;
    return (burst == 2'b10) || (burst == 2'b11) || (32'(size) > LogBytes) ||
           (burst == 2'b01 && base[AddrWidth-1:12] != last[AddrWidth-1:12]);
  endfunction

  function automatic logic in_fault(input logic [AddrWidth-1:0] a,
                                    input logic [63:0] lo, input logic [63:0] hi);
    return (64'(a) >= lo) && (64'(a) < hi);
  endfunction

  logic [63:0] cycle_q;

  // ---------------------------------------------------------------------------------------------
  // Read path: accepted ARs in slots, each with its accept order (seq) and its next beat.
  logic                 rs_v_q    [MaxReads];
  logic [AddrWidth-1:0] rs_addr_q [MaxReads];
  logic [7:0]           rs_len_q  [MaxReads];
  logic [2:0]           rs_size_q [MaxReads];
  logic [1:0]           rs_burst_q[MaxReads];
  logic [IdWidth-1:0]   rs_id_q   [MaxReads];
  logic [63:0]          rs_t_q    [MaxReads];
  logic [31:0]          rs_seq_q  [MaxReads];
  logic [7:0]           rs_beat_q [MaxReads];
  logic [31:0]          ar_seq_q;
  logic [RIdxW:0]       ar_cnt_q;
  logic [7:0]           rd_gap_q;

  logic                 rvalid_q, rlast_q;
  logic [DataWidth-1:0] rdata_q;
  logic [1:0]           rresp_q;
  logic [IdWidth-1:0]   rid_q;

  assign s_axi_arready_o = (ar_cnt_q < (RIdxW+1)'(MaxReads)) && !stall_ar && rst_ni;
  assign s_axi_rvalid_o  = rvalid_q;
  assign s_axi_rdata_o   = rdata_q;
  assign s_axi_rresp_o   = rresp_q;
  assign s_axi_rlast_o   = rlast_q;
  assign s_axi_rid_o     = rid_q;

  // The slot the next AR goes to, and the slot whose beat goes out next (if one may).
  logic [RIdxW-1:0] free_slot, serve_slot;
  logic             serve;

  always_comb begin
    free_slot  = '0;
    serve_slot = '0;
    serve      = 1'b0;
    for (int i = MaxReads - 1; i >= 0; i--) begin
      if (!rs_v_q[i]) free_slot = RIdxW'(i);
    end
    if (!cfg_rd_reorder_i) begin
      // in order: the oldest burst, once its latency has passed
      for (int i = 0; i < MaxReads; i++) begin
        if (rs_v_q[i] && (!serve || rs_seq_q[i] < rs_seq_q[serve_slot])) begin
          serve      = 1'b1;
          serve_slot = RIdxW'(i);
        end
      end
      serve = serve && (rs_t_q[serve_slot] <= cycle_q);
    end else begin
      // out of order: the first ready burst that is the oldest of its ID, from a random slot on
      for (int k = MaxReads - 1; k >= 0; k--) begin
        automatic int unsigned i = (32'(k) + 32'(rnd_q[8 +: RIdxW])) % MaxReads;
        automatic logic head = rs_v_q[i] && (rs_t_q[i] <= cycle_q);
        for (int j = 0; j < MaxReads; j++) begin
          if (rs_v_q[j] && rs_id_q[j] == rs_id_q[i] && rs_seq_q[j] < rs_seq_q[i]) head = 1'b0;
        end
        if (head) begin
          serve      = 1'b1;
          serve_slot = RIdxW'(i);
        end
      end
    end
    serve = serve && (rd_gap_q == 8'd0) && !stall_r;
  end

  // ---------------------------------------------------------------------------------------------
  // Write path: queue of accepted AWs; W beats go to the head; B responses queued with a time.
  logic [AddrWidth-1:0] aw_addr_q [MaxWrites];
  logic [7:0]           aw_len_q  [MaxWrites];
  logic [2:0]           aw_size_q [MaxWrites];
  logic [1:0]           aw_burst_q[MaxWrites];
  logic [IdWidth-1:0]   aw_id_q   [MaxWrites];
  logic [WIdxW-1:0]     aw_head_q, aw_tail_q;
  logic [WIdxW:0]       aw_cnt_q;
  logic [7:0]           wr_beat_q;
  logic [1:0]           wr_resp_q;

  logic [31:0]          wr_done_q;  // write bursts whose last W beat came
  logic [IdWidth-1:0]   b_id_q  [MaxWrites];
  logic [1:0]           b_resp_q[MaxWrites];
  logic [63:0]          b_t_q   [MaxWrites];
  logic [WIdxW-1:0]     b_head_q, b_tail_q;
  logic [WIdxW:0]       b_cnt_q;
  logic                 bvalid_q;
  logic [IdWidth-1:0]   bid_q;
  logic [1:0]           bresp_q;

  assign s_axi_awready_o = (aw_cnt_q < (WIdxW+1)'(MaxWrites)) && !stall_aw && rst_ni;
  assign s_axi_wready_o  = (aw_cnt_q != '0) && (b_cnt_q < (WIdxW+1)'(MaxWrites)) && !stall_w
                           && rst_ni;
  assign s_axi_bvalid_o  = bvalid_q;
  assign s_axi_bid_o     = bid_q;
  assign s_axi_bresp_o   = bresp_q;

  // statistics
  logic [31:0] rd_beats_q, wr_beats_q, rd_bursts_q, wr_bursts_q, max_out_q, proto_err_q,
               resp_err_q;
  logic [63:0] mapped_q;
  logic        map_done_q;
  assign stat_rd_beats_o  = rd_beats_q;
  assign stat_wr_beats_o  = wr_beats_q;
  assign stat_rd_bursts_o = rd_bursts_q;
  assign stat_wr_bursts_o = wr_bursts_q;
  assign stat_max_rd_outstanding_o = max_out_q;
  assign stat_proto_err_o = proto_err_q;
  assign stat_resp_err_o  = resp_err_q;
  assign stat_mapped_bytes_o = mapped_q;
  assign stat_busy_o = (ar_cnt_q != '0) || rvalid_q || (aw_cnt_q != '0) || (b_cnt_q != '0) ||
                       bvalid_q;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      if (!map_done_q) begin
        mapped_q   <= 64'(dram_map(dram_file));
        map_done_q <= 1'b1;
      end
      cycle_q     <= '0;
      rnd_q       <= (cfg_seed_i == 32'd0) ? 32'h1234_5678 : cfg_seed_i;
      for (int i = 0; i < MaxReads; i++) rs_v_q[i] <= 1'b0;
      ar_seq_q    <= '0;
      ar_cnt_q    <= '0;
      rd_gap_q    <= '0;
      rvalid_q    <= 1'b0;
      rlast_q     <= 1'b0;
      rdata_q     <= '0;
      rresp_q     <= '0;
      rid_q       <= '0;
      aw_head_q   <= '0;
      aw_tail_q   <= '0;
      aw_cnt_q    <= '0;
      wr_beat_q   <= '0;
      wr_resp_q   <= RespOkay;
      wr_done_q   <= '0;
      b_head_q    <= '0;
      b_tail_q    <= '0;
      b_cnt_q     <= '0;
      bvalid_q    <= 1'b0;
      bid_q       <= '0;
      bresp_q     <= '0;
      rd_beats_q  <= '0;
      wr_beats_q  <= '0;
      rd_bursts_q <= '0;
      wr_bursts_q <= '0;
      max_out_q   <= '0;
      proto_err_q <= '0;
      resp_err_q  <= '0;
    end else begin
      automatic logic [RIdxW:0] ar_cnt_d = ar_cnt_q;
      automatic logic [WIdxW:0] aw_cnt_d = aw_cnt_q;
      automatic logic [WIdxW:0] b_cnt_d = b_cnt_q;
      automatic logic [31:0] perr_d = proto_err_q;
      automatic logic [31:0] rerr_d = resp_err_q;
      map_done_q <= 1'b0;
      cycle_q <= cycle_q + 64'd1;
      rnd_q   <= xorshift32(rnd_q);

      // ---- AR accept
      if (s_axi_arvalid_i && s_axi_arready_o) begin
        rs_v_q[free_slot]     <= 1'b1;
        rs_addr_q[free_slot]  <= s_axi_araddr_i;
        rs_len_q[free_slot]   <= s_axi_arlen_i;
        rs_size_q[free_slot]  <= s_axi_arsize_i;
        rs_burst_q[free_slot] <= s_axi_arburst_i;
        rs_id_q[free_slot]    <= s_axi_arid_i;
        rs_t_q[free_slot]     <= cycle_q + 64'(cfg_rd_latency_i);
        rs_seq_q[free_slot]   <= ar_seq_q;
        rs_beat_q[free_slot]  <= '0;
        ar_seq_q <= ar_seq_q + 32'd1;
        ar_cnt_d = ar_cnt_d + 1'b1;
        rd_bursts_q <= rd_bursts_q + 32'd1;
        if (burst_bad(s_axi_araddr_i, s_axi_arlen_i, s_axi_arsize_i, s_axi_arburst_i)) begin
          perr_d = perr_d + 32'd1;
          $display("axi_dram: bad read burst addr=%h len=%0d size=%0d burst=%0d",
                   s_axi_araddr_i, s_axi_arlen_i, s_axi_arsize_i, s_axi_arburst_i);
        end
      end

      // ---- R beats
      if (rd_gap_q != 8'd0) rd_gap_q <= rd_gap_q - 8'd1;
      if (!rvalid_q || s_axi_rready_i) begin
        if (serve) begin
          automatic logic [AddrWidth-1:0] a = beat_addr(rs_addr_q[serve_slot],
                                                        rs_size_q[serve_slot],
                                                        rs_burst_q[serve_slot],
                                                        rs_beat_q[serve_slot]);
          automatic logic last = (rs_beat_q[serve_slot] == rs_len_q[serve_slot]);
          automatic bit [511:0] line = '0;
          automatic int ok = 0;
          if (in_fault(a, cfg_fault_lo_i, cfg_fault_hi_i)) begin
            rdata_q <= '0;
            rresp_q <= RespSlvErr;
            rerr_d = rerr_d + 32'd1;
          end else begin
            ok = dram_read(64'(a) - cfg_win_base_i, 32'(Bytes), line);
            rdata_q <= line[DataWidth-1:0];
            rresp_q <= (ok != 0) ? RespOkay : RespDecErr;
            if (ok == 0) rerr_d = rerr_d + 32'd1;
          end
          rvalid_q <= 1'b1;
          rlast_q  <= last;
          rid_q    <= rs_id_q[serve_slot];
          rd_gap_q <= cfg_rd_gap_i;
          rd_beats_q <= rd_beats_q + 32'd1;
          if (last) begin
            rs_v_q[serve_slot] <= 1'b0;
            ar_cnt_d = ar_cnt_d - 1'b1;
          end else begin
            rs_beat_q[serve_slot] <= rs_beat_q[serve_slot] + 8'd1;
          end
        end else begin
          rvalid_q <= 1'b0;
        end
      end
      ar_cnt_q <= ar_cnt_d;
      if (32'(ar_cnt_d) > max_out_q) max_out_q <= 32'(ar_cnt_d);

      // ---- AW accept
      if (s_axi_awvalid_i && s_axi_awready_o) begin
        aw_addr_q[aw_tail_q]  <= s_axi_awaddr_i;
        aw_len_q[aw_tail_q]   <= s_axi_awlen_i;
        aw_size_q[aw_tail_q]  <= s_axi_awsize_i;
        aw_burst_q[aw_tail_q] <= s_axi_awburst_i;
        aw_id_q[aw_tail_q]    <= s_axi_awid_i;
        aw_tail_q <= (aw_tail_q == WIdxW'(MaxWrites - 1)) ? '0 : aw_tail_q + 1'b1;
        aw_cnt_d = aw_cnt_d + 1'b1;
        wr_bursts_q <= wr_bursts_q + 32'd1;
        if (burst_bad(s_axi_awaddr_i, s_axi_awlen_i, s_axi_awsize_i, s_axi_awburst_i)) begin
          perr_d = perr_d + 32'd1;
          $display("axi_dram: bad write burst addr=%h len=%0d size=%0d burst=%0d",
                   s_axi_awaddr_i, s_axi_awlen_i, s_axi_awsize_i, s_axi_awburst_i);
        end
      end

      // ---- W beats (to the head AW)
      if (s_axi_wvalid_i && s_axi_wready_o) begin
        automatic logic [AddrWidth-1:0] a = beat_addr(aw_addr_q[aw_head_q], aw_size_q[aw_head_q],
                                                      aw_burst_q[aw_head_q], wr_beat_q);
        automatic logic last = (wr_beat_q == aw_len_q[aw_head_q]);
        automatic logic [1:0] resp = RespOkay;
        automatic bit [511:0] line = '0;
        automatic int ok = 0;
        if (in_fault(a, cfg_fault_lo_i, cfg_fault_hi_i)) begin
          resp = RespSlvErr;
        end else begin
          line[DataWidth-1:0] = s_axi_wdata_i;
          ok = dram_write(64'(a) - cfg_win_base_i, 32'(Bytes), line, 64'(s_axi_wstrb_i));
          if (ok == 0) resp = RespDecErr;
        end
        if (resp != RespOkay) rerr_d = rerr_d + 32'd1;
        if (s_axi_wlast_i != last) begin
          perr_d = perr_d + 32'd1;
          $display("axi_dram: WLAST=%0d on beat %0d of a %0d-beat burst", s_axi_wlast_i,
                   wr_beat_q, aw_len_q[aw_head_q] + 8'd1);
        end
        if (wr_resp_q > resp) resp = wr_resp_q;  // the worst response of the burst so far
        wr_beats_q <= wr_beats_q + 32'd1;
        if (last && cfg_wr_err_burst_i != 32'd0 && wr_done_q + 32'd1 == cfg_wr_err_burst_i) begin
          resp = RespSlvErr;  // the injected response error
          rerr_d = rerr_d + 32'd1;
        end
        if (last) begin
          wr_done_q <= wr_done_q + 32'd1;
          b_id_q[b_tail_q]   <= aw_id_q[aw_head_q];
          b_resp_q[b_tail_q] <= resp;
          b_t_q[b_tail_q]    <= cycle_q + 64'(cfg_wr_latency_i);
          b_tail_q <= (b_tail_q == WIdxW'(MaxWrites - 1)) ? '0 : b_tail_q + 1'b1;
          b_cnt_d = b_cnt_d + 1'b1;
          aw_head_q <= (aw_head_q == WIdxW'(MaxWrites - 1)) ? '0 : aw_head_q + 1'b1;
          aw_cnt_d = aw_cnt_d - 1'b1;
          wr_beat_q <= '0;
          wr_resp_q <= RespOkay;
        end else begin
          wr_beat_q <= wr_beat_q + 8'd1;
          wr_resp_q <= resp;
        end
      end
      aw_cnt_q <= aw_cnt_d;

      // ---- B responses
      if (!bvalid_q || s_axi_bready_i) begin
        if (b_cnt_q != '0 && b_t_q[b_head_q] <= cycle_q) begin
          bvalid_q <= 1'b1;
          bid_q    <= b_id_q[b_head_q];
          bresp_q  <= b_resp_q[b_head_q];
          b_head_q <= (b_head_q == WIdxW'(MaxWrites - 1)) ? '0 : b_head_q + 1'b1;
          b_cnt_d = b_cnt_d - 1'b1;
        end else begin
          bvalid_q <= 1'b0;
        end
      end
      b_cnt_q <= b_cnt_d;
      proto_err_q <= perr_d;
      resp_err_q  <= rerr_d;
    end
  end

endmodule : axi_dram
