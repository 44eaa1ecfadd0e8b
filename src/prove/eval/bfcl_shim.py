"""The one place PROVE patches bfcl-eval's module globals, after checking it is a version the patches were written for.

    from prove.eval.bfcl_shim import apply_patches, check_bfcl_version
    check_bfcl_version()                                    # BFCLVersionError: installed, supported, the fix
    apply_patches({"prove/x": ModelConfig(...)}, max_steps_per_turn=1)   # checks the version, then patches

`PATCHES` lists every global touched and why. Only the BFCL child process (`prove.eval.bfcl_child`)
applies them: bfcl caches state in module globals, so a fresh process per step keeps runs apart.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import statistics
import types
from collections.abc import Mapping
from typing import Any

__all__ = [
    "SUPPORTED_BFCL_VERSIONS",
    "BFCL_EVAL_VERSION",
    "PATCHES",
    "BFCLVersionError",
    "installed_bfcl_version",
    "check_bfcl_version",
    "apply_patches",
]

SUPPORTED_BFCL_VERSIONS: tuple[str, ...] = ("2026.3.23",)
"""bfcl-eval versions whose module globals `PATCHES` was checked against (the last is the one to install)."""

BFCL_EVAL_VERSION = SUPPORTED_BFCL_VERSIONS[-1]
"""The pinned wheel: same multi-turn data and checker as the V4 leaderboard's 2025.12.17 (see notes)."""

PATCHES: dict[str, str] = {
    "bfcl_eval.constants.model_config:MODEL_CONFIG_MAPPING":
        "adds one entry per PROVE run (`prove/<label>`: the served model id and its handler class), as bfcl "
        "has no key for Qwen2.5, the hybrid Qwen3-4B, Granite-4.1 or a trained checkpoint; `bfcl generate` "
        "and `bfcl evaluate` look models up only here",
    "bfcl_eval.model_handler.base_handler:MAXIMUM_STEP_LIMIT":
        "lowers bfcl's 20 model steps per turn when a profile sets `max_steps_per_turn` (CPU smoke only); "
        "a turn that hits it fails exactly as at bfcl's own limit",
    "bfcl_eval.eval_checker.eval_runner_helper:statistics":
        "a run with one latency sample crashes bfcl's leaderboard CSV (after the score files are written): "
        "`statistics.stdev` needs two samples; one sample gets a std of 0, scores are unaffected",
}
"""Every bfcl-eval module global PROVE changes ("module:name"), and why. Nothing else is patched."""


class BFCLVersionError(RuntimeError):
    """The installed bfcl-eval is missing or is not a version the shim's patches were written for."""


def _fix() -> str:
    return f"pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION} (as run_all.sh does)"


def installed_bfcl_version() -> str | None:
    """The installed bfcl-eval's version, or None when it is not installed."""
    try:
        return importlib.metadata.version("bfcl-eval")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_bfcl_version(installed: str | None = None) -> str:
    """Return the installed bfcl-eval version (or `installed`, when given) if it is supported; else raise.

    The error names the installed version, the supported one(s), and the command that fixes it.
    """
    version = installed if installed is not None else installed_bfcl_version()
    supported = ", ".join(SUPPORTED_BFCL_VERSIONS)
    if version is None:
        raise BFCLVersionError(f"bfcl-eval is not installed; PROVE's BFCL adapter supports bfcl-eval {supported}. "
                               f"Fix: {_fix()}")
    if version not in SUPPORTED_BFCL_VERSIONS:
        raise BFCLVersionError(
            f"bfcl-eval {version} is installed, but PROVE's BFCL shim supports only bfcl-eval {supported}: it "
            f"patches that version's module globals ({', '.join(PATCHES)}). Fix: {_fix()}")
    return version


def _patched(target: str) -> tuple[types.ModuleType, str]:
    """The module and attribute of a `PATCHES` entry; an error if bfcl no longer has it."""
    if target not in PATCHES:
        raise KeyError(f"{target!r} is not listed in PATCHES; list it there, with the reason, before patching it")
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    if not hasattr(module, name):
        raise BFCLVersionError(f"{module_name} has no {name!r} to patch; the installed bfcl-eval "
                               f"({installed_bfcl_version()}) differs from {BFCL_EVAL_VERSION}. Fix: {_fix()}")
    return module, name


def _register_models(configs: Mapping[str, Any]) -> None:
    module, name = _patched("bfcl_eval.constants.model_config:MODEL_CONFIG_MAPPING")
    getattr(module, name).update(configs)  # in place: bfcl's modules imported the dict itself


def _limit_steps_per_turn(steps: int) -> None:
    module, name = _patched("bfcl_eval.model_handler.base_handler:MAXIMUM_STEP_LIMIT")
    setattr(module, name, steps)


def _guard_single_sample_stdev() -> None:
    module, name = _patched("bfcl_eval.eval_checker.eval_runner_helper:statistics")
    setattr(module, name, types.SimpleNamespace(
        mean=statistics.mean, stdev=lambda data: statistics.stdev(data) if len(data) > 1 else 0.0))


def apply_patches(models: Mapping[str, Any], max_steps_per_turn: int | None = None,
                  installed: str | None = None) -> list[str]:
    """Check the bfcl-eval version (`installed` overrides the lookup), then patch; returns the targets patched.

    models: registry name -> `bfcl_eval.constants.model_config.ModelConfig`.
    max_steps_per_turn: None keeps bfcl's own limit.
    """
    check_bfcl_version(installed)
    applied = []
    if models:
        _register_models(models)
        applied.append("bfcl_eval.constants.model_config:MODEL_CONFIG_MAPPING")
    if max_steps_per_turn is not None:
        _limit_steps_per_turn(max_steps_per_turn)
        applied.append("bfcl_eval.model_handler.base_handler:MAXIMUM_STEP_LIMIT")
    _guard_single_sample_stdev()
    applied.append("bfcl_eval.eval_checker.eval_runner_helper:statistics")
    return applied
