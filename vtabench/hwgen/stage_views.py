"""The stages and token queues: one data file (spec/contracts/stages.json).

Views: the SV package ``vta_stage_pkg`` (hdl/gen/vta_stage_pkg.sv: ``STAGE_<NAME>``,
``QUEUE_<NAME>``), the ``STAGE_<NAME>`` / ``Q_<NAME>`` section of the OpenCL header
(:mod:`vtabench.hwgen.contracts`), the Python module spec/contracts/stages.py (``Stage``,
``TokenQueue``, ``QUEUE_ENDS``, which :mod:`vtabench.spec.tokens` builds on) and the stage and
queue tables of docs/contracts.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vtabench.hwgen.contract_data import (CONTRACTS_DIR, ContractError, Named, check_unique,
                                          generated_by, named_entries, need, need_int, need_name,
                                          read_contract)
from vtabench.hwgen.render import aligned, render

STAGES_JSON = CONTRACTS_DIR / "stages.json"
#: The instruction flags a queue end may use (docs/isa.md section 3).
PUSH_FLAGS = ("push_prev_dep", "push_next_dep")
POP_FLAGS = ("pop_prev_dep", "pop_next_dep")
HEADER = generated_by(__name__, STAGES_JSON)


@dataclass(frozen=True)
class Queue:
    name: str
    id: int
    producer: str
    push_flag: str
    consumer: str
    pop_flag: str
    doc: str


@dataclass(frozen=True)
class Stages:
    doc: str
    stages: tuple[Named, ...]  # value: the stage id
    queues: tuple[Queue, ...]


def _ids_from_zero(items: list[tuple[str, int]], what: str, where: str) -> None:
    check_unique(items, what, where)
    if sorted(v for _, v in items) != list(range(len(items))):
        raise ContractError(f"{where}: {what} ids are not 0..{len(items) - 1} in order")
    if [v for _, v in items] != sorted(v for _, v in items):
        raise ContractError(f"{where}: {what}s are not listed in id order")


def load_stages(path: Path = STAGES_JSON) -> Stages:
    raw = read_contract(path)
    where = path.name
    stages = named_entries(raw, "stages", where, "id")
    _ids_from_zero([(s.name, s.value) for s in stages], "stage", where)
    names = [s.name for s in stages]
    queues = []
    ends: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(need(raw, "queues", list, where)):
        name = need_name(entry, f"{where}: queues[{i}]")
        at = f"{where}: queue {name}"
        q = Queue(name, need_int(entry, "id", at), need(entry, "producer", str, at),
                  need(entry, "push_flag", str, at), need(entry, "consumer", str, at),
                  need(entry, "pop_flag", str, at), need(entry, "doc", str, at))
        for stage, flag, flags in ((q.producer, q.push_flag, PUSH_FLAGS),
                                   (q.consumer, q.pop_flag, POP_FLAGS)):
            if stage not in names:
                raise ContractError(f"{at}: unknown stage {stage!r} (stages: {names})")
            if flag not in flags:
                raise ContractError(f"{at}: flag {flag!r} is not one of {list(flags)}")
            if (stage, flag) in ends:
                raise ContractError(f"{at}: {stage} {flag} already serves queue "
                                    f"{ends[(stage, flag)]}")
            ends[(stage, flag)] = name
        queues.append(q)
    _ids_from_zero([(q.name, q.id) for q in queues], "queue", where)
    return Stages(need(raw, "doc", str, where), stages, tuple(queues))


def _width(count: int) -> int:
    return max(1, (count - 1).bit_length())


def sv_package(st: Stages) -> str:
    sw, qw = _width(len(st.stages)), _width(len(st.queues))
    stages = aligned([(f"localparam logic [{sw - 1}:0] STAGE_{s.name}", f" = {sw}'d{s.value};",
                       f"  // {s.doc}") for s in st.stages], "  ")
    queues = aligned([(f"localparam logic [{qw - 1}:0] QUEUE_{q.name}", f" = {qw}'d{q.id};",
                       f"  // {q.producer.lower()} -> {q.consumer.lower()}") for q in st.queues],
                     "  ")
    return render("vta_stage_pkg.sv.tmpl", header=HEADER, stage_width=str(sw),
                  queue_width=str(qw), stages=stages, queues=queues)


def c_section(st: Stages) -> str:
    rows = [(f"#define STAGE_{s.name}", f" {s.value}", f"  /* {s.doc} */") for s in st.stages]
    rows += [(f"#define Q_{q.name}", f" {q.id}",
              f"  /* {q.producer.lower()} -> {q.consumer.lower()} */") for q in st.queues]
    return aligned(rows)


def py_module(st: Stages) -> str:
    stages = aligned([(f"{s.name} = {s.value}", f"  # {s.doc}") for s in st.stages], "    ")
    queues = aligned([(f"{q.name} = {q.id}", f"  # {q.producer.lower()} -> {q.consumer.lower()}")
                      for q in st.queues], "    ")
    ends = "\n".join(f"    TokenQueue.{q.name}: QueueEnds(Stage.{q.producer}, {q.push_flag!r}, "
                     f"Stage.{q.consumer}, {q.pop_flag!r})," for q in st.queues)
    return render("stages.py.tmpl", header=HEADER, stages=stages, queues=queues, ends=ends)


def markdown(st: Stages) -> str:
    stages = "\n".join(f"| {s.value} | {s.name} | {s.doc} |" for s in st.stages)
    queues = "\n".join(f"| {q.id} | {q.name} | {q.producer} ({q.push_flag}) | "
                       f"{q.consumer} ({q.pop_flag}) | {q.doc} |" for q in st.queues)
    return render("stages.md.tmpl", doc=st.doc, stages=stages, queues=queues)
