"""The VTA instruction set: layout, encoding, assembly, programs."""

from vtabench.spec.isa.insn import (INSN_BYTES, EncodeError, Insn, decode_insn, decode_program,
                               decode_uops, encode_insn, encode_program, encode_uops)
from vtabench.spec.isa.layout import (AluOp, MemType, Opcode, insn_layout, mem_depth, mem_elem_bytes,
                                 uop_layout)

__all__ = ["INSN_BYTES", "AluOp", "EncodeError", "Insn", "MemType", "Opcode", "decode_insn",
           "decode_program", "decode_uops", "encode_insn", "encode_program", "encode_uops",
           "insn_layout", "mem_depth", "mem_elem_bytes", "uop_layout"]
