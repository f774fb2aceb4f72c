"""TVM operator compiler: TE definitions + s_tir schedules tensorized to VTA, emitted as
instruction streams through :mod:`vtabench.runtime`. See docs/compiler.md."""

from vtabench.compiler.compile import CompiledOp, compile_op, llvm_reference
from vtabench.compiler.ops import (CompileError, Conv2dSpec, ConvTransposeSpec, DenseSpec,
                                  MaxPoolSpec, UpsampleSpec)
from vtabench.compiler.tiling import Tiling, choose_tiling

__all__ = ["CompileError", "CompiledOp", "Conv2dSpec", "ConvTransposeSpec", "DenseSpec",
           "MaxPoolSpec", "Tiling", "UpsampleSpec", "choose_tiling", "compile_op",
           "llvm_reference"]
