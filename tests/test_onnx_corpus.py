"""``vtabench compile`` never answers with a traceback.

Every model file the ``onnx`` package ships under ``onnx/backend/test/data`` (single operators,
small PyTorch-converted networks, the "light" model zoo networks; float, so the CPU runs them)
either compiles or exits with status 2 and one line naming the node, input or output and the
reason. The default run takes every file but the three light networks whose CPU part takes TVM
longest to build (about two minutes of the full corpus's three and a half on the development
machine); ``test_corpus_full`` (slow) takes them all. Likewise a truncated file, a file that is
not ONNX, and a dynamic batch dimension (the message says which input and what to pass).
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from vtabench.cli import main

pytestmark = pytest.mark.tvm

CORPUS = Path(onnx.__file__).parent / "backend" / "test" / "data"
SLOW = {"light_densenet121.onnx", "light_inception_v1.onnx", "light_inception_v2.onnx"}
MODELS = sorted(CORPUS.rglob("*.onnx"))


def _compile(capfd: pytest.CaptureFixture, path: Path, tmp: Path, *extra: str
             ) -> tuple[int, str]:
    """Exit status and stderr (file descriptor 2: TVM's C++ logging included) of ``vtabench
    compile``; an exception escaping is a failure."""
    capfd.readouterr()
    rc = main(["compile", str(path), "--no-profile", "-o", str(tmp / "m.vtapkg"), *extra])
    return rc, capfd.readouterr().err


def _check_corpus(capfd: pytest.CaptureFixture, models: list[Path], tmp: Path
                  ) -> dict[str, int]:
    counts = {"compiled": 0, "refused": 0}
    tracebacks = []
    for path in models:
        try:
            rc, err = _compile(capfd, path, tmp)
        except Exception as exc:  # noqa: BLE001 - what this test looks for
            tracebacks.append(f"{path.relative_to(CORPUS)}: {type(exc).__name__}: {exc}"[:300])
            continue
        if rc == 0:
            counts["compiled"] += 1
            continue
        lines = err.strip().splitlines()
        assert rc == 2 and len(lines) == 1, (path, rc, err)
        assert lines[0].startswith("vtabench compile: error: "), err
        counts["refused"] += 1
    assert not tracebacks, "\n".join(tracebacks)
    return counts


def test_corpus(tmp_path, capfd):
    models = [m for m in MODELS if m.name not in SLOW]
    assert len(models) > 100
    counts = _check_corpus(capfd, models, tmp_path)
    assert counts["compiled"] > 100  # float models: the CPU runs them


@pytest.mark.slow
def test_corpus_full(tmp_path, capfd):
    counts = _check_corpus(capfd, MODELS, tmp_path)
    assert sum(counts.values()) == len(MODELS)


def test_refused_one_line(tmp_path, capfd):
    """The reasons name what is wrong: an operator without a converter names its node."""
    rc, err = _compile(capfd, CORPUS / "simple" / "test_gradient_of_add" / "model.onnx",
                       tmp_path)
    assert rc == 2 and "node my_gradient" in err and "Gradient" in err


def test_bad_files(tmp_path, capfd):
    from vtabench.workloads import small_resnet

    good = tmp_path / "good.onnx"
    onnx.save(small_resnet(), good)
    data = good.read_bytes()
    (tmp_path / "cut.onnx").write_bytes(data[:len(data) // 3])
    (tmp_path / "text.onnx").write_text("not a model\n")
    for name in ("cut.onnx", "text.onnx"):
        rc, err = _compile(capfd, tmp_path / name, tmp_path)
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{name}: not an ONNX model" in err, err
    rc, err = _compile(capfd, tmp_path / "missing.onnx", tmp_path)
    assert rc == 2 and "no such file" in err


def test_dynamic_batch(tmp_path, capfd):
    """A dynamic batch dimension is refused with the input's name and the --shape to pass;
    with it the model compiles."""
    from vtabench.workloads import small_resnet

    m = small_resnet()
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    path = tmp_path / "dyn.onnx"
    onnx.save(m, path)
    rc, err = _compile(capfd, path, tmp_path)
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "input 'input' has a dynamic dimension 0 (batch)" in err
    assert "--shape input=1,3,16,16" in err
    assert _compile(capfd, path, tmp_path, "--shape", "input=1,3,16,16")[0] == 0
    rc, err = _compile(capfd, path, tmp_path, "--shape", "input=1,3")
    assert rc == 2 and "--shape input: 2 dimensions, the input has 4" in err
