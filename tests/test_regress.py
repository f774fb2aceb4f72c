"""Regression machinery: the case generator (queue fills, placement, timing, response errors,
illegal streams), the checks, functional coverage, the minimiser, Verilator coverage, the CLI."""

import functools
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.fsim import Fsim, kernels
from vtabench.spec.config import CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH, load_config
from vtabench.spec.isa import AluOp, Opcode
from vtabench.spec.contracts.errors import ErrorCode
from vtabench.spec.contracts.stages import QUEUE_ENDS, TokenQueue
from vtabench.spec.isa.insn import encode_program
from vtabench.spec.tokens import schedule, stage_of
from vtabench.spec.validate import ValidationError, validate_binary, validate_program
from vtabench.verify.builder import ProgramBuilder
from vtabench.verify.illegal import DEFECTS, expected_outcomes
from vtabench.verify.random_case import KINDS
from vtabench.verify.random_program import (fill_command_queue, fill_token_queue,
                                            overfill_token_queue, random_program)
from vtabench.verify.regress.campaign import generate, minimise
from vtabench.verify.regress.coverage import FunctionalCoverage, all_bins
from vtabench.verify.regress.diff import (Observation, check, compare, first_mismatch,
                                          golden_image, run_on_target)
from vtabench.rtl.coverage import RtlCoverage
from vtabench.verify.regress.shrink import Shrinker
from vtabench.spec.program import Origin, Outcome

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
    assert set(cov.uncovered()) < set(all_bins(CFG))
    assert "uncovered: " in cov.report()
    merged = FunctionalCoverage(CFG)
    merged.merge(dict(cov.hits))
    assert merged.percent() == cov.percent()


@pytest.mark.slow
def test_2000_cases_hit_every_coverage_bin():
    """A bin never hit in 2000 cases is a generator bug. Every case is sampled statically (its
    run setup, instructions, order, queues); fsim observes the ALU operands of the first 300."""
    cov = FunctionalCoverage(CFG)
    for k in range(2000):
        prog = generate(CFG, 7, k)
        cov.sample_case(prog)
        if k < 300:
            golden_image(CFG, prog, observe_alu=cov.sample_alu)
    assert cov.uncovered() == []


@pytest.mark.parametrize("queue", list(TokenQueue))
def test_queue_prologues_need_every_entry(queue):
    """The token-queue prologue deadlocks with one token less; the command-queue prologue with
    one command entry less; both are valid at the real capacities."""
    tight = {"token": {"token_depth": TOKEN_QUEUE_DEPTH - 1},
             "command": {"cmd_depth": CMD_QUEUE_DEPTH - 1}}
    for kind, fill in (("token", lambda p: fill_token_queue(p, queue)),
                       ("command", lambda p: fill_command_queue(p, np.random.default_rng(0),
                                                                queue))):
        p = ProgramBuilder(CFG)
        fill(p)
        p.finish()
        prog = p.build("fill")
        validate_program(CFG, prog.insns, prog.dram)
        dead = schedule(prog.insns, **tight[kind]).deadlock
        assert dead is not None, (kind, queue)
        if kind == "token":
            assert (dead.queue, dead.waits_for) == (queue.name.lower(), "push")
        else:
            assert stage_of(prog.insns[dead.fetch_blocked]) == QUEUE_ENDS[queue].consumer


@pytest.mark.parametrize("queue", list(TokenQueue))
def test_overfill_prologue_pushes_more_than_the_queue_holds(queue):
    """The producer's pushes run ahead of the consumer's pops by more than the queue holds
    (in stream order), behind real work of the consumer: the producer must find the queue full
    and wait; the program is valid at the real capacity."""
    ends = QUEUE_ENDS[queue]
    for seed in range(3):
        p = ProgramBuilder(CFG)
        overfill_token_queue(p, np.random.default_rng(seed), queue)
        p.finish()
        prog = p.build("overfill")
        validate_program(CFG, prog.insns, prog.dram)
        ahead = most = 0
        for insn in prog.insns:
            ahead += (stage_of(insn) == ends.producer and getattr(insn, ends.push_flag)) - \
                (stage_of(insn) == ends.consumer and getattr(insn, ends.pop_flag))
            most = max(most, ahead)
        assert TOKEN_QUEUE_DEPTH < most <= TOKEN_QUEUE_DEPTH + 8, (queue, most)
        # the consumer's work queued ahead of the producer's last push (elements moved, GEMM
        # iterations) takes far longer than the producer's pushes, a cycle or so each
        last = max(i for i, insn in enumerate(prog.insns)
                   if stage_of(insn) == ends.producer and getattr(insn, ends.push_flag))
        work = sum(insn.iter_out * insn.iter_in if insn.opcode == Opcode.GEMM
                   else insn.x_size * insn.y_size for insn in prog.insns[:last]
                   if stage_of(insn) == ends.consumer and insn.opcode != Opcode.FINISH)
        assert work >= 4 * TOKEN_QUEUE_DEPTH, (queue, work)


