"""Deliberately broken copies of the RTL are caught by the regression and minimised.

The mutants come from the catalogue of `vtabench mutate` (verify/mutants/rtl.json), each built
from a copy of hdl/ in its own build directory. One writes one element too few of trailing x
padding in the load path (vta_dma_rd): the regression must catch it on random programs, and the
minimiser must shrink a failing program to a short reproducer that fails on the mutant, passes
on the real RTL and reads no undefined state. Another raises done before the write responses
have drained: its DRAM image is right, and only the bench's open-at-done check sees it.
"""

import numpy as np
import pytest

from vtabench.spec.config import load_config
from vtabench.spec.isa import Opcode
from vtabench.spec.isa.asm import assemble
from vtabench.spec.program import Program
from vtabench.verify.regress.diff import run_on_target
from vtabench.verify.regress.campaign import generate, regress
from vtabench.verify.regress.shrink import result_is_defined
from vtabench.rtl.verilator import Mutation
from vtabench.spec.validate import validate_program
from vtabench.verify.mutation import Settings, judge, load_catalogue

CATALOGUE = {m.id: m for m in load_catalogue("rtl")}
PAD = CATALOGUE["pad-x-trailing-short"]
PAD_OFF_BY_ONE = Mutation(PAD.file, PAD.old, PAD.new)
CFG = load_config("default")

pytestmark = pytest.mark.rtl


def test_padding_mutant_is_caught_and_minimised(tmp_path):
    seed = 21
    result = regress("default", 8, seed, ["fsim", "rtl"], jobs=2, save_dir=tmp_path,
                     target_opts={"rtl": {"mutation": PAD_OFF_BY_ONE}}, max_reproducers=1)
    assert result.failed, "the padding mutant escaped the regression"
    name, text = next(iter(result.reproducers.items()))
    assert (tmp_path / f"{name}.s").exists() and (tmp_path / f"{name}-min.bin").exists()

    small = assemble(CFG, text)
    real = [i for i in small if not (i.opcode in (Opcode.LOAD, Opcode.STORE)
                                     and (i.x_size == 0 or i.y_size == 0))]
    print(f"reproducer of {name} ({len(small)} instructions):\n{text}")
    assert len(real) <= 8, text
    assert any(i.opcode == Opcode.LOAD and i.x_pad_1 for i in small), \
        "the reproducer does not exercise trailing padding"

    index = int(name.rsplit("-", 1)[1])
    dram = generate(CFG, seed, index).dram
    validate_program(CFG, small, dram)
    assert result_is_defined(CFG, small, dram)
    prog = Program("repro", small, dram)
    (golden,), _ = run_on_target(CFG, "fsim", [prog], seed=seed)
    (mutant,), _ = run_on_target(CFG, "rtl", [prog], seed=seed,
                                 target_opts={"mutation": PAD_OFF_BY_ONE})
    (real_rtl,), problems = run_on_target(CFG, "rtl", [prog], seed=seed)
    assert not np.array_equal(mutant, golden), "the reproducer passes on the mutant"
    assert problems == [None] and np.array_equal(real_rtl, golden), \
        "the reproducer fails on the real RTL too: it is not about the mutation"


@pytest.mark.slow
def test_done_before_write_responses_is_caught_by_the_bench():
    """`vtabench mutate` on one catalogue mutant (a Verilator build of its own): killed on the
    first program by the open-at-done check alone."""
    v = judge("rtl", CATALOGUE["mem-write-idle-before-b"], Settings(count=25, seed=1))
    assert v.status == "killed" and "done raised while a burst was open" in v.detail, v
