"""Assertion and FSM cover points for the coverage build (issue #31 item 1), without touching hdl/.

Verilator counts a ``cover property`` as a user coverage point (``--coverage-user``, page
v_user); it counts nothing for an ``assert property``. :func:`instrument` writes a copy of hdl/
in which

- every ``NAME: assert property (@(CLK) disable iff (OFF) A |-> B)`` has a twin
  ``cov_NAME: cover property (@(CLK) disable iff (OFF) A)``: the assertion's trigger (its
  antecedent; for a property without one, ``1'b1``: checked at least once out of reset) was
  reached, so the assertion was not vacuous;
- every register ``X_q`` of an enum type (``typedef enum ... {S_A, S_B} x_e; x_e X_q, X_d;``)
  has ``fsm_X_q_S_A`` for each state (``X_q == S_A``) and ``fsm_X_q_S_A_to_S_B`` for each arc
  between two states (``X_q == S_A && X_d == S_B``), enabled like the module's assertions
  (``VTA_ASSERT_OFF``: not before the first reset, whose random power-up state is no state the
  design reached). An arc the next-state logic cannot take stays unhit: waive it with the reason.

Each twin is written on the same source line as the statement it follows, and every file of the
copy starts with a ```line`` directive naming the original, so every point keeps its file (a
module of hdl/, for the sign-off) and line, and the cover points sit on their assertion's (or,
for an FSM, the module's last assertion's) line.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from vtabench.sources import HDL_DIR

_ASSERT = re.compile(r"\b(?P<name>\w+)\s*:\s*assert\s+property\s*\(")
_ENUM = re.compile(r"typedef\s+enum\s+logic\s*\[[^\]]*\]\s*\{(?P<states>[^}]*)\}\s*(?P<type>\w+)\s*;")
_IMPLIES = ("|->", "|=>")


@dataclass(frozen=True)
class Assertion:
    name: str
    clock: str  # the event control, e.g. "@(posedge clk_i)"
    disable: str | None  # the disable iff condition
    trigger: str  # the antecedent, or "1'b1"
    end: int  # offset just after the statement's ';'


def _close(text: str, start: int) -> int:
    """The offset of the ')' closing the '(' at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses from offset {start}")


def _top_level(text: str, token: str) -> int:
    """The offset of ``token`` outside every parenthesis/brace in ``text``, or -1."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif depth == 0 and text.startswith(token, i):
            return i
    return -1


def assertions(text: str) -> list[Assertion]:
    """The concurrent assertions of a SystemVerilog source (named ``NAME: assert property``)."""
    out = []
    for m in _ASSERT.finditer(text):
        open_ = m.end() - 1
        close = _close(text, open_)
        body = text[open_ + 1:close].strip()
        clock = ""
        if body.startswith("@"):
            c_close = _close(body, body.index("("))
            clock, body = body[:c_close + 1], body[c_close + 1:].strip()
        disable = None
        d = re.match(r"disable\s+iff\s*\(", body)
        if d:
            d_close = _close(body, d.end() - 1)
            disable, body = body[d.end():d_close].strip(), body[d_close + 1:].strip()
        cut = min((i for i in (_top_level(body, t) for t in _IMPLIES) if i >= 0), default=-1)
        trigger = " ".join(body[:cut].split()) if cut >= 0 else "1'b1"
        end = close + 1  # the statement runs to the ';' at depth 0 (through an else action)
        depth = 0
        while end < len(text):
            ch = text[end]
            depth += ch == "("
            depth -= ch == ")"
            if ch == ";" and depth == 0:
                break
            end += 1
        out.append(Assertion(m["name"], clock, disable, trigger, end + 1))
    return out


def fsm_registers(text: str) -> dict[str, list[str]]:
    """``X_q`` -> its states, for every register of an enum type (with its ``X_d``)."""
    out: dict[str, list[str]] = {}
    for m in _ENUM.finditer(text):
        states = [s.split("=")[0].strip() for s in m["states"].split(",") if s.strip()]
        for decl in re.finditer(rf"^\s*{m['type']}\s+(?P<names>[^;]+);", text, re.M):
            names = [n.strip() for n in decl["names"].split(",")]
            out.update({n: states for n in names if n.endswith("_q")
                        and n[:-2] + "_d" in names})
    return out


def covers(text: str) -> dict[int, str]:
    """Offset -> the cover statements to insert there (see the module docstring)."""
    found = assertions(text)
    at: dict[int, list[str]] = {}
    for a in found:
        off = f" disable iff ({a.disable})" if a.disable else ""
        at.setdefault(a.end, []).append(
            f"cov_{a.name}: cover property ({a.clock}{off} {a.trigger});")
    fsms = fsm_registers(text)
    if fsms:
        if not found:
            raise ValueError("an FSM in a module without assertions: no VTA_ASSERT_OFF to use")
        last = found[-1]
        for reg, states in fsms.items():
            nxt = reg[:-2] + "_d"
            for s in states:
                at.setdefault(last.end, []).append(
                    f"fsm_{reg}_{s}: cover property ({last.clock} disable iff (`VTA_ASSERT_OFF) "
                    f"{reg} == {s});")
            for a in states:
                for b in states:
                    if a != b:
                        at.setdefault(last.end, []).append(  # (Verilator escapes "__")
                            f"fsm_{reg}_{a}_to_{b}: cover property ({last.clock} disable iff "
                            f"(`VTA_ASSERT_OFF) {reg} == {a} && {nxt} == {b});")
    return {k: " " + " ".join(v) for k, v in at.items()}


def instrumented_text(text: str, original: Path) -> str:
    """``text`` (the source of ``original``) with its cover points, its lines where they were."""
    out, last = [], 0
    for offset, statements in sorted(covers(text).items()):
        out += [text[last:offset], statements]
        last = offset
    out.append(text[last:])
    return f'`line 1 "{original}" 0\n' + "".join(out)


def instrument(dest: Path, hdl_dir: Path = HDL_DIR) -> Path:
    """A copy of ``hdl_dir`` in ``dest`` whose modules carry their cover points; returns it."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(hdl_dir, dest)
    for src in sorted(hdl_dir.glob("*.sv")):
        (dest / src.name).write_text(instrumented_text(src.read_text(), src))
    return dest
