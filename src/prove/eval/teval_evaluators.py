"""T-Eval's own evaluator classes, imported from the `opencompass` wheel on PyPI (nothing is vendored here).

    pip install --no-deps opencompass==0.5.4
    pip install mmengine-lite          # `from mmengine import load` in every evaluator module

T-Eval (open-compass/T-Eval) is not installable from PyPI; its evaluators ship inside `opencompass`
as `opencompass/datasets/teval/{schema.py, utils/, evaluators/}`. Importing them the ordinary way
runs `opencompass/datasets/__init__.py`, which imports ~200 datasets and their heavy requirements.
`evaluator_class` therefore registers bare package modules for `opencompass`, `opencompass.datasets`,
`opencompass.datasets.teval` and `opencompass.datasets.teval.evaluators` in `sys.modules` (their
`__path__` is the installed folder, their `__init__.py` is not run) and then imports the evaluator
modules normally, so their own relative imports (`..schema`, `..utils.format_load`) resolve to the
installed files. Packages already imported for real are left as they are. The stubs stay registered:
a later `import opencompass.<x>` still finds the installed submodules through `__path__`, but the
package-level names that those `__init__.py` files would define are absent.

Differences between opencompass 0.5.4's copy and T-Eval v2 (T-Eval's main branch, which test.py and
test_all_en.sh run on the *_v2 data), found by diffing the two, and how `prove.eval.teval` handles them:

1. `PlanningEvaluator(match_threshold=...)` defaults to 0.7 in opencompass, 0.8 in T-Eval v2. The
   adapter passes `match_threshold=PLAN_MATCH_THRESHOLD` (0.8) explicitly.
2. `ReasonRetrieveUnderstandEvaluator`'s `args` metric (the `understand` ability, from
   understand_str and rru_json) is v1's: the embedding cosine of `str(pred args)` vs `str(gt args)`.
   T-Eval v2 replaced it by exact matching ("a more strict evaluation protocol in v2"): for dict
   args, the number of ground-truth keys whose value the prediction reproduces (compared as str)
   divided by (number of keys + 1e-5), 1 when both are empty and 0 when only the prediction has
   keys; for string args (understand_str), 1 iff the reply with surrounding quotes stripped equals
   the stringified ground-truth args. The adapter keeps opencompass's number as `args_v1_cosine`
   and sets `args` to the v2 value computed by `v2_args` on the (pred, gt) pairs that the official
   class itself parsed (`evaluator.dataset[i]["response_data_sample"]`), so the parsing is T-Eval's.
Everything else the adapter uses (instruct, review, plan matching, thought cosine, name match,
parse_rate, format_load, template parsing) is identical between the two.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "INSTALL_HINT",
    "PLAN_MATCH_THRESHOLD",
    "EVALUATOR_MODULES",
    "evaluator_class",
    "evaluators_available",
    "opencompass_version",
    "v2_args",
]

INSTALL_HINT = "pip install --no-deps opencompass==0.5.4 mmengine-lite"
PLAN_MATCH_THRESHOLD = 0.8
"""T-Eval v2's PlanningEvaluator default (opencompass 0.5.4's copy defaults to 0.7)."""

EVALUATOR_MODULES = {
    "InstructEvaluator": "instruct_evaluator",
    "PlanningEvaluator": "planning_evaluator",
    "ReviewEvaluator": "review_evaluator",
    "ReasonRetrieveUnderstandEvaluator": "reason_retrieve_understand_evaluator",
}
_PACKAGE = "opencompass.datasets.teval"
_STUBBED = ("opencompass", "opencompass.datasets", _PACKAGE, f"{_PACKAGE}.evaluators")
"""Packages whose __init__ is skipped (heavy imports, or all four evaluators at once)."""


def _opencompass_dir() -> Path:
    spec = importlib.util.find_spec("opencompass")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"T-Eval scoring uses the evaluators shipped in the opencompass wheel: {INSTALL_HINT}")
    root = Path(next(iter(spec.submodule_search_locations)))
    if not (root / "datasets" / "teval" / "evaluators").is_dir():
        raise ImportError(f"{root} has no datasets/teval/evaluators; install the pinned wheel: {INSTALL_HINT}")
    return root


def _register_stub_packages(root: Path) -> None:
    for name in _STUBBED:
        if name in sys.modules:
            continue
        folder = root.joinpath(*name.split(".")[1:])
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
        module = importlib.util.module_from_spec(spec)
        module.__file__ = str(folder / "__init__.py")
        module.__prove_stub__ = True  # type: ignore[attr-defined]
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


def evaluator_class(name: str) -> type:
    """T-Eval's evaluator class `name` (e.g. "PlanningEvaluator") from the installed opencompass."""
    if name not in EVALUATOR_MODULES:
        raise KeyError(f"unknown T-Eval evaluator {name!r}; one of {sorted(EVALUATOR_MODULES)}")
    _register_stub_packages(_opencompass_dir())
    try:
        module: ModuleType = importlib.import_module(f"{_PACKAGE}.evaluators.{EVALUATOR_MODULES[name]}")
    except ModuleNotFoundError as err:
        raise ImportError(f"T-Eval's {name} needs {err.name!r}, which is not installed: {INSTALL_HINT}"
                          + (" (plan/reason/retrieve/understand also need sentence-transformers)"
                             if err.name and err.name.startswith("sentence_transformers") else "")) from err
    return getattr(module, name)


def evaluators_available() -> tuple[bool, str]:
    """(True, "") when every T-Eval evaluator imports; else (False, what is missing and how to install it)."""
    try:
        for name in EVALUATOR_MODULES:
            evaluator_class(name)
    except ImportError as err:
        return False, str(err)
    return True, ""


def opencompass_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("opencompass")
    except PackageNotFoundError:
        return None


def v2_args(pred: dict[str, Any], gt: dict[str, Any]) -> float:
    """T-Eval v2's per-sample `args` score for one (pred, gt) pair parsed by ReasonRetrieveUnderstandEvaluator.

    Restates v2's definition (see the module docstring, point 2); 0 when either side has no `args`.
    """
    if "args" not in pred or "args" not in gt:
        return 0.0
    gt_args, pred_args = gt["args"], pred["args"]
    if not isinstance(gt_args, dict):  # prompt_type "str": the reply is compared as one string
        return float(gt_args == str(pred_args).strip("'").strip('"'))
    if not gt_args:
        return 1.0 if not pred_args else 0.0
    hits = sum(1 for key, value in gt_args.items() if key in pred_args and str(pred_args[key]) == str(value))
    return hits / (len(gt_args) + 1e-5)
