"""The contracts between languages (spec/contracts/*.json): committed views current, data files
checked on load, each target using exactly the codes the contract gives it, and the OpenCL kernel
reporting the same code as the RTL for the same fault."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vtabench.hwgen import contracts
from vtabench.hwgen import error_views as errors
from vtabench.hwgen import ocl_control_views as ocl_control
from vtabench.hwgen import stage_views as stages
from vtabench.hwgen.contract_data import ContractError
from vtabench.hwgen.paths import OPENCL_GEN_DIR
from vtabench.spec.config import load_config
from vtabench.spec.contracts import ocl_control as C
from vtabench.spec.contracts.errors import ErrorCode, describe
from vtabench.spec.contracts.stages import QUEUE_ENDS, Stage, TokenQueue
from vtabench.spec.isa import encode_program
from vtabench.spec.isa.insn import Insn
from vtabench.spec.isa.layout import AluOp, MemType, Opcode, insn_layout
from vtabench.spec.tokens import POP_QUEUES, PUSH_QUEUES
from vtabench.rtl.verilator import HDL_DIR

#: The OpenCL kernel sources (outside gen/): kernels and the headers they share.
KERNEL_SOURCES = sorted(p for p in OPENCL_GEN_DIR.parent.iterdir() if p.suffix in (".cl", ".h"))


def test_generated_contract_views_are_current() -> None:
    for path, text in contracts.generated_files().items():
        assert path.exists(), f"{path} missing: run `vtabench gen`"
        assert path.read_text() == text, f"{path} is stale: run `vtabench gen`"


def test_code_views_fit_100_columns() -> None:
    for path, text in contracts.generated_files().items():
        if path.suffix != ".md":
            width = max(len(line) for line in text.splitlines())
            assert width <= 100, f"{path.name}: a line of {width} characters"


def test_views_agree_with_the_data() -> None:
    err = errors.load_errors()
    assert [(c.name, c.value) for c in err.codes] == [(c.name, c.value) for c in ErrorCode]
    assert ErrorCode.AXI_RD == 0x30 and ErrorCode.OPCODE == 1, "RTL numbering kept"
    st = stages.load_stages()
    assert [s.name for s in st.stages] == [s.name for s in Stage]
    assert {TokenQueue[q.name]: (q.producer, q.push_flag, q.consumer, q.pop_flag)
            for q in st.queues} == {q: (e.producer.name, e.push_flag, e.consumer.name, e.pop_flag)
                                    for q, e in QUEUE_ENDS.items()}
    cb = ocl_control.load_control_block()
    assert {f"CTRL_{w.name}": w.index for w in cb.words} == \
        {k: v for k, v in vars(C).items() if k.startswith("CTRL_") and k not in
         ("CTRL_BYTES", "CTRL_WORDS")}
    assert C.ABI_VERSION == cb.abi_version and C.CTRL_WORDS * 4 == cb.bytes


def test_token_tables_come_from_the_contract() -> None:
    # docs/isa.md section 3: compute pops l2g with pop_prev_dep and pushes g2s with push_next_dep
    assert POP_QUEUES[(Stage.COMPUTE, "pop_prev_dep")] == TokenQueue.L2G
    assert PUSH_QUEUES[(Stage.COMPUTE, "push_next_dep")] == TokenQueue.G2S
    assert len(POP_QUEUES) == len(PUSH_QUEUES) == len(TokenQueue)


def test_describe_names_the_code() -> None:
    assert describe(0x30) == "AXI read error (ERR_AXI_RD 0x30)"
    assert describe(0x77) == "unknown error code 0x77"


def _used(pattern: str, text: str) -> set[str]:
    return set(re.findall(pattern, text))


def test_each_target_uses_the_codes_the_contract_gives_it() -> None:
    err = errors.load_errors()
    for target, text, pattern in (
            # ERR_WIDTH: the generated package's width of an error code, not a code
            ("rtl", "\n".join(p.read_text() for p in sorted(HDL_DIR.glob("*.sv"))),
             r"\bERR_(?!WIDTH\b)([A-Z0-9_]+)\b"),
            ("opencl", "\n".join(p.read_text() for p in KERNEL_SOURCES),
             r"\bVTA_ERR_([A-Z0-9_]+)\b")):
        want = {c.name for c in err.codes if target in c.targets}
        assert _used(pattern, text) == want, f"{target}: codes used vs errors.json targets"


def test_kernel_defines_no_contract_itself() -> None:
    names = set(re.findall(r"#define\s+(\w+)", contracts.C_HEADER.read_text()))
    assert {"VTA_ERR_DEADLOCK", "CTRL_STATUS", "STAGE_LOAD", "Q_L2G"} <= names
    assert KERNEL_SOURCES, "no kernel sources found"
    for path in KERNEL_SOURCES:
        copies = names & set(re.findall(r"#define\s+(\w+)", path.read_text()))
        assert not copies, f"{path.name} defines {sorted(copies)}: vta_contracts.h has them"
    assert any('#include "vta_contracts.h"' in p.read_text() for p in KERNEL_SOURCES)


def _write(tmp_path: Path, name: str, raw: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def test_bad_error_data_is_a_one_line_error(tmp_path: Path) -> None:
    raw = json.loads(errors.ERRORS_JSON.read_text())
    raw["codes"][2]["value"] = "0x01"
    with pytest.raises(ContractError, match=r"^errors\.json: code MEM_TYPE: value 1 already used "
                                            r"by OPCODE$"):
        errors.load_errors(_write(tmp_path, "errors.json", raw))
    raw = json.loads(errors.ERRORS_JSON.read_text())
    raw["codes"][1]["value"] = "0x100"
    with pytest.raises(ContractError, match="code OPCODE: value 0x100 does not fit in 8 bits"):
        errors.load_errors(_write(tmp_path, "errors.json", raw))
    raw["codes"][1]["value"] = "0x01"
    del raw["codes"][1]["message"]
    with pytest.raises(ContractError, match="code OPCODE: missing 'message'"):
        errors.load_errors(_write(tmp_path, "errors.json", raw))


def test_bad_stage_data_is_a_one_line_error(tmp_path: Path) -> None:
    raw = json.loads(stages.STAGES_JSON.read_text())
    raw["queues"][1]["push_flag"] = "push_next_dep"  # compute's push_next_dep is g2s's
    with pytest.raises(ContractError, match="queue G2L: COMPUTE push_next_dep already serves "
                                            "queue|queue G2S: COMPUTE push_next_dep already"):
        stages.load_stages(_write(tmp_path, "stages.json", raw))
    raw = json.loads(stages.STAGES_JSON.read_text())
    raw["queues"][0]["consumer"] = "FETCH"
    with pytest.raises(ContractError, match="queue L2G: unknown stage 'FETCH'"):
        stages.load_stages(_write(tmp_path, "stages.json", raw))


def test_bad_control_block_is_a_one_line_error(tmp_path: Path) -> None:
    raw = json.loads(ocl_control.OCL_CONTROL_JSON.read_text())
    raw["words"][3]["index"] = 64
    with pytest.raises(ContractError, match="word ERROR_ARG: index 64 outside the 64 words"):
        ocl_control.load_control_block(_write(tmp_path, "ocl_control.json", raw))


# ---------------------------------------------------------------------------------------------
# The OpenCL kernel reports the RTL's codes (tests/test_rtl_core.py checks the RTL's side)
# ---------------------------------------------------------------------------------------------

def _patch(code: bytes, index: int, lsb: int, width: int, value: int) -> bytes:
    """Set bits [lsb, lsb + width) of instruction ``index`` (a field the encoder refuses)."""
    word = int.from_bytes(code[16 * index:16 * index + 16], "little")
    word = (word & ~(((1 << width) - 1) << lsb)) | (value << lsb)
    return code[:16 * index] + word.to_bytes(16, "little") + code[16 * index + 16:]


def _kernel_faults() -> dict[str, tuple[bytes, ErrorCode, int]]:
    """name -> (raw program, the code the kernel must report, instruction index)."""
    cfg = load_config("default")
    fin = Insn(Opcode.FINISH)

    def enc(*insns: Insn) -> bytes:
        return encode_program(cfg, [*insns, fin])

    def mem(op: Opcode, mt: MemType, sram_base: int, x_size: int) -> Insn:
        return Insn(op, memory_type=mt, sram_base=sram_base, y_size=1, x_size=x_size,
                    x_stride=x_size)

    def compute(op: Opcode, uop_end: int, past_acc: bool = False, **kw: int) -> Insn:
        """Micro-op 0 (all indices 0) over 3 outer iterations; ``past_acc``: the third one's
        destination is acc_depth."""
        return Insn(op, uop_bgn=0, uop_end=uop_end, iter_out=3, iter_in=1,
                    dst_factor_out=cfg.acc_depth // 2 if past_acc else 0, **kw)

    alu = compute(Opcode.ALU, 1, alu_opcode=AluOp.ADD, use_imm=1)
    alu_opcode = insn_layout(cfg, Opcode.ALU).field("alu_opcode")
    return {
        "opcode": (_patch(enc(mem(Opcode.LOAD, MemType.INP, 0, 1)), 0, 0, 3, 7),
                   ErrorCode.OPCODE, 0),
        "mem_type": (enc(mem(Opcode.LOAD, MemType.OUT, 0, 1)), ErrorCode.MEM_TYPE, 0),
        "alu_op": (_patch(enc(alu), 0, alu_opcode.lsb, alu_opcode.width, 6), ErrorCode.ALU_OP, 0),
        "no_finish": (encode_program(cfg, [mem(Opcode.LOAD, MemType.INP, 0, 1)]),
                      ErrorCode.FINISH, 1),
        "sram_load": (enc(mem(Opcode.LOAD, MemType.INP, cfg.inp_depth - 1, 2)),
                      ErrorCode.SRAM_LOAD, 0),
        "sram_uop_load": (enc(mem(Opcode.LOAD, MemType.UOP, cfg.uop_depth - 1, 2)),
                          ErrorCode.SRAM_UOP, 0),
        "sram_uop_range": (enc(compute(Opcode.GEMM, cfg.uop_depth + 1)), ErrorCode.SRAM_UOP, 0),
        "sram_store": (enc(mem(Opcode.STORE, MemType.OUT, cfg.out_depth - 1, 2)),
                       ErrorCode.SRAM_STORE, 0),
        "sram_gemm": (enc(compute(Opcode.GEMM, 1, past_acc=True)), ErrorCode.SRAM_GEMM, 0),
        "sram_alu": (enc(compute(Opcode.ALU, 1, past_acc=True, alu_opcode=AluOp.ADD, use_imm=1)),
                     ErrorCode.SRAM_ALU, 0),
    }


@pytest.mark.opencl
@pytest.mark.parametrize("name", list(_kernel_faults()))
def test_kernel_reports_the_contract_code(name: str) -> None:
    import numpy as np

    from vtabench.drivers.opencl.device import OpenCLDevice
    from vtabench.drivers.opencl.errors import KernelRunError

    program, code, index = _kernel_faults()[name]
    cfg = load_config("default")
    with OpenCLDevice(cfg, 1 << 20, platform="Portable") as dev:
        dev.alloc(4096, align=4096)
        iaddr = dev.alloc(len(program), align=16)
        dev.write(iaddr, np.frombuffer(program, np.uint8))
        with pytest.raises(KernelRunError) as info:
            dev.run(iaddr, len(program) // 16, timeout_s=30)
    assert (info.value.code, info.value.index) == (code, index), str(info.value)
    assert describe(code) in str(info.value)
