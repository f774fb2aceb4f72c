"""The wire protocol between a driver (Python or C) and the simulated card (docs/platform.md).

One Unix stream socket per device; the driver sends a request, the simulator answers it, one at
a time. Every message is a fixed 32-byte little-endian header followed by ``count`` payload bytes:

    request  op u32 | count u32 | addr u64 | nbytes u64 | ns f64
    reply    status i32 | count u32 | value u64 | ns f64 | now_ns f64

The device DRAM is a file both sides map (the simulator's DRAM model and the driver): a DMA is a
request that advances simulated time by the link model and answers how many bytes landed; the
driver then copies those bytes itself (``memcpy`` into or out of the mapping) before its next
request. Nothing in the simulator runs between two requests, so the copy is where the DMA's data
lands. Simulated time only advances inside a request.

The C driver includes a header generated from this module (:func:`c_header`), so the op codes and
the layouts live here only.
"""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

#: Bumped when a message changes; HELLO answers it and drivers refuse another.
PROTOCOL_VERSION = 1

REQUEST = struct.Struct("<IIQQd")
REPLY = struct.Struct("<iIQdd")
#: One MMIO operation of an MMIO request: kind, BAR0 offset, value, byte enables.
MMIO_OP = struct.Struct("<IIII")
#: ``ns`` of a request that has no time limit.
NO_LIMIT = -1.0


class Op(IntEnum):
    """Request kinds. ``addr`` / ``nbytes`` / ``ns`` / payload as noted; ``value`` of the reply."""

    HELLO = 1     # -> value: PROTOCOL_VERSION, ns: clock period, payload: DRAM file path
    ATTACH = 2    # addr: DRAM bytes; resets the card with that much zeroed DRAM
    MMIO = 3      # payload: MMIO_OP records -> payload: one u32 per op (reads; 0 for writes)
    DMA_H2D = 4   # addr, nbytes, ns: timeout -> value: bytes that may land, ns: modelled time
    DMA_D2H = 5   # as DMA_H2D, device to host
    WAIT_IRQ = 6  # ns: longest wait -> value: 1 when an MSI arrived (and was taken)
    TAKE_IRQ = 7  # -> value: MSIs that had arrived and were not taken (all are taken now)
    IDLE = 8      # ns: let simulated time pass
    CALL = 9      # payload: JSON {"fn": name, "kwargs": {...}} -> payload: JSON result
    BYE = 10      # the driver leaves; the connection closes after the reply


class Status(IntEnum):
    OK = 0
    DMA_ERROR = 1    # value: bytes that landed before the error
    DMA_TIMEOUT = 2  # nothing landed; the transfer was aborted after ns
    FAILED = 3       # the request was refused or raised; payload: the message


class MmioKind(IntEnum):
    READ = 0
    WRITE = 1


@dataclass(frozen=True)
class Reply:
    status: Status
    value: int
    ns: float
    now_ns: float
    payload: bytes


class PeerGone(ConnectionError):
    """The other side closed the connection (or died) in the middle of a message."""


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from ``sock``; :class:`PeerGone` at end of stream."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise PeerGone(f"connection closed after {got} of {n} bytes")
        got += k
    return bytes(buf)


def pack_mmio(ops: Sequence[tuple]) -> bytes:
    """MMIO ops ``("r", off)``, ``("w", off, value)`` or ``("w", off, value, strb)`` as the
    request payload."""
    out = bytearray()
    for op in ops:
        if op[0] == "r":
            out += MMIO_OP.pack(MmioKind.READ, op[1], 0, 0)
        elif op[0] == "w":
            out += MMIO_OP.pack(MmioKind.WRITE, op[1], op[2] & 0xFFFFFFFF,
                                op[3] if len(op) > 3 else 0xF)
        else:
            raise ValueError(f"bad MMIO op {op!r}: ('r', offset) or ('w', offset, value[, strb])")
    return bytes(out)


def unpack_mmio(payload: bytes) -> list[tuple[MmioKind, int, int, int]]:
    if len(payload) % MMIO_OP.size:
        raise ValueError(f"MMIO payload of {len(payload)} bytes is not a whole number of "
                         f"{MMIO_OP.size}-byte records")
    return [(MmioKind(k), off, val, strb) for k, off, val, strb in MMIO_OP.iter_unpack(payload)]


def call_payload(fn: str, **kwargs: Any) -> bytes:
    return json.dumps({"fn": fn, "kwargs": kwargs}).encode()


# ------------------------------------------------------------------------------------------------
# The C view
# ------------------------------------------------------------------------------------------------
def c_header() -> str:
    """``vta_sim_protocol.h``: the op codes, statuses and message layouts for the C driver."""
    lines = ["/* Generated from vtabench.tb.platform.protocol by the C driver build. Do not edit. */",
             "#ifndef VTA_SIM_PROTOCOL_H_", "#define VTA_SIM_PROTOCOL_H_", "",
             "#include <stdint.h>", "",
             f"#define VTA_SIM_PROTOCOL_VERSION {PROTOCOL_VERSION}u",
             f"#define VTA_SIM_NO_LIMIT ({NO_LIMIT})", ""]
    lines += [f"#define VTA_SIM_OP_{op.name} {int(op)}u" for op in Op]
    lines += [""] + [f"#define VTA_SIM_STATUS_{s.name} {int(s)}" for s in Status]
    lines += [""] + [f"#define VTA_SIM_MMIO_{k.name} {int(k)}u" for k in MmioKind]
    lines += ["",
              "typedef struct { uint32_t op; uint32_t count; uint64_t addr; uint64_t nbytes; "
              "double ns; } vta_sim_request_t;",
              "typedef struct { int32_t status; uint32_t count; uint64_t value; double ns; "
              "double now_ns; } vta_sim_reply_t;",
              "typedef struct { uint32_t kind; uint32_t offset; uint32_t value; uint32_t strb; } "
              "vta_sim_mmio_op_t;",
              f"_Static_assert(sizeof(vta_sim_request_t) == {REQUEST.size}, \"request layout\");",
              f"_Static_assert(sizeof(vta_sim_reply_t) == {REPLY.size}, \"reply layout\");",
              f"_Static_assert(sizeof(vta_sim_mmio_op_t) == {MMIO_OP.size}, \"MMIO op layout\");",
              "", "#endif  /* VTA_SIM_PROTOCOL_H_ */", ""]
    return "\n".join(lines)
