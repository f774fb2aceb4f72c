"""Configuration loading: built-ins load, derived sizes, and every rejection names key and limit."""

import json

import pytest

from vtabench.spec.config import (CONFIG_DIR, ConfigError, builtin_config_names, config_from_dict,
                                  is_builtin, load_config)

DEFAULT = json.loads((CONFIG_DIR / "default.json").read_text())


def test_builtins_load_with_expected_shapes():
    assert builtin_config_names() == ["cloud32", "cloud64", "default", "edge8"]
    d, c32, c64 = (load_config(n) for n in ("default", "cloud32", "cloud64"))
    assert (d.batch, d.block, d.inp_depth, d.wgt_depth, d.acc_depth, d.uop_depth) == (
        1, 16, 2048, 1024, 2048, 8192)
    assert (d.inp_elem_bytes, d.wgt_elem_bytes, d.acc_elem_bytes, d.out_elem_bytes) == (
        16, 256, 64, 16)
    assert c32.block == 32 and c32.macs_per_cycle == 1024 and c32.wgt_elem_bytes == 1024
    assert c64.block == 64 and c64.macs_per_cycle == 4096 and c64.wgt_depth == 512
    assert len({d.config_id, c32.config_id, c64.config_id}) == 3


@pytest.mark.parametrize("key, value, needle", [
    ("LOG_INP_WIDTH", 4, "LOG_INP_WIDTH=4 outside [3, 3]"),
    ("LOG_BLOCK", 7, "LOG_BLOCK=7 outside [1, 6]"),
    ("LOG_BATCH", "1", "LOG_BATCH must be an integer"),
])
def test_key_out_of_range(key, value, needle):
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        config_from_dict({**DEFAULT, key: value})


def test_missing_and_unknown_keys():
    data = dict(DEFAULT)
    del data["LOG_ACC_BUFF_SIZE"]
    with pytest.raises(ConfigError, match="missing key LOG_ACC_BUFF_SIZE"):
        config_from_dict(data)
    with pytest.raises(ConfigError, match="unknown key.*LOG_FOO"):
        config_from_dict({**DEFAULT, "LOG_FOO": 1})


def test_uop_index_widths_must_fit_32_bits():
    # acc depth 2^12 (dst 12 bits) + src 12 + wgt 10 = 34 bits.
    with pytest.raises(ConfigError, match="micro-op index widths.*34 bits exceed the 32-bit"):
        config_from_dict({**DEFAULT, "LOG_ACC_BUFF_SIZE": 18})


def test_instruction_must_fit_128_bits():
    # uop depth 2^15: uop_bgn 15 + uop_end 16 bits push iter_in out of word 0 and overflow word 1.
    with pytest.raises(ConfigError, match="GEMM instruction needs .* bits"):
        config_from_dict({**DEFAULT, "LOG_UOP_BUFF_SIZE": 17})


def test_depth_below_two_elements():
    with pytest.raises(ConfigError, match="LOG_WGT_BUFF_SIZE=8 gives the wgt buffer fewer than 2"):
        config_from_dict({**DEFAULT, "LOG_WGT_BUFF_SIZE": 8})


def test_unknown_name(tmp_path):
    with pytest.raises(ConfigError, match="no configuration named 'nope'; known: cloud32"):
        load_config("nope")
    bad = tmp_path / "x.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(bad)


@pytest.mark.parametrize("key, builtins, value, default, view, bad, allowed", [
    # ACC8_WIN_BEATS: 4 = one ACC_8BIT beat per cycle; edge8 writes a quarter beat per cycle
    ("ACC8_WIN_BEATS", [4, 4, 4, 1], 1, 4, ("ACC8_WIN_BEATS", 1), 2, "1, 4"),
    # AXI_DATA_BITS: the core's bus; edge8 has 128 bits (AXI_DATA_WIDTH: the tops' default)
    ("AXI_DATA_BITS", [512, 512, 512, 128], 128, 512, ("AXI_DATA_WIDTH", 128), 64,
     "128, 256, 512"),
])
def test_optional_keys(key, builtins, value, default, view, bad, allowed):
    # The default where the file says nothing. The keys are hardware only: they stay out of
    # CONFIG_ID, and a file at the default round-trips to the same dict (so existing packages
    # and ids are unchanged); the generated package carries the value.
    from vtabench.hwgen.constants import constants

    assert [getattr(load_config(n), key.lower()) for n in builtin_config_names()] == builtins
    narrow = config_from_dict({**DEFAULT, key: value})
    assert getattr(narrow, key.lower()) == value and narrow.as_dict()[key] == value
    assert narrow.config_id == load_config("default").config_id
    assert config_from_dict(narrow.as_dict()) == narrow
    assert key not in config_from_dict({**DEFAULT, key: default}).as_dict()
    assert view in {(n, v) for n, v, _ in constants(narrow)}
    with pytest.raises(ConfigError, match=f"{key}={bad} not one of {allowed}"):
        config_from_dict({**DEFAULT, key: bad})
    with pytest.raises(ConfigError, match=f"{key} must be an integer"):
        config_from_dict({**DEFAULT, key: True})


def test_bus_bytes_is_the_axi_width_in_bytes():
    assert load_config("edge8").bus_bytes == 16 and load_config("default").bus_bytes == 64


def test_a_configuration_is_built_in_by_name_and_every_value():
    assert all(is_builtin(load_config(name)) for name in builtin_config_names())
    renamed = config_from_dict({**DEFAULT, "NAME": "mine"})
    changed = config_from_dict({**DEFAULT, "NAME": "default", "ACC8_WIN_BEATS": 1})
    assert not is_builtin(renamed) and not is_builtin(changed)
