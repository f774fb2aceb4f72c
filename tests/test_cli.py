"""The command line: asm / disasm / exec, and validation errors reported through it."""

import json
import subprocess
import sys

import numpy as np
import pytest

from vtabench.cli import main
from vtabench.spec.config import load_config
from vtabench.fsim import Fsim
from vtabench.spec.isa import Insn, MemType, Opcode, encode_program
from vtabench.spec.isa.asm import disassemble
from vtabench.verify.directed import directed_programs

CFG = load_config("default")


@pytest.fixture
def program(tmp_path):
    prog = next(p for p in directed_programs(CFG) if p.name.startswith("gemm"))
    (tmp_path / "p.bin").write_bytes(encode_program(CFG, prog.insns))
    prog.dram.tofile(tmp_path / "dram.bin")
    return prog


def test_asm_disasm_round_trip(tmp_path, program, capsys):
    (tmp_path / "p.s").write_text(disassemble(CFG, program.insns))
    assert main(["asm", str(tmp_path / "p.s"), "-o", str(tmp_path / "q.bin")]) == 0
    assert (tmp_path / "q.bin").read_bytes() == (tmp_path / "p.bin").read_bytes()
    capsys.readouterr()
    assert main(["disasm", "--json", str(tmp_path / "q.bin")]) == 0
    objs = json.loads(capsys.readouterr().out)
    assert len(objs) == len(program.insns)
    load = next(o for o in objs if o["opcode"] == "LOAD")
    assert set(load) == {"opcode", "pop_prev_dep", "pop_next_dep", "push_prev_dep",
                         "push_next_dep", "memory_type", "sram_base", "dram_base", "y_size",
                         "x_size", "x_stride", "y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1"}
    gemm = next(o for o in objs if o["opcode"] == "GEMM")
    assert "reset_reg" in gemm and "wgt_factor_in" in gemm and "memory_type" not in gemm
    assert objs[-1] == {"opcode": "FINISH", "pop_prev_dep": 0, "pop_next_dep": 0,
                        "push_prev_dep": 0, "push_next_dep": 0}


def test_exec_fsim_matches_golden(tmp_path, program, capsys):
    out = tmp_path / "out.bin"
    assert main(["exec", "--target", "fsim", "--insns", str(tmp_path / "p.bin"), "--dram",
                 str(tmp_path / "dram.bin"), "--out", str(out), "--seed", "5"]) == 0
    assert "seed 5" in capsys.readouterr().out
    expected = program.dram.copy()
    Fsim(CFG).run(program.insns, expected)
    np.testing.assert_array_equal(np.fromfile(out, np.uint8), expected)
    assert not np.array_equal(expected, program.dram)


