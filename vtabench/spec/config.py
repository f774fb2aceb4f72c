"""Hardware configurations: loading, checking and the sizes every design entry derives from them.

A configuration is a JSON file in config/ with upstream VTA's keys (``vta_config.json``) and
optional implementation keys (:data:`OPTIONAL_KEYS`, e.g. ACC8_WIN_BEATS, AXI_DATA_BITS). Every
other size (element bytes, buffer depths, index widths, instruction field widths) is derived here,
once, and the instruction layout (:mod:`vtabench.spec.isa.layout`), the generated SystemVerilog package,
the OpenCL header and the Python constants all come from the :class:`Config` this module returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vtabench.spec.isa.layout import SRAM_ADDR_BITS, UOP_BITS, layout_overflow

CONFIG_DIR = Path(__file__).resolve().parent / "configs"

#: The keys a configuration file must have, with their allowed inclusive range and why.
KEY_LIMITS: dict[str, tuple[int, int, str]] = {
    "LOG_INP_WIDTH": (3, 3, "inputs are int8 in this ISA version"),
    "LOG_WGT_WIDTH": (3, 3, "weights are int8 in this ISA version"),
    "LOG_ACC_WIDTH": (5, 5, "accumulators are int32 in this ISA version"),
    "LOG_BATCH": (0, 4, "BATCH from 1 to 16"),
    "LOG_BLOCK": (1, 6, "BLOCK from 2 to 64"),
    "LOG_UOP_BUFF_SIZE": (3, 30, "micro-op buffer bytes"),
    "LOG_INP_BUFF_SIZE": (3, 30, "input buffer bytes"),
    "LOG_WGT_BUFF_SIZE": (3, 30, "weight buffer bytes"),
    "LOG_ACC_BUFF_SIZE": (3, 30, "accumulator buffer bytes"),
}

#: Optional keys: implementation choices of the hardware, not part of the ISA. Each has a default
#: (what a configuration file without the key gets), its allowed values and why. They are left out
#: of CONFIG_ID (:attr:`Config.config_id`): a program, a driver and fsim see the same machine
#: whatever their value; only cycle counts and FPGA area differ.
OPTIONAL_KEYS: dict[str, tuple[int, tuple[int, ...], str]] = {
    "ACC8_WIN_BEATS": (4, (1, 4), "bus beats of the acc buffer's write window: a LOAD ACC_8BIT "
                       "beat (int8 -> int32, four beats of int32) is written in one cycle (4) or "
                       "in four quarter-beat cycles (1: a quarter of the acc buffer's write "
                       "banks and muxes)"),
    "AXI_DATA_BITS": (512, (128, 256, 512), "bits of the core's AXI4 master data bus, one DMA "
                      "beat: at least one 128-bit instruction; narrower buses shrink every DMA "
                      "window, fetch's beat buffer and the store's beat assembly"),
}

#: Dependency-token queue capacity (tokens) and per-stage command queue capacity (instructions).
#: Fixed by the spec (docs/isa.md) rather than per configuration: the validator models both so a
#: program that would stall a full queue on hardware is rejected before launch.
TOKEN_QUEUE_DEPTH = 256
CMD_QUEUE_DEPTH = 512
#: Fetch reads instructions in groups of at most this many bus beats (one AXI burst each, never
#: across a group boundary): the RTL's fetch and the regression's alignment bins share it.
FETCH_GROUP_BEATS = 8


class ConfigError(ValueError):
    """A configuration file is missing a key, has a value out of range, or derives a width that
    does not fit its instruction field. The message names the key and the limit."""


@dataclass(frozen=True)
class Config:
    """One hardware configuration with everything derived from it."""

    name: str
    log_inp_width: int
    log_wgt_width: int
    log_acc_width: int
    log_batch: int
    log_block: int
    log_uop_buff_size: int
    log_inp_buff_size: int
    log_wgt_buff_size: int
    log_acc_buff_size: int
    # --- optional keys (OPTIONAL_KEYS) ---------------------------------------------------------
    acc8_win_beats: int = OPTIONAL_KEYS["ACC8_WIN_BEATS"][0]
    axi_data_bits: int = OPTIONAL_KEYS["AXI_DATA_BITS"][0]

    @property
    def bus_bytes(self) -> int:
        """Bytes of one AXI data beat (AXI_DATA_BITS / 8)."""
        return self.axi_data_bits // 8

    # --- tensor shape -----------------------------------------------------------------------
    @property
    def batch(self) -> int:
        return 1 << self.log_batch

    @property
    def block(self) -> int:
        return 1 << self.log_block

    @property
    def block_in(self) -> int:
        return self.block

    @property
    def block_out(self) -> int:
        return self.block

    @property
    def macs_per_cycle(self) -> int:
        return self.batch * self.block_in * self.block_out

    # --- element sizes in bytes (one buffer element = one tensor tile) -----------------------
    @property
    def inp_elem_bytes(self) -> int:
        return self.batch * self.block_in * (1 << self.log_inp_width) // 8

    @property
    def wgt_elem_bytes(self) -> int:
        return self.block_out * self.block_in * (1 << self.log_wgt_width) // 8

    @property
    def acc_elem_bytes(self) -> int:
        return self.batch * self.block_out * (1 << self.log_acc_width) // 8

    @property
    def out_elem_bytes(self) -> int:
        return self.batch * self.block_out * (1 << self.log_inp_width) // 8

    @property
    def acc8_elem_bytes(self) -> int:
        """LOAD ACC_8BIT reads int8 tiles of the accumulator's shape."""
        return self.batch * self.block_out

    uop_elem_bytes = UOP_BITS // 8

    # --- buffer depths (elements) and their index widths -------------------------------------
    @property
    def log_uop_depth(self) -> int:
        return self.log_uop_buff_size - 2

    @property
    def log_inp_depth(self) -> int:
        return self.log_inp_buff_size - _log2(self.inp_elem_bytes)

    @property
    def log_wgt_depth(self) -> int:
        return self.log_wgt_buff_size - _log2(self.wgt_elem_bytes)

    @property
    def log_acc_depth(self) -> int:
        return self.log_acc_buff_size - _log2(self.acc_elem_bytes)

    @property
    def log_out_depth(self) -> int:
        return self.log_acc_depth

    @property
    def uop_depth(self) -> int:
        return 1 << self.log_uop_depth

    @property
    def inp_depth(self) -> int:
        return 1 << self.log_inp_depth

    @property
    def wgt_depth(self) -> int:
        return 1 << self.log_wgt_depth

    @property
    def acc_depth(self) -> int:
        return 1 << self.log_acc_depth

    @property
    def out_depth(self) -> int:
        return self.acc_depth

    @property
    def uop_src_bits(self) -> int:
        """The micro-op src field indexes inp (GEMM) or acc (ALU): as wide as the wider."""
        return max(self.log_inp_depth, self.log_acc_depth)

    def as_dict(self) -> dict[str, int | str]:
        """The configuration file's content: every ISA key, and each optional key that is not at
        its default (so a file without optional keys and its as_dict() are the same)."""
        out: dict[str, int | str] = {
            "NAME": self.name,
            "LOG_INP_WIDTH": self.log_inp_width,
            "LOG_WGT_WIDTH": self.log_wgt_width,
            "LOG_ACC_WIDTH": self.log_acc_width,
            "LOG_BATCH": self.log_batch,
            "LOG_BLOCK": self.log_block,
            "LOG_UOP_BUFF_SIZE": self.log_uop_buff_size,
            "LOG_INP_BUFF_SIZE": self.log_inp_buff_size,
            "LOG_WGT_BUFF_SIZE": self.log_wgt_buff_size,
            "LOG_ACC_BUFF_SIZE": self.log_acc_buff_size,
        }
        for key, (default, _, _) in OPTIONAL_KEYS.items():
            value = getattr(self, key.lower())
            if value != default:
                out[key] = value
        return out

    @property
    def config_id(self) -> int:
        """32-bit identifier of the configuration (hardware and driver must agree on it): CRC-32
        of the ISA keys only. The optional keys (OPTIONAL_KEYS) are implementation choices that
        no program, driver or golden model can observe, so they do not change it."""
        import zlib

        body = json.dumps({k: v for k, v in self.as_dict().items() if k in KEY_LIMITS},
                          sort_keys=True)
        return zlib.crc32(body.encode())


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ConfigError(f"{n} is not a power of two")
    return n.bit_length() - 1


