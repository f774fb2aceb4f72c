"""The statement structure of a lowered operator and a visitor over it.

After :func:`~vtabench.compiler.lowering.lower`, an operator's body is built from three kinds of
statement: ``For`` loops, opaque blocks (``SBlockRealize``, which allocate the on-chip buffers)
and ``SeqStmt`` sequences, down to *leaf nests*: a perfect nest of loops (possibly none) around
a leaf block, whose body is one ``BufferStore`` or ``Evaluate`` and which allocates nothing.
:class:`OperatorVisitor` dispatches on the node classes (``isinstance``) and hands each leaf nest
over whole.
"""

from __future__ import annotations

from typing import Any

from tvm import s_tir, tirx

from vtabench.compiler.ops import CompileError


def is_leaf(blk: s_tir.SBlock) -> bool:
    """A block that is one VTA instruction group: a single store or call, no allocation."""
    return isinstance(blk.body, (tirx.BufferStore, tirx.Evaluate)) and not blk.alloc_buffers


def leaf_nest(stmt: tirx.For) -> tuple[list[tirx.For], s_tir.SBlock | None]:
    """The perfect loop nest starting at ``stmt`` and its leaf block, or None when the nest
    does not end at a leaf block."""
    loops = []
    s: Any = stmt
    while isinstance(s, tirx.For):
        loops.append(s)
        s = s.body
    if isinstance(s, s_tir.SBlockRealize) and is_leaf(s.block):
        return loops, s.block
    return loops, None


class OperatorVisitor:
    """Visits a lowered operator's statements: override :meth:`visit_leaf` (a leaf nest: its
    loops, outer first, and the leaf block), :meth:`visit_for` (a loop that is not the head of a
    leaf nest) and :meth:`visit_block` (an opaque block that is not a leaf); the defaults
    recurse into the body."""

    def visit(self, stmt: Any) -> None:
        if isinstance(stmt, tirx.For):
            loops, leaf = leaf_nest(stmt)
            if leaf is not None:
                self.visit_leaf(loops, leaf)
            else:
                self.visit_for(stmt)
        elif isinstance(stmt, s_tir.SBlockRealize):
            if is_leaf(stmt.block):
                self.visit_leaf([], stmt.block)
            else:
                self.visit_block(stmt.block)
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self.visit(s)
        else:
            raise CompileError(f"unexpected statement {type(stmt).__name__} in the lowered "
                               f"operator")

    def visit_leaf(self, loops: list[tirx.For], blk: s_tir.SBlock) -> None:
        raise NotImplementedError

    def visit_for(self, loop: tirx.For) -> None:
        self.visit(loop.body)

    def visit_block(self, blk: s_tir.SBlock) -> None:
        self.visit(blk.body)
