"""The graph passes as data: a :class:`Pipeline` is a named list of :class:`Pass` (each a
function graph -> graph) that one driver loop runs, checking the IR's invariants after every
pass (:func:`vtabench.graph.ir_verify.verify_graph`) and, when asked, writing the graph's text
form (:mod:`vtabench.graph.ir_text`) before the first pass and after each one, numbered:
``00-to_graph.txt``, ``01-fold_activations.txt``, ...

The passes of the graph compiler, in order, are :func:`vtabench.graph.compile.graph_pipeline`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vtabench.graph.ir import Graph
from vtabench.graph.ir_text import graph_text
from vtabench.graph.ir_verify import verify_graph


@dataclass(frozen=True)
class Pass:
    """One step of the pipeline: ``run`` takes the graph and returns the graph after it."""

    name: str
    run: Callable[[Graph], Graph]


def in_place(name: str, fn: Callable[[Graph], object]) -> Pass:
    """A pass from a function that changes the graph where it lies (its result ignored)."""
    def run(g: Graph) -> Graph:
        fn(g)
        return g
    return Pass(name, run)


@dataclass(frozen=True)
class Pipeline:
    passes: tuple[Pass, ...]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.passes]

    def run(self, g: Graph, *, source: str = "to_graph", dump_dir: Path | None = None) -> Graph:
        """Verify ``g`` (as ``source`` made it), then run every pass and verify its result;
        ``dump_dir``: write the text form of each of these graphs there (the folder is made)."""
        verify_graph(g, after=source)
        if dump_dir is not None:
            dump_dir.mkdir(parents=True, exist_ok=True)
            _dump(dump_dir, 0, source, g)
        for i, p in enumerate(self.passes, 1):
            g = p.run(g)
            verify_graph(g, after=p.name)
            if dump_dir is not None:
                _dump(dump_dir, i, p.name, g)
        return g


def _dump(folder: Path, index: int, name: str, g: Graph) -> None:
    (folder / f"{index:02d}-{name}.txt").write_text(graph_text(g, f"after {name}"))
