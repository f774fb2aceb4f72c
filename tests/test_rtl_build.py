"""The simulator build's inputs and its rebuild line, without building (the builds themselves
are exercised by every rtl test): which package a configuration compiles, and why a build runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vtabench.hwgen.constants import sv_package
from vtabench.rtl import verilator
from vtabench.rtl.verilator import (
    HDL_DIR,
    RtlBuildError,
    config_package,
    rebuild_reason,
)
from vtabench.spec.config import load_config

RECIPE = {"build options": ["-O3"], "configuration": {"NAME": "default"}}


def test_a_built_in_configuration_compiles_its_committed_package(tmp_path):
    cfg = load_config("edge8")
    assert config_package(cfg, tmp_path) == HDL_DIR / "gen" / "edge8" / "vta_pkg.sv"
    assert not (tmp_path / "gen").exists()   # nothing generated at build time


def test_a_configuration_given_by_path_gets_its_package_in_its_build_folder(tmp_path):
    data = {**load_config("default").as_dict(), "NAME": "default", "LOG_ACC_BUFF_SIZE": 16}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    cfg = load_config(path)   # named like a built-in, with other values: not the built-in
    pkg = config_package(cfg, tmp_path / "build")
    assert pkg == tmp_path / "build" / "gen" / "vta_pkg.sv"
    assert pkg.read_text() == sv_package(cfg) != sv_package(load_config("default"))
    stamp = pkg.stat().st_mtime_ns
    assert config_package(cfg, tmp_path / "build") == pkg and pkg.stat().st_mtime_ns == stamp


def test_the_rebuild_line_says_first_build_forced_or_what_changed():
    inputs = {"/x/hdl/vta_fetch.sv": "aa", "/x/hdl/vta_core.sv": "bb", "/x/tb/new.sv": "cc"}
    assert rebuild_reason(None, inputs, RECIPE) == "first build"
    old = {"inputs": {"/x/hdl/vta_fetch.sv": "a0", "/x/hdl/vta_core.sv": "bb",
                      "/x/tb/old.sv": "dd"}, "recipe": {**RECIPE, "build options": ["-O2"]}}
    assert rebuild_reason(old, inputs, RECIPE, force=True) == "forced (--force)"
    assert rebuild_reason(old, inputs, RECIPE) == ("changed: /x/hdl/vta_fetch.sv; new: "
                                                   "/x/tb/new.sv; gone: /x/tb/old.sv; build "
                                                   "options changed")
    assert rebuild_reason({**old, "inputs": dict(inputs), "recipe": RECIPE}, inputs,
                          RECIPE) == "its inputs changed"
    legacy = {"sources": ["/x/hdl/vta_fetch.sv", "/x/build/gen/vta_pkg.sv"]}
    assert "has no hash of each input" in rebuild_reason(legacy, inputs, RECIPE)
    assert rebuild_reason({}, inputs, RECIPE) == "the last build's stamp.json is unreadable"


def test_a_path_with_a_space_is_refused_in_one_line(tmp_path: Path) -> None:
    """Verilator's wrapper and generated makefiles split paths at spaces: the build says so in
    one line, naming the path, before it starts (not a make error deep in its log)."""
    spaced = tmp_path / "my checkout" / "build"
    with pytest.raises(RtlBuildError) as err:
        verilator._refuse_spaces([tmp_path / "fine", spaced])
    assert str(spaced) in str(err.value) and len(str(err.value).splitlines()) == 1
    verilator._refuse_spaces([tmp_path / "fine"])  # no space: nothing to say