def test_every_defect_breaks_one_rule_the_validator_names():
    """Each defect gives the code it is meant for, at the index the validator names; the
    generated illegal cases carry those outcomes."""
    wanted = {"opcode": ErrorCode.OPCODE, "load_mem_type": ErrorCode.MEM_TYPE,
              "store_mem_type": ErrorCode.MEM_TYPE, "alu_opcode": ErrorCode.ALU_OP,
              "alu_reset": ErrorCode.ALU_OP, "token_flag": ErrorCode.MEM_TYPE,
              "pad_forbidden": ErrorCode.MEM_TYPE, "finish_early": ErrorCode.FINISH,
              "finish_flag": ErrorCode.FINISH, "finish_missing": ErrorCode.FINISH,
              "empty": ErrorCode.FINISH, "sram_load": ErrorCode.SRAM_LOAD,
              "sram_uop_load": ErrorCode.SRAM_UOP, "sram_store": ErrorCode.SRAM_STORE,
              "uop_range": ErrorCode.SRAM_UOP, "gemm_index": ErrorCode.SRAM_GEMM,
              "alu_index": ErrorCode.SRAM_ALU, "dram_range": ErrorCode.DRAM_RANGE,
              "dram_edge": ErrorCode.DRAM_RANGE}
    assert set(wanted) == set(DEFECTS)
    applied = set()
    for s in range(12):
        body = random_program(CFG, np.random.default_rng([41, s]))
        for name, defect in DEFECTS.items():
            code = defect(CFG, list(body.insns), body.dram, np.random.default_rng([s]))
            if code is None:  # no instruction of the kind in this program
                continue
            applied.add(name)
            expect = expected_outcomes(CFG, code, body.dram)
            assert expect and expect["rtl"].error == wanted[name], name
            with pytest.raises(ValidationError) as exc:
                validate_binary(CFG, code, body.dram)
            assert expect["rtl"].indices == (exc.value.index or 0,), name
    assert applied == set(DEFECTS)
    assert expected_outcomes(CFG, encode_program(CFG, body.insns), body.dram) == {}
    # the missing final FINISH: the kernel reports it at insn_count
    code = DEFECTS["finish_missing"](CFG, list(body.insns), body.dram, np.random.default_rng())
    n = len(code) // 16
    assert expected_outcomes(CFG, code, body.dram)["opencl"].indices == (n,)


def test_check_names_everything_wrong():
    """The checks see the code, the index, the state and every DRAM-model counter."""
    legal = generate(CFG, 3, 0)
    legal = replace(legal, origin=Origin("legal"), expect={})
    illegal = replace(legal, origin=Origin("illegal.opcode"), expect={
        "rtl": Outcome(ErrorCode.OPCODE, (5,)), "opencl": None})
    assert check("rtl", legal, Observation("done")) is None
    assert "timeout" in check("rtl", legal, Observation("timeout"))
    assert "expected a clean run, got" in check("rtl", legal, Observation("error", 2, 3))
    for name in ("dram_proto_err", "stray_writes", "dram_open_at_done", "dram_resp_err"):
        assert check("rtl", legal, Observation("done", counters={name: 1})), name
    assert check("rtl", illegal, Observation("error", ErrorCode.OPCODE, 5)) is None
    assert "got illegal opcode (ERR_OPCODE 0x01) at instruction 6" in check(
        "rtl", illegal, Observation("error", ErrorCode.OPCODE, 6))
    assert "got no error" in check("rtl", illegal, Observation("done"))
    assert check("opencl", illegal, Observation("done")) is None  # not run there
    assert check("fsim", illegal, Observation("done")) is None
    assert compare(CFG, "rtl", illegal, legal.dram, legal.dram + 1) is None
    assert compare(CFG, "rtl", legal, legal.dram, legal.dram + 1) is not None


def test_error_cases_are_their_own_reproducers():
    for k in range(200):
        prog = generate(CFG, 5, k)
        if prog.expect:
            break
    small = minimise(CFG, prog, "rtl", 5)
    assert small == replace(prog, name=f"{prog.name}-min")


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


@functools.cache
def _cases_by_kind() -> tuple[dict, dict]:
    """The first case of every kind (legal, fault.*, align.*, illegal.<defect>) among the first
    1000 of seed 13, and the first of every illegal kind that the OpenCL kernel checks."""
    kinds = {"legal", *(k for k in KINDS if k != "illegal"), *(f"illegal.{d}" for d in DEFECTS)}
    first, kernel = {}, {}
    for k in range(1000):
        prog = generate(CFG, 13, k)
        kind = prog.kind
        first.setdefault(kind, prog)
        if kind.startswith("illegal.") and prog.expect.get("opencl"):
            kernel.setdefault(kind, prog)
        if set(first) == kinds:
            break
    return first, kernel


@pytest.mark.rtl
def test_rtl_bench_reports_what_every_case_kind_expects():
    """One case of every kind on the core bench: each ends as its setup says (code, index,
    counters; a clean run's image equal to fsim's). A fault case run without its fault is
    caught: the check expects the error."""
    cases = list(_cases_by_kind()[0].values())
    assert len(cases) >= 20, sorted(c.kind for c in cases)
    write = next(c for c in cases if c.kind == "fault.write")
    unfaulted = replace(write, name="unfaulted", knobs={
        k: v for k, v in write.knobs.items() if k != "wr_err_burst"})
    images, problems = run_on_target(CFG, "rtl", [*cases, unfaulted], seed=13)
    for prog, img, problem in zip(cases, images, problems):
        assert problem is None, f"{prog.name} ({prog.kind}): {problem}"
        assert compare(CFG, "rtl", prog, golden_image(CFG, prog), img) is None, prog.name
    assert "expected AXI write error (ERR_AXI_WR 0x31)" in problems[-1]
    assert "got no error" in problems[-1]


@pytest.mark.opencl
def test_opencl_reports_what_illegal_streams_expect():
    """The illegal cases the kernel checks end with the validator's code and index there."""
    cases = list(_cases_by_kind()[1].values())
    assert len(cases) >= 10, sorted(c.kind for c in cases)
    _, problems = run_on_target(CFG, "opencl", cases, seed=13)
    assert problems == [None] * len(cases), [p for p in problems if p]


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
