"""Graph compiler: int8 QDQ ONNX networks split between the CPU (TVM llvm) and VTA.

    from vtabench.graph import compile_model, run_package
    pkg = compile_model("model.onnx", "default")        # import, partition, place, compile
    [res] = run_package(pkg, "fsim", [x])               # res.outputs, res.per_inference

See docs/graph.md.
"""

from vtabench.graph.compile import compile_model, prepare_graph, reference_package
from vtabench.graph.execute import Executor, run_package
from vtabench.graph.package import Package

__all__ = ["Executor", "Package", "compile_model", "prepare_graph", "reference_package",
           "run_package"]
