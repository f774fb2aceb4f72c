"""Regression machinery: functional coverage, the minimiser, Verilator coverage, the CLI."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.spec.config import load_config
from vtabench.fsim import Fsim, kernels
from vtabench.spec.isa import AluOp, Opcode
from vtabench.verify.random_program import random_program
from vtabench.verify.regress.coverage import FunctionalCoverage, all_bins
from vtabench.verify.regress.diff import first_mismatch
from vtabench.verify.regress.rtl_coverage import RtlCoverage
from vtabench.verify.regress.campaign import generate
from vtabench.verify.regress.shrink import Shrinker
from vtabench.spec.tokens import schedule
from vtabench.spec.validate import validate_program

CFG = load_config("default")


def _golden(prog):
    img = prog.dram.copy()
    Fsim(CFG).run(prog.insns, img)
    return img


def test_generation_is_reproducible_per_index():
    a, b = generate(CFG, 11, 3), generate(CFG, 11, 3)
    assert a.insns == b.insns and np.array_equal(a.dram, b.dram)
    assert generate(CFG, 11, 4).insns != a.insns


def test_coverage_bins_and_uncovered_listing():
    cov = FunctionalCoverage(CFG)
    prog = generate(CFG, 1, 0)
    cov.sample_program(prog.insns, schedule(prog.insns).order)
    Fsim(CFG).run(prog.insns, prog.dram.copy(), observe_alu=cov.sample_alu)
    assert cov.hits["kind/FINISH"] == 1 and cov.hits["kind/LOAD.WGT"] >= 1
    assert 0 < cov.percent() < 100
    assert set(cov.uncovered()) < set(all_bins())
    assert "uncovered: " in cov.report()
    merged = FunctionalCoverage(CFG)
    merged.merge(dict(cov.hits))
    assert merged.percent() == cov.percent()


def test_random_programs_reach_full_functional_coverage():
    cov = FunctionalCoverage(CFG)
    for k in range(300):
        prog = generate(CFG, 7, k)
        cov.sample_program(prog.insns, schedule(prog.insns).order)
        Fsim(CFG).run(prog.insns, prog.dram.copy(), observe_alu=cov.sample_alu)
    assert cov.uncovered() == []


kernels_shr = kernels.shr


def _faulty_shr(x, amount):
    """SHR that gets left shifts by exactly 1 wrong (a planted bug)."""
    out = kernels_shr(x, amount)
    return np.where(amount == -1, x, out).astype(np.int32)


def test_shrinker_reduces_a_failing_program(monkeypatch):
    # Find a random program on which the planted bug changes the result.
    def run_faulty(insns, dram):
        with monkeypatch.context() as m:
            m.setattr(kernels, "shr", _faulty_shr)
            img = dram.copy()
            Fsim(CFG).run(insns, img)
        return img

    for k in range(200):
        prog = random_program(CFG, np.random.default_rng([99, k]))
        if any(i.opcode == Opcode.ALU and i.alu_opcode == AluOp.SHR for i in prog.insns) and \
                first_mismatch(CFG, "faulty", prog.insns, _golden(prog),
                               run_faulty(prog.insns, prog.dram)) is not None:
            break
    else:
        pytest.fail("no random program exposed the planted bug")

    def fails_batch(cands):
        return [not np.array_equal(_golden(type(prog)("c", c, prog.dram)),
                                   run_faulty(c, prog.dram)) for c in cands]

    small = Shrinker(CFG, prog.dram, fails_batch).shrink(list(prog.insns))
    validate_program(CFG, small, prog.dram)
    assert fails_batch([small]) == [True]
    real = [i for i in small if not (i.opcode in (Opcode.LOAD, Opcode.STORE) and i.x_size == 0)]
    assert len(small) < len(prog.insns) and len(real) <= 8, small
    assert any(i.opcode == Opcode.ALU and i.alu_opcode == AluOp.SHR for i in small)


def test_rtl_coverage_parser(tmp_path):
    key = "\x01t\x02{t}\x01page\x02v_{t}/vta_x\x01f\x02hdl/vta_x.sv\x01l\x02{l}\x01o\x02{o}\x01h\x02TOP.u"
    lines = ["# SystemC::Coverage-3"]
    lines += [f"C '{key.format(t='line', l=10, o='block')}' 5",
              f"C '{key.format(t='line', l=12, o='block')}' 0",
              f"C '{key.format(t='toggle', l=3, o='a_q[0]:0->1')}' 1"]
    (tmp_path / "a.dat").write_text("\n".join(lines) + "\n")
    (tmp_path / "b.dat").write_text(lines[0] + "\n" + lines[2].replace("' 0", "' 2") + "\n")
    cov = RtlCoverage.from_files([tmp_path / "a.dat", tmp_path / "b.dat"])
    assert cov.totals("line") == (2, 2) and cov.totals("toggle") == (1, 1)
    report = cov.report()
    assert "RTL line coverage: 100.0%" in report and "RTL toggle coverage" in report
    cov.write_lcov(tmp_path / "cov.info")
    assert "DA:12,2" in (tmp_path / "cov.info").read_text()


@pytest.mark.rtl
@pytest.mark.opencl
def test_bounded_regression_on_every_target(tmp_path, capsys):
    """CI's bounded regression: random programs on fsim vs rtl vs opencl through the CLI."""
    junit = tmp_path / "r.xml"
    rc = main(["regress", "--count", "40", "--seed", "4", "--targets", "fsim,rtl,opencl",
               "--jobs", "2", "--junit", str(junit), "--save-dir", str(tmp_path / "f"),
               "--coverage-json", str(tmp_path / "cov.json")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "40 passed, 0 failed of 40 programs on fsim vs rtl vs opencl (seed 4" in out
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "40" and suite.get("failures") == "0"
    assert suite.get("errors") == "0" and len(suite.findall("testcase")) == 40
    assert "functional coverage" in out and (tmp_path / "cov.json").exists()


def test_minimiser_rejects_races_and_undefined_reads():
    from dataclasses import replace

    from vtabench.spec.isa.asm import assemble
    from vtabench.verify.regress.shrink import result_is_defined

    dram = np.zeros(4096, np.uint8)
    dram[64:68] = 0  # one micro-op: dst 0
    racy = assemble(CFG, """
        LOAD memory_type=ACC_8BIT dram_base=0 y_size=1 x_size=1 x_stride=1
        LOAD memory_type=UOP dram_base=16 y_size=1 x_size=1 x_stride=1
        ALU uop_end=1 iter_out=1 iter_in=1 alu_opcode=ADD use_imm=1 imm=3
        STORE memory_type=OUT dram_base=100 y_size=1 x_size=1 x_stride=1
        FINISH""")
    dram[:16] = 5
    assert not result_is_defined(CFG, racy, dram), "STORE may overtake the ALU: a race"
    fenced = [*racy[:2], replace(racy[2], push_next_dep=1), replace(racy[3], pop_prev_dep=1),
              racy[4]]
    assert result_is_defined(CFG, fenced, dram)
    # stores out[0], which nothing wrote
    undefined = [replace(racy[1], push_next_dep=1), fenced[3], racy[4]]
    assert not result_is_defined(CFG, undefined, dram)
    prog = generate(CFG, 2, 0)
    assert result_is_defined(CFG, prog.insns, prog.dram)
