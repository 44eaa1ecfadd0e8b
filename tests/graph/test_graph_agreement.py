"""Hand labels are consistent with the tools; the agreement report computes the right numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove.env.registry import Registry
from prove.graph import Judgement, agreement_table, load_labels, pairwise_agreement
from prove.graph.agreement import DEFAULT_LABELS


def test_labels_name_real_tools_and_arguments(registry: Registry) -> None:
    labels = load_labels()
    assert len(labels.servers) >= 3
    rows = [line for line in DEFAULT_LABELS.read_text().splitlines()
            if line and not line.startswith("#") and not line.startswith("server,")]
    assert len(rows) == len(labels.edges), "a pair is labelled twice"
    for (a, b), (rel, arg) in labels.edges.items():
        if a not in registry.tools or b not in registry.tools:
            continue
        ta, tb = registry.tool(a), registry.tool(b)
        assert a != b and ta.server == tb.server and ta.server in labels.servers
        if rel == "explicit":
            assert arg in tb.params, (a, b, arg)
        else:
            assert rel == "implicit" and ta.write and arg is None, (a, b)


def _from_labels(registry: Registry, flip: int = 0) -> list[Judgement]:
    labels = load_labels()
    out = []
    for i, (a, b) in enumerate(labels.pairs(registry)):
        rel, arg = labels.relation(a.name, b.name), labels.argument(a.name, b.name)
        if i < flip and rel != "none":
            rel, arg = "none", None
        out.append(Judgement(a.name, b.name, rel, arg, "", "oracle", a.server))
    return out


def test_perfect_and_degraded_classifiers(registry: Registry) -> None:
    labels = load_labels()
    if any(s not in registry.servers for s in labels.servers):
        pytest.skip("labelled servers are not loaded")
    perfect = _from_labels(registry)
    table = agreement_table({"oracle": perfect}, labels).set_index("relation")
    assert (table.precision == 1).all() and (table.recall == 1).all()
    assert table.loc["explicit", "argument_ok"] == 1
    worse = _from_labels(registry, flip=200)
    t2 = agreement_table({"worse": worse}, labels).set_index("relation")
    assert t2.loc["any edge", "precision"] == 1 and t2.loc["any edge", "recall"] < 1
    assert pairwise_agreement(perfect, perfect)["kappa"] == pytest.approx(1.0)
    assert pairwise_agreement(perfect, worse)["kappa"] < 1


def test_label_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text("server,source,target,relation,argument\nbank,a,b,explicit,x\n")
    with pytest.raises(ValueError, match="servers"):
        load_labels(path)
    path.write_text("# servers: bank\nserver,source,target,relation,argument\nbank,a,b,maybe,\n")
    with pytest.raises(ValueError, match="maybe"):
        load_labels(path)
