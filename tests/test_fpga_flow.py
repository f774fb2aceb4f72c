"""The FPGA flow's smoke test (the full flow is `make fpga`, minutes to an hour: docs/fpga.md):
synth_ecp5 of one small module in seconds, and the parsing of nextpnr's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtabench.cli import main
from vtabench.report.fpga_map import draw_routing_map, routing_map_figure, tile_use
from vtabench.rtl.fpga.ecp5 import (NEXTPNR_PROGRESS, critical_path_line, ecp5_line,
                                    parse_nextpnr_report, path_sources, summarize_path,
                                    synth_ecp5)
from vtabench.rtl.fpga.estimate import deepest_paths
from vtabench.rtl.fpga.tools import FlowError, echo_progress
from vtabench.rtl.verilator import HDL_DIR


def test_synth_ecp5_maps_a_module_to_ecp5_cells(tmp_path):
    """The smoke of the flow: Yosys synth_ecp5 of the token queue (a counter) in seconds."""
    res = synth_ecp5("default", tmp_path, top="vta_token_queue",
                     files=[HDL_DIR / "vta_token_queue.sv"], params={"Depth": 256})
    cells = res["cells"]
    assert cells.get("TRELLIS_FF", 0) == 9, cells      # the 9-bit count of 0..256 tokens
    assert cells.get("LUT4", 0) > 0 and not any(c.startswith("$") for c in cells), cells


def test_deepest_paths_of_a_counter_run_through_its_carry_chain(tmp_path):
    """The netlist depth estimate (what limits Fmax before a routed report exists): the token
    queue's deepest path is its count's increment / decrement, a carry chain between flip-flops."""
    res = synth_ecp5("default", tmp_path, top="vta_token_queue",
                     files=[HDL_DIR / "vta_token_queue.sv"], params={"Depth": 256})
    paths = deepest_paths(Path(res["netlist"]), top="vta_token_queue")
    assert paths and [p["ns"] for p in paths] == sorted((p["ns"] for p in paths), reverse=True)
    top = paths[0]
    assert top["cells"].get("CCU2C", 0) >= 4 and top["levels"] >= 5, top   # 9-bit count
    assert top["end_type"] == "TRELLIS_FF", top
    assert 2.0 < top["ns"] < 20.0, top
    assert main(["fpga", "--depth", str(tmp_path / "missing.json")]) == 2


@pytest.mark.parametrize("width,depth", [(160, 512)])
def test_command_queue_fifo_maps_to_block_ram(tmp_path, width, depth):
    """A command queue (512 x {index, instruction}) is block RAM on ECP5, not LUT RAM: the FIFO
    reads its storage through a register (vta_fifo.sv)."""
    res = synth_ecp5("default", tmp_path, top="vta_fifo", files=[HDL_DIR / "vta_fifo.sv"],
                     params={"Width": width, "Depth": depth})
    cells = res["cells"]
    # 512 x 160 bits: five 512 x 36 DP16KD blocks side by side
    assert cells.get("DP16KD", 0) == -(-width // 36), cells
    assert cells.get("TRELLIS_DPR16X4", 0) == 0, cells


def test_report_parsing_takes_the_slowest_clock_and_the_critical_path():
    rep = {
        "fmax": {"clk_a": {"achieved": 123.4, "constraint": 100.0},
                 "clk_b": {"achieved": 97.25, "constraint": 100.0}},
        "utilization": {"TRELLIS_COMB": {"used": 900, "available": 83640},
                        "TRELLIS_FF": {"used": 800, "available": 83640},
                        "MULT18X18D": {"used": 64, "available": 156},
                        "DP16KD": {"used": 150, "available": 208}},
        "critical_paths": [{"from": "clk_b", "to": "clk_b", "path": [
            {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "a_q"}, "to": {"cell": "a_q"}},
            {"type": "routing", "delay": 2.0, "from": {"cell": "a_q"}, "to": {"cell": "lut1"}},
            {"type": "logic", "delay": 0.3, "from": {"cell": "lut1"}, "to": {"cell": "lut1"}},
            {"type": "routing", "delay": 1.5, "from": {"cell": "lut1"}, "to": {"cell": "b_q"}},
            {"type": "setup", "delay": 0.2, "from": {"cell": "b_q"}, "to": {"cell": "b_q"}}]}],
    }
    pnr = parse_nextpnr_report(rep)
    assert pnr["clock"] == "clk_b" and pnr["fmax_mhz"] == 97.25
    crit = pnr["critical_path"]
    assert (crit["start"], crit["end"], crit["logic_levels"]) == ("a_q", "b_q", 1)
    assert crit["routing_ns"] == 3.5 and crit["logic_ns"] == 1.0
    assert ecp5_line("edge8", "LFE5UM5G-85F", pnr) == (
        "fpga edge8 LFE5UM5G-85F: Fmax 97.2 MHz (target 100 MHz), LUT 900, FF 800, DSP 64, "
        "BRAM 150")
    assert critical_path_line(crit) == ("critical path a_q -> b_q: 1 logic levels, 1.0 ns logic "
                                        "+ 3.5 ns routing")
    with pytest.raises(FlowError, match="no clock"):
        parse_nextpnr_report({"fmax": {}})


def test_nextpnr_progress_echoes_placer_timing_and_router_lines(tmp_path, capsys):
    # The flow echoes these lines while nextpnr runs (its log is the only output for 10+ min).
    log = tmp_path / "nextpnr.log"
    log.write_text("Info: Packing IOs..\nInfo: HeAP Placer Time: 58.35s\n"
                   "Info: Max frequency for clock 'clk': 70.12 MHz (FAIL at 100.00 MHz)\n"
                   "Info:     iter=1 wires=449110 overused=36253 overuse=43993 archfail=NA\n"
                   "Info:     iter=2 wires=462694 over")   # a line still being written
    seen = echo_progress("nextpnr-ecp5", log, 0, NEXTPNR_PROGRESS, 0.0)
    out = capsys.readouterr().out.splitlines()
    assert seen == 4 and len(out) == 3
    assert "HeAP Placer Time" in out[0] and "70.12 MHz" in out[1] and "overused=36253" in out[2]
    assert echo_progress("nextpnr-ecp5", log, seen, NEXTPNR_PROGRESS, 0.0) == 4
    assert capsys.readouterr().out == ""


def test_critical_path_cells_are_named_by_their_rtl_source(tmp_path):
    # nextpnr names cells after Yosys' nets; the flow reports the always block's file and line.
    def cell(src):
        return {"attributes": {"src": src}}
    netlist = tmp_path / "top.json"
    netlist.write_text(json.dumps({"modules": {"vta_fpga_top": {"cells": {
        "q_a": cell("src/vta_fetch.sv:189.3-254.6|/share/lattice/cells_map_trellis.v:73.1-73.2"),
        "lut1": cell("src/vta_fifo.sv:65.3-82.6"), "carry": cell("/share/lattice/arith.v:4.1"),
        "lut2": cell("src/vta_fifo.sv:70.1-70.9"), "q_b": cell("src/vta_store.sv:12.3-40.6")}}}}))
    crit = {"start": "q_a", "end": "q_b", "through": ["lut1", "carry", "lut2", "gone", "q_b"]}
    assert path_sources(netlist, crit) == {"start_src": "vta_fetch.sv:189",
                                           "end_src": "vta_store.sv:12",
                                           "through_src": ["vta_fifo.sv", "vta_store.sv"]}


def test_routing_map_counts_switches_per_tile_and_marks_block_ram_and_dsp(tmp_path):
    cfg = tmp_path / "routed.config"
    cfg.write_text(".device LFE5UM5G-85F\n.tile R2C3:PLC2\narc: A B\narc: C D\nword: X 01\n"
                   ".tile CIB_R4C1:CIB_EBR\narc: E F\n"
                   ".tile_group MIB_R4C1:MIB_EBR0 MIB_R4C2:MIB_EBR1\nword: EBR0.WID 0\n"
                   ".tile MIB_R6C5:MIB_DSP0\nword: MULT 1\n.tile R2C3:PLC2\narc: G H\n")
    use = tile_use(cfg)
    assert use.pips.shape == (7, 6)
    assert use.pips[2, 3] == 3 and use.pips[4, 1] == 1 and use.pips.sum() == 4
    assert use.ebr == {(4, 1)} and use.dsp == {(6, 5)}
    fig = routing_map_figure(use, [[3, 2], [1, 4]], "title", "critical path")
    assert fig.axes[0].get_title() == "title"
    fig.savefig(tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 1000
    pnr = {"fmax_mhz": 71.25, "target_mhz": 100.0, "critical_path": {
        "start_src": "vta_fetch.sv:189", "end_src": "vta_store.sv:12", "logic_levels": 3,
        "logic_ns": 2.5, "routing_ns": 9.0, "locs": [[3, 2], [1, 4]]}}
    out = draw_routing_map(cfg, pnr, "edge8", "LFE5UM5G-85F", tmp_path / "maps" / "edge8.png")
    assert out == tmp_path / "maps" / "edge8.png" and out.stat().st_size > 1000


def test_report_parsing_keeps_the_critical_path_tiles_in_order():
    def step(kind, src, dst):
        return {"type": kind, "from": {"cell": src[0], "loc": src[1]},
                "to": {"cell": dst[0], "loc": dst[1]}}
    a, b, c = ("a", [1, 2]), ("b", [5, 2]), ("c", [5, 9])
    seg = [step("clk-to-q", a, a), step("routing", a, b), step("logic", b, b),
           step("routing", b, c), step("setup", c, c)]
    assert summarize_path({"path": seg})["locs"] == [[1, 2], [5, 2], [5, 9]]
