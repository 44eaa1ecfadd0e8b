"""The BFCL shim: it refuses a bfcl-eval version it was not written for, and patches only what PATCHES lists.

    .venv/bin/python -m pytest tests/eval/test_eval_bfcl_shim.py -q
"""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

from prove.eval import bfcl_shim
from prove.eval.bfcl_shim import (
    BFCL_EVAL_VERSION,
    PATCHES,
    SUPPORTED_BFCL_VERSIONS,
    BFCLVersionError,
    apply_patches,
    check_bfcl_version,
)


def test_a_version_outside_the_supported_ones_is_refused_naming_installed_supported_and_fix():
    with pytest.raises(BFCLVersionError) as err:
        check_bfcl_version("2025.12.17")
    message = str(err.value)
    assert "bfcl-eval 2025.12.17 is installed" in message
    assert f"supports only bfcl-eval {', '.join(SUPPORTED_BFCL_VERSIONS)}" in message
    assert f"pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION}" in message
    for target in PATCHES:  # and says what it would have patched
        assert target in message


def test_a_missing_bfcl_eval_is_refused_with_the_install_command(monkeypatch):
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(bfcl_shim.importlib.metadata, "version", not_installed)
    with pytest.raises(BFCLVersionError, match=rf"not installed.*pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION}"):
        check_bfcl_version()


def test_the_installed_version_is_accepted():
    pytest.importorskip("bfcl_eval")
    installed = importlib.metadata.version("bfcl-eval")
    assert check_bfcl_version() == installed == BFCL_EVAL_VERSION
    assert check_bfcl_version(BFCL_EVAL_VERSION) == BFCL_EVAL_VERSION


@pytest.fixture
def bfcl_globals(monkeypatch, tmp_path):
    """bfcl's patched modules, with each patched global restored after the test."""
    pytest.importorskip("bfcl_eval")
    monkeypatch.setenv("BFCL_PROJECT_ROOT", str(tmp_path))  # bfcl makes its folders on first import
    modules = {}
    for target in PATCHES:
        module_name, _, name = target.partition(":")
        modules[name] = module = importlib.import_module(module_name)
        monkeypatch.setattr(module, name, getattr(module, name))  # restored on teardown
    mapping = modules["MODEL_CONFIG_MAPPING"].MODEL_CONFIG_MAPPING
    monkeypatch.setitem(mapping, "prove/shim-test", None)  # removed again on teardown
    del mapping["prove/shim-test"]
    return modules


def test_a_refused_version_patches_nothing(bfcl_globals):
    helper = bfcl_globals["statistics"]
    base_handler = bfcl_globals["MAXIMUM_STEP_LIMIT"]
    before = (base_handler.MAXIMUM_STEP_LIMIT, helper.statistics)
    with pytest.raises(BFCLVersionError, match="0.0.1 is installed"):
        apply_patches({"prove/shim-test": object()}, max_steps_per_turn=3, installed="0.0.1")
    assert (base_handler.MAXIMUM_STEP_LIMIT, helper.statistics) == before
    assert "prove/shim-test" not in bfcl_globals["MODEL_CONFIG_MAPPING"].MODEL_CONFIG_MAPPING


def test_the_installed_version_gets_every_listed_patch(bfcl_globals):
    marker = object()
    applied = apply_patches({"prove/shim-test": marker}, max_steps_per_turn=3)
    assert applied == list(PATCHES)
    assert bfcl_globals["MODEL_CONFIG_MAPPING"].MODEL_CONFIG_MAPPING["prove/shim-test"] is marker
    assert bfcl_globals["MAXIMUM_STEP_LIMIT"].MAXIMUM_STEP_LIMIT == 3
    stats = bfcl_globals["statistics"].statistics
    assert stats.stdev([0.5]) == 0.0 and stats.stdev([1.0, 3.0]) == pytest.approx(2 ** 0.5)
    assert stats.mean([1.0, 3.0]) == 2.0


def test_bfcls_own_step_limit_stays_when_none_is_set(bfcl_globals):
    base_handler = bfcl_globals["MAXIMUM_STEP_LIMIT"]
    assert apply_patches({}, max_steps_per_turn=None) == ["bfcl_eval.eval_checker.eval_runner_helper:statistics"]
    assert base_handler.MAXIMUM_STEP_LIMIT == 20
