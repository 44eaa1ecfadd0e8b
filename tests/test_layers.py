"""The layers of `prove`, bottom to top, and the test that imports only look down them.

    .venv/bin/python -m pytest tests/test_layers.py -q

`LAYERS` below is the one table of them. A module may import modules of its own unit (a package or
a module named in the table) and of any unit in a lower layer; never a unit of a later layer, nor
another unit of its own layer (units sharing a layer are peers). No two modules import each other,
directly or round a loop. Imports are read from the source (`import_graph`), function-level ones
included: hiding an import inside a function does not hide the dependency.
"""

from __future__ import annotations

from pathlib import Path

from import_graph import all_cycles, find_cycle, imported_names, module_files, module_imports

LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("foundations", ("prove", "prove.calls", "prove.rows", "prove.profiles", "prove.proc",
                     "prove.figures_style", "prove.paired"),
     "shapes and helpers every part shares: a tool call, a training row, the profiles, child "
     "processes, the figure style, paired comparisons of per-turn tables (evaluation's and the "
     "laptop record's)"),
    ("environments", ("prove.env",), "the live MCP servers' episodes, hub, transports and launcher"),
    ("reward", ("prove.reward",), "the programmatic reward over logged calls"),
    ("models", ("prove.llm",),
     "serving a model (vLLM) and the teacher's endpoint: used by the graph's LLM classifier, "
     "synthesis, training and evaluation"),
    ("graph", ("prove.graph",), "the tool dependency graph"),
    ("synthesis", ("prove.synth",), "grounded conversations from the graph and the live servers"),
    ("tracking", ("prove.tracking",), "run identities, wandb and the local run list: below training"),
    ("training", ("prove.train",), "VERL/TRL runs over synthesis' rows with the reward"),
    ("evaluation", ("prove.eval",),
     "benchmarks and held-out turns against served checkpoints. Above training, not its peer: "
     "evaluation scores what training made, finding the models from training's run folders "
     "(prove.train.chain) and running held-out rows through training's own agent loop "
     "(prove.train.rollout), so a held-out turn is executed exactly as a training rollout is. "
     "Training never imports evaluation"),
    ("integrations", ("prove.integrations",),
     "PROVE's servers, rows and reward in other frameworks' environment classes (OpenEnv, SkyRL-Gym, "
     "verifiers): one row's live episode through training's rollout plumbing (prove.train.session), "
     "scored by prove.reward"),
    ("figures", ("prove.figures",), "every figure of the paper, from every part's results"),
    ("command line", ("prove.cli",), "`prove ...`, delegating to each part's own CLI"),
    ("entry point", ("prove.__main__",), "`python -m prove`"),
)
"""Every module of `prove` belongs to the longest unit that names it or a package above it (the
bare `prove` names only src/prove/__init__.py). A new module in an existing package needs no entry;
a new top-level module or package takes its place here."""

GRAPH = module_imports()


def unit_of(module: str) -> str | None:
    """The unit of `LAYERS` that holds `module`, or None."""
    owners = [u for _, units, _ in LAYERS for u in units
              if module == u or (u != "prove" and module.startswith(u + "."))]
    return max(owners, key=len) if owners else None


def layer_of(module: str) -> int:
    unit = unit_of(module)
    return next(i for i, (_, units, _) in enumerate(LAYERS) if unit in units)


def describe(module: str) -> str:
    return f"{module} ({LAYERS[layer_of(module)][0]})"


def test_every_unit_is_listed_once_and_exists() -> None:
    units = [u for _, members, _ in LAYERS for u in members]
    assert len(units) == len(set(units)), f"listed twice: {sorted({u for u in units if units.count(u) > 1})}"
    assert not [u for u in units if u not in GRAPH], "LAYERS names modules that do not exist"


def test_every_module_has_a_layer() -> None:
    missing = sorted(m for m in GRAPH if unit_of(m) is None)
    assert not missing, f"modules in no layer: {missing}; give each a place in LAYERS (tests/test_layers.py)"


def test_no_import_cycles() -> None:
    knots = all_cycles(GRAPH)
    lines = [" -> ".join(find_cycle({m: GRAPH[m] & set(knot) for m in knot}) or knot) for knot in knots]
    assert not knots, ("import cycles (move what both sides need down to the layer it belongs to):\n  "
                       + "\n  ".join(lines))


def test_imports_only_look_down_the_layers() -> None:
    wrong = []
    for module, deps in sorted(GRAPH.items()):
        mine, unit = layer_of(module), unit_of(module)
        for dep in sorted(deps):
            theirs = layer_of(dep)
            if theirs > mine or (theirs == mine and unit_of(dep) != unit):
                wrong.append(f"{describe(module)} imports {describe(dep)}")
    assert not wrong, ("imports from a later layer or a peer (move the code down, or the module up; "
                       "LAYERS in tests/test_layers.py says why each layer is where it is):\n  "
                       + "\n  ".join(wrong))


def test_the_graph_sees_deferred_typing_and_by_name_imports(tmp_path: Path) -> None:
    """The walker itself: what a hidden import looks like is still an edge."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from toy.sub import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("X = 1\n")
    (pkg / "base.py").write_text("")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from toy.base import Thing\n")
    (pkg / "lazy.py").write_text("def f():\n    from .sub.leaf import X\n    return X\n")
    (pkg / "named.py").write_text("import importlib\nTABLE = {'a': 'toy.lazy:f'}\n"
                                  "def g(k):\n    return importlib.import_module(TABLE[k])\n")
    (pkg / "loop.py").write_text("def h():\n    import toy.named\n")
    (pkg / "facade.py").write_text("from toy.sub import leaf, helper\n")
    (pkg / "plain.py").write_text("NOTE = 'toy.base is not imported by a mere string'\n"
                                  "NAME = 'toy.base'\n")
    graph = module_imports(pkg, "toy")
    assert set(graph) == {"toy", "toy.sub", "toy.sub.leaf", "toy.base", "toy.typed", "toy.lazy",
                          "toy.named", "toy.loop", "toy.facade", "toy.plain"}
    assert graph["toy.sub"] == {"toy.sub.leaf"}
    assert graph["toy.typed"] == {"toy.base"}
    assert graph["toy.lazy"] == {"toy.sub.leaf"}          # relative, inside a function
    assert graph["toy.named"] == {"toy.lazy"}             # by name, "module:attr"
    assert graph["toy.facade"] == {"toy.sub.leaf", "toy.sub"}  # a module; a name from __init__
    assert graph["toy.plain"] == set()                    # no import_module: strings are prose
    assert find_cycle(graph) is None
    (pkg / "base.py").write_text("import toy.loop\n")
    (pkg / "lazy.py").write_text("def f():\n    from toy import named\n")
    cyclic = module_imports(pkg, "toy")
    loop = find_cycle(cyclic)
    assert loop is not None and loop[0] == loop[-1] and sorted(loop[:-1]) == ["toy.lazy", "toy.named"]
    assert all_cycles(cyclic) == [["toy.lazy", "toy.named"]]
    assert imported_names(pkg / "typed.py", "toy.typed") >= {"toy.base.Thing"}
    assert set(module_files(pkg, "toy")) == set(graph)

