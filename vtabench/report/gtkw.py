"""GTKWave save files (.gtkw) for the RTL's waves, with the signals grouped.

The groups (:data:`GROUPS`) are patterns over the signals' hierarchical names, relative to the
core wherever it sits (``TOP.vta_tb_top.u_core`` in the core bench, ``TOP.vta_pcie_top.u_shell.
u_core`` behind the PCIe platform): run control, fetch, the three stages, the token queues, the
AXI channels, the register block (the platform's shell only). The names are read from the waves
file itself (VCD or FST, through pywellen), so the save file lists exactly the signals there are.

    python -m vtabench.report.gtkw results/waves/prog.fst     # writes results/waves/prog.gtkw
    gtkwave results/waves/prog.fst results/waves/prog.gtkw
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: waves suffixes the builds write (vtabench.rtl.verilator.waves_format)
WAVE_SUFFIXES = (".fst", ".vcd")

_STAGE = (r"(u_ctrl\.state_q|u_ctrl\.idx_q|ph_q|cmd_valid_i|cmd_ready_o|busy_o|retire_o|pop_wait_o|push_wait_o|"
          r"mem_wait_o|err_o|req_valid_o|req_ready_i|req_addr_o|req_len_o|r_valid_i|r_ready_o|"
          r"w_valid_o|w_ready_i|{extra})")
#: (group, pattern matched against the name after the core's scope ``u_core.``), in order
GROUPS: tuple[tuple[str, str], ...] = (
    ("run control", r"(clk_i|rst_ni|launch_i|insn_count_i|insn_base_i|dram_base_i|dram_size_i|"
                    r"busy_o|done_o|error_o|error_insn_o|cycles_o)"),
    ("fetch", r"u_fetch\.(act_q|count_q|idx_q|req_idx_q|cred_q|req_valid_o|req_ready_i|"
              r"req_addr_o|req_len_o|r_valid_i|r_ready_o|ld_valid_o|ld_ready_i|cp_valid_o|"
              r"cp_ready_i|st_valid_o|st_ready_i|done_o|err_o)"),
    ("load stage", r"u_load\." + _STAGE.format(extra="inp_we_o|wgt_we_o|w_addr_o")),
    ("compute stage", r"u_compute\." + _STAGE.format(
        extra="opcode|u_q|i0_q|i1_q|g1_q|g2_q|g3_q|res_we_o|res_idx_o|acc_wr_o|finish_q")),
    ("store stage", r"u_store\." + _STAGE.format(extra="rq_y_q|bt_y_q|out_addr_o")),
    ("token queues", r"u_(l2g|g2l|g2s|s2g)\.(push_i|pop_i|valid_o|ready_o|count_q)"),
    ("AXI read (AR, R)", r"m_axi_(ar\w+|r\w+)"),
    ("AXI write (AW, W, B)", r"m_axi_(aw\w+|wstrb_o|wlast_o|wvalid_o|wready_i|b\w+)"),
)
#: the register block: signals of the shell around the core (the PCIe platform's)
REGISTER_GROUP = ("register block", r"(s_axil_\w+|reg_\w+|irq_o|msi_\w+)")


@dataclass(frozen=True)
class Signal:
    name: str  # full hierarchical name
    width: int

    @property
    def gtkw_name(self) -> str:
        """How GTKWave names it: vectors carry their range."""
        return self.name if self.width == 1 else f"{self.name}[{self.width - 1}:0]"


def read_signals(waves: Path) -> list[Signal]:
    """Every variable of a VCD or FST file, in file order."""
    import pywellen

    try:
        w = pywellen.Waveform(str(waves), multi_threaded=False)
    except Exception as exc:  # noqa: BLE001 - pywellen raises plain Exceptions
        raise ValueError(f"{waves}: cannot read the waves ({exc})") from None
    return [Signal(v.full_name, int(v.bitwidth)) for v in w.all_vars()]


def group_signals(signals: list[Signal]) -> list[tuple[str, list[Signal]]]:
    """The groups that have signals, each in the order the patterns list them."""
    core = [s for s in signals if ".u_core." in s.name]
    if not core:
        raise ValueError("the waves hold no signal of a vta_core instance (u_core)")
    prefix = core[0].name.split(".u_core.")[0] + ".u_core."
    out = []
    for group, pattern in GROUPS:
        rx = re.compile(re.escape(prefix) + pattern + "$")
        out.append((group, _ordered(signals, rx, pattern)))
    shell = prefix[:-len("u_core.")]
    rx = re.compile(re.escape(shell) + REGISTER_GROUP[1] + "$")
    out.append((REGISTER_GROUP[0], _ordered(signals, rx, REGISTER_GROUP[1])))
    return [(g, s) for g, s in out if s]


def _ordered(signals: list[Signal], rx: re.Pattern[str], pattern: str) -> list[Signal]:
    """Matches of ``rx``, ordered by the first alternative of the pattern's last group that
    matches the end of their name, then as the waves file lists them."""
    alternatives = pattern[pattern.rindex("(") + 1:pattern.rindex(")")].split("|")

    def rank(item: tuple[int, Signal]) -> tuple[int, int]:
        order, s = item
        leaf = s.name.rsplit(".", 1)[-1]
        first = next((k for k, alt in enumerate(alternatives) if re.search(f"{alt}$", leaf)),
                     len(alternatives))
        return first, order

    hits = [(k, s) for k, s in enumerate(signals) if rx.search(s.name)]
    return [s for _, s in sorted(hits, key=rank)]


def gtkw_text(waves: Path, groups: list[tuple[str, list[Signal]]]) -> str:
    lines = ["[*] GTKWave save file written by vtabench.report.gtkw",
             f'[dumpfile] "{waves.resolve()}"', "[timestart] 0", "[size] 1600 900",
             "[sst_width] 260", "[signals_width] 300", "[sst_expanded] 1"]
    for group, sigs in groups:
        # a group (GTKWave's trace flags): @800200 opens it (expanded), @1000200 closes it;
        # @28 shows a bit, @22 a vector in hexadecimal
        lines += ["@800200", f"-{group}"]
        for s in sigs:
            lines += ["@28" if s.width == 1 else "@22", s.gtkw_name]
        lines += ["@1000200", f"-{group}"]
    return "\n".join(lines) + "\n"


def write_gtkw(waves: str | Path, out: str | Path | None = None) -> Path:
    """Write a save file for ``waves`` (default: beside it, suffix .gtkw); returns its path."""
    waves = Path(waves)
    out = Path(out) if out is not None else waves.with_suffix(".gtkw")
    out.write_text(gtkw_text(waves, group_signals(read_signals(waves))))
    return out


def find_waves(path: Path) -> Path:
    """``path`` itself, or the newest waves file of that stem (.fst or .vcd)."""
    if path.suffix in WAVE_SUFFIXES and path.exists():
        return path
    found = [p for p in (path.with_suffix(s) for s in WAVE_SUFFIXES) if p.exists()]
    if not found:
        raise ValueError(f"{path}: no waves file ({' or '.join(WAVE_SUFFIXES)})")
    return max(found, key=lambda p: p.stat().st_mtime)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vtabench.report.gtkw",
                                 description="write a GTKWave save file for RTL waves")
    ap.add_argument("waves", type=Path, help="waves file (.fst / .vcd), or its path without "
                    "the suffix")
    ap.add_argument("-o", "--out", type=Path, help="save file (default: beside the waves)")
    args = ap.parse_args(argv)
    try:
        waves = find_waves(args.waves)
        out = write_gtkw(waves, args.out)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}: open with gtkwave {waves} {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
