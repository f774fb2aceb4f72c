"""The register map's fields by what a write does to them, for the benches that check the register
block against the generated map (tb/unit/test_shell.py on the shell alone, tests/test_regs_rtl.py
through the PCIe platform)."""

from __future__ import annotations

from vtabench.spec.contracts import regs as R


def field_mask(f: R.Field) -> int:
    """The bits of ``f`` in its register."""
    return ((1 << f.width) - 1) << f.lsb


def fields_with_access(*kinds: str) -> list[tuple[str, str, R.Field]]:
    """(register, field name, field) of every field whose access is one of ``kinds``."""
    return [(reg, name, f) for reg, fs in R.FIELDS.items() for name, f in fs.items()
            if f.access in kinds]


def effect_bits(reg: str) -> int:
    """Bits of ``reg`` where writing 1 does something (a pulse, a clear)."""
    return sum(field_mask(f) for f in R.FIELDS[reg].values()
               if f.access in ("wo_pulse", "w1c"))
