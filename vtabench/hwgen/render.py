"""The fixed text of every contract view lives in a ``string.Template`` file of
hwgen/templates/; a generator computes the rows and :func:`render` fills them in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from string import Template

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


def render(template: str, **values: str) -> str:
    """The template ``hwgen/templates/<template>`` with every ``$name`` replaced."""
    return Template((TEMPLATE_DIR / template).read_text()).substitute(values)


def aligned(rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Rows of cells as lines, each column but the last padded to its widest cell; a cell that
    is empty in the last column drops the trailing blanks."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        head = "".join(c.ljust(w) for c, w in zip(r, widths))
        lines.append((indent + head + r[-1]).rstrip())
    return "\n".join(lines)