@pytest.mark.parametrize("insns, needle", [
    ([Insn(Opcode.LOAD, memory_type=MemType.INP, x_size=1, y_size=1, x_stride=1,
           dram_base=1 << 20), Insn(Opcode.FINISH)], "instruction 0"),
    ([Insn(Opcode.STORE, memory_type=MemType.OUT, x_size=1, y_size=1, x_stride=1,
           pop_prev_dep=1), Insn(Opcode.FINISH)], "instruction 0"),
    ([Insn(Opcode.FINISH), Insn(Opcode.FINISH)], "FINISH"),
])
def test_exec_rejects_invalid_program_without_output(tmp_path, insns, needle):
    (tmp_path / "p.bin").write_bytes(encode_program(CFG, insns))
    np.zeros(4096, np.uint8).tofile(tmp_path / "dram.bin")
    out = tmp_path / "out.bin"
    proc = subprocess.run([sys.executable, "-m", "vtabench", "exec", "--insns",
                           str(tmp_path / "p.bin"), "--dram", str(tmp_path / "dram.bin"),
                           "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_exec_rejects_undecodable_stream(tmp_path):
    (tmp_path / "p.bin").write_bytes(bytes([7]) + bytes(15))
    np.zeros(64, np.uint8).tofile(tmp_path / "dram.bin")
    proc = subprocess.run([sys.executable, "-m", "vtabench", "exec", "--insns",
                           str(tmp_path / "p.bin"), "--dram", str(tmp_path / "dram.bin"),
                           "--out", str(tmp_path / "o.bin")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "instruction 0: opcode 7 is not one of" in proc.stderr


def test_version_is_the_installed_one(capsys):
    from importlib.metadata import version

    import vtabench

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"vtabench {vtabench.__version__}"
    assert vtabench.__version__ == version("vtabench")


def test_configs_lists_every_builtin(capsys):
    from vtabench.spec.config import builtin_config_names

    names = builtin_config_names()
    assert main(["configs", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == names
    for r in rows:
        cfg = load_config(r["name"])
        assert r["gemm"] == {"batch": cfg.batch, "block_in": cfg.block_in,
                             "block_out": cfg.block_out}
        assert r["macs_per_cycle"] == cfg.batch * cfg.block_in * cfg.block_out
        assert r["buffer_bytes"]["wgt"] == 2 ** cfg.log_wgt_buff_size
        assert r["axi_data_bits"] == cfg.axi_data_bits
    assert main(["configs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for r in rows:
        g = r["gemm"]
        row = next(line for line in lines if line.startswith(r["name"] + " "))
        assert f"{g['batch']}x{g['block_in']}x{g['block_out']}" in row.split()
        assert str(r["axi_data_bits"]) in row.split()


@pytest.mark.parametrize("argv", [["disasm", "big.bin"], ["configs", "--json"]])
def test_closed_stdout_ends_quietly(tmp_path, argv):
    """`vtabench disasm p.bin | head`: the reader goes away (here before the first write); the
    command ends like git or ls do, status 141 (128 + SIGPIPE), nothing on stderr."""
    (tmp_path / "big.bin").write_bytes(encode_program(CFG, [Insn(Opcode.FINISH)] * 1000))
    proc = subprocess.Popen([sys.executable, "-m", "vtabench", *argv], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def _exec_args(tmp_path, *more: str) -> list[str]:
    return ["exec", "--insns", str(tmp_path / "p.bin"), "--dram", str(tmp_path / "dram.bin"),
            *more]


def test_exec_json_is_the_result_alone_on_stdout(tmp_path, program):
    """--json: stdout is one JSON object saying what the text says (the text is on stderr)."""
    out = tmp_path / "out.bin"
    proc = subprocess.run([sys.executable, "-m", "vtabench",
                           *_exec_args(tmp_path, "--out", str(out), "--seed", "7", "--json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["command"] == "exec" and result["target"] == "fsim"
    assert result["seed"] == 7 and result["config"] == "default"
    assert result["instructions"] == len(program.insns)
    assert result["outputs"] == {"out": str(out)} and out.exists()
    assert result["stats"]["wall_s"] >= 0
    assert "seed 7" in proc.stderr and f"wrote {out}" in proc.stderr


@pytest.mark.parametrize("where, needle", [
    ("file/o.bin", "is not a folder"),
    (".", "is a folder, not a file"),
])
def test_exec_refuses_an_unwritable_out_before_the_run(tmp_path, program, where, needle):
    (tmp_path / "file").write_text("a file, not a folder")
    proc = subprocess.run([sys.executable, "-m", "vtabench",
                           *_exec_args(tmp_path, "--out", str(tmp_path / where))],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and f"--out {tmp_path / where}" in proc.stderr
    assert needle in proc.stderr
    assert "config default, target" not in proc.stdout  # refused before the run began


@pytest.mark.parametrize("argv, needle", [
    (["regress", "--count", "1", "--targets", "fsim", "--junit", "{tmp}/file/j.xml"],
     "--junit {tmp}/file/j.xml: {tmp}/file is not a folder"),
    (["regress", "--count", "1", "--targets", "fsim", "--coverage-png", "{tmp}/c.bmp"],
     "--coverage-png {tmp}/c.bmp: the name must end in .png or .svg or .pdf"),
    (["compile", "{tmp}/file", "-o", "{tmp}/file/m.vtapkg"],
     "--output {tmp}/file/m.vtapkg: {tmp}/file is not a folder"),
    (["smoke", "--target", "fsim", "--report", "{tmp}"], "--report {tmp}: is a folder"),
])
def test_unwritable_outputs_are_refused_first(tmp_path, capsys, argv, needle):
    """An output that cannot be written is one line and exit 2 before the work starts (regress
    would otherwise run its whole campaign first)."""
    (tmp_path / "file").write_text("a file, not a folder")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    captured = capsys.readouterr()
    assert needle.format(tmp=tmp_path) in captured.err and captured.err.count("\n") == 1
    assert captured.out == ""


def test_a_signal_wrapped_by_an_import_ends_like_a_signal(capsys, monkeypatch) -> None:
    """SIGINT landing in a class body's __set_name__ during an import (TVM's) reaches the CLI as
    a RuntimeError raised from KeyboardInterrupt: one line and 130, not a traceback."""
    from vtabench import cli
    from vtabench.cli import validate

    def interrupted_import(args):  # type: ignore[no-untyped-def]
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc

    monkeypatch.setattr(validate, "run", interrupted_import)
    assert cli.main(["validate", "nothing.bin"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["vtabench validate: interrupted (SIGINT); children stopped, temporary files removed"]