def config_from_dict(data: dict[str, object], source: str = "<dict>") -> Config:
    """Check every key and derived width of a configuration and build it."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a configuration is a JSON object")
    unknown = sorted(set(data) - set(KEY_LIMITS) - set(OPTIONAL_KEYS) - {"NAME"})
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(unknown)}; allowed: NAME, "
                          + ", ".join([*KEY_LIMITS, *OPTIONAL_KEYS]))
    values: dict[str, int] = {}
    for key, (lo, hi, why) in KEY_LIMITS.items():
        if key not in data:
            raise ConfigError(f"{source}: missing key {key}")
        value = data[key]
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
        if not lo <= value <= hi:
            raise ConfigError(f"{source}: {key}={value} outside [{lo}, {hi}] ({why})")
        values[key] = value
    options: dict[str, int] = {}
    for key, (default, allowed, why) in OPTIONAL_KEYS.items():
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
        if value not in allowed:
            raise ConfigError(f"{source}: {key}={value} not one of "
                              f"{', '.join(map(str, allowed))} ({why})")
        options[key.lower()] = value
    name = data.get("NAME", Path(source).stem)
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"{source}: NAME must be an identifier, got {name!r}")
    cfg = Config(name, *(values[k] for k in KEY_LIMITS), **options)
    _check_derived(cfg, source)
    return cfg


def _check_derived(cfg: Config, source: str) -> None:
    depths = {
        "LOG_UOP_BUFF_SIZE": ("uop", cfg.log_uop_depth),
        "LOG_INP_BUFF_SIZE": ("inp", cfg.log_inp_depth),
        "LOG_WGT_BUFF_SIZE": ("wgt", cfg.log_wgt_depth),
        "LOG_ACC_BUFF_SIZE": ("acc", cfg.log_acc_depth),
    }
    for key, (buf, log_depth) in depths.items():
        if log_depth < 1:
            raise ConfigError(f"{source}: {key}={getattr(cfg, key.lower())} gives the {buf} buffer "
                              f"fewer than 2 elements")
        if log_depth > SRAM_ADDR_BITS:
            raise ConfigError(f"{source}: {key} gives a {buf} depth of 2^{log_depth} elements; "
                              f"the {SRAM_ADDR_BITS}-bit sram_base field addresses at most "
                              f"2^{SRAM_ADDR_BITS}")
    uop_bits = cfg.log_acc_depth + cfg.uop_src_bits + cfg.log_wgt_depth
    if uop_bits > UOP_BITS:
        raise ConfigError(
            f"{source}: micro-op index widths dst {cfg.log_acc_depth} + src {cfg.uop_src_bits} + "
            f"wgt {cfg.log_wgt_depth} = {uop_bits} bits exceed the {UOP_BITS}-bit micro-op; "
            f"shrink LOG_ACC_BUFF_SIZE, LOG_INP_BUFF_SIZE or LOG_WGT_BUFF_SIZE")
    # Instruction word widths are checked by the layout, which knows the packing rule.
    overflow = layout_overflow(cfg)
    if overflow is not None:
        raise ConfigError(f"{source}: {overflow}")


def config_path(name_or_path: str | Path) -> Path:
    """Resolve a configuration name (``default``) or a path to a JSON file."""
    p = Path(name_or_path)
    if p.suffix == ".json" or p.exists():
        return p
    candidate = CONFIG_DIR / f"{name_or_path}.json"
    if not candidate.exists():
        known = ", ".join(sorted(x.stem for x in CONFIG_DIR.glob("*.json")))
        raise ConfigError(f"no configuration named {name_or_path!r}; known: {known}")
    return candidate


def load_config(name_or_path: str | Path = "default") -> Config:
    """Load and check a configuration by name (config/NAME.json) or path."""
    path = config_path(name_or_path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc
    return config_from_dict(data, str(path))


def builtin_config_names() -> list[str]:
    return sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


def is_builtin(cfg: Config) -> bool:
    """Whether ``cfg`` is a built-in configuration (its name and every value), one whose
    generated views are committed (hdl/gen/NAME/, opencl/gen/NAME/)."""
    return cfg.name in builtin_config_names() and load_config(cfg.name) == cfg
