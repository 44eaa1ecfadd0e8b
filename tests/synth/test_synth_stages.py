"""Synthesis runs in stages that only look backwards: no module of prove.synth imports a later stage
of the project (training, reward, evaluation) or a later stage of synthesis; the state machine knows
teachers only through the `Teacher` protocol.

Imports are read from the source by the shared walker (tests/import_graph.py), function-level ones
included: an import deferred into a function still makes the module depend on the other at run
time. Cycles anywhere in the package, synthesis included, are tests/test_layers.py's.
"""

from __future__ import annotations

import inspect
import typing

import pytest
from import_graph import module_imports

from prove.synth.machine import Teacher, run_conversation
from prove.synth.openai_teacher import OpenAITeacher
from prove.synth.programmatic import ProgrammaticTeacher

PACKAGE = "prove.synth"
GRAPH = {m: deps for m, deps in module_imports().items() if m.startswith(PACKAGE + ".")}

LATER_STAGES = ("prove.train", "prove.reward", "prove.eval")
"""What synthesis feeds: it may share neutral modules with them (prove.rows, prove.calls), never
import them (stricter than tests/test_layers.py, where reward sits below synthesis)."""

STAGES: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundations", frozenset({"records", "evidence", "phrasing", "sampling", "intents"})),
    ("generate", frozenset({"machine", "planner", "plan_values", "plan_results", "plan_lookup",
                            "plan_errors", "programmatic", "openai_teacher", "perturb"})),
    ("validate", frozenset({"validate", "quality", "abstain"})),
    ("export", frozenset({"export"})),
    ("drive", frozenset({"feasibility", "pipeline", "cli", "plots", "teachers"})),
)
"""Every module of prove.synth (the package's __init__ aside), in stage order: a module imports
only from its own stage or earlier ones. A new module takes its place here."""

TEACHERS = frozenset({"programmatic", "planner", "plan_values", "plan_results", "plan_lookup",
                      "plan_errors", "openai_teacher"})


def _modules() -> list[str]:
    return sorted(m.removeprefix(PACKAGE + ".") for m in GRAPH)


def _imports(name: str) -> set[str]:
    """The modules of `prove` that `prove/synth/<name>.py` imports, anywhere in the file."""
    return GRAPH[f"{PACKAGE}.{name}"]


def _synth_deps(name: str) -> set[str]:
    return {m.removeprefix(PACKAGE + ".") for m in _imports(name) if m.startswith(PACKAGE + ".")}


def _stage(name: str) -> int:
    for i, (_, members) in enumerate(STAGES):
        if name in members:
            return i
    pytest.fail(f"prove.synth.{name} is in no STAGES entry: give it its stage")


def test_every_module_has_one_stage() -> None:
    for name in _modules():
        owners = [stage for stage, members in STAGES if name in members]
        assert len(owners) == 1, f"prove.synth.{name} belongs to {owners}: list it in one STAGES entry"


@pytest.mark.parametrize("name", _modules())
def test_no_module_imports_a_later_stage_of_the_project(name: str) -> None:
    later = sorted(m for m in _imports(name)
                   if any(m == s or m.startswith(s + ".") for s in LATER_STAGES))
    assert not later, f"prove.synth.{name} imports {later}; move what both need to a neutral module"


@pytest.mark.parametrize("name", _modules())
def test_no_module_imports_a_later_stage_of_synthesis(name: str) -> None:
    mine = _stage(name)
    forward = sorted(d for d in _synth_deps(name) if d in _modules() and _stage(d) > mine)
    assert not forward, (f"prove.synth.{name} ({STAGES[mine][0]}) imports later stages: "
                         + ", ".join(f"{d} ({STAGES[_stage(d)][0]})" for d in forward))


@pytest.mark.parametrize("name", _modules())
def test_modules_import_submodules_not_the_package_facade(name: str) -> None:
    """`from prove.synth import X` only for a module X: names from the package's __init__ would
    make every module depend on all the others."""
    assert PACKAGE not in _imports(name), (
        f"prove.synth.{name} imports a name from the package prove.synth; import it from its module")


def test_the_state_machine_knows_teachers_only_through_the_protocol() -> None:
    assert not _synth_deps("machine") & TEACHERS
    assert typing.get_type_hints(run_conversation)["teacher"] is Teacher


@pytest.mark.parametrize("teacher", [ProgrammaticTeacher, OpenAITeacher])
def test_both_teachers_implement_the_protocol(teacher: type) -> None:
    assert isinstance(teacher.name, str) and teacher.name
    members = [n for n, v in vars(Teacher).items() if inspect.isfunction(v) and not n.startswith("_")]
    assert set(members) == {"describe", "prepare", "user_message", "assistant", "alternative"}
    for member in members:
        want, got = getattr(Teacher, member), getattr(teacher, member)
        assert inspect.iscoroutinefunction(got) == inspect.iscoroutinefunction(want), member
        params = list(inspect.signature(want).parameters)
        # every argument the machine passes (positionally) binds to the implementation
        inspect.signature(got).bind(*params)
