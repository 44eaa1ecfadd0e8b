"""Figures and readable renderings for the 03_synthesis notebook.

    fig = funnel_figure(result.funnel); fig.savefig("figures/synth_funnel.png")
    print(render_example(example))
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["funnel_figure", "distributions_figure", "render_example", "funnel_table",
           "distribution_tables"]

_STAGES = ("attempted", "generated", "replay_valid", "kept")


def funnel_table(funnel: Mapping[str, Mapping[str, Any]]) -> Any:
    """One row per kind: stage counts and rejections by reason."""
    import pandas as pd

    rows = []
    for kind, f in funnel.items():
        row = {"kind": kind, **{s: f[s] for s in _STAGES}}
        row.update({f"rejected: {r}": n for r, n in f["rejected"].items()})
        rows.append(row)
    return pd.DataFrame(rows).fillna(0).set_index("kind")


def funnel_figure(funnel: Mapping[str, Mapping[str, Any]]) -> Any:
    """Left: chains → generated → replay-valid → kept per kind; right: rejections by reason."""
    import matplotlib.pyplot as plt

    kinds = list(funnel)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    width = 0.8 / max(1, len(_STAGES))
    for i, stage in enumerate(_STAGES):
        xs = [k + (i - 1.5) * width for k in range(len(kinds))]
        label = "chains drawn (scripts)" if stage == "attempted" else stage.replace("_", "-")
        ax1.bar(xs, [funnel[k][stage] for k in kinds], width, label=label)
    ax1.set_xticks(range(len(kinds)), kinds)
    ax1.set_ylabel("examples")
    ax1.set_title("Funnel: chains → generated → replay-valid → kept")
    ax1.legend(fontsize=8)
    reasons = sorted({r for f in funnel.values() for r in f["rejected"]})
    bottom = [0] * len(reasons)
    for kind in kinds:
        vals = [funnel[kind]["rejected"].get(r, 0) for r in reasons]
        ax2.barh(reasons, vals, left=bottom, label=kind)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax2.set_xlabel("rejected examples")
    ax2.set_title("Rejections by reason")
    if reasons:
        ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


def distribution_tables(examples: Sequence[Mapping[str, Any]]) -> dict[str, Counter]:
    out = {name: Counter() for name in ("turns", "calls_per_turn", "servers", "perturbations",
                                        "chain_length")}
    for ex in examples:
        out["turns"][len(ex["turns"])] += 1
        for t in ex["turns"]:
            out["calls_per_turn"][len(t["calls"])] += 1
        for s in ex["servers"]:
            out["servers"][s] += 1
        for p in ex["perturbations"] or [{"type": "none"}]:
            out["perturbations"][p["type"]] += 1
        out["chain_length"][len(ex["chain"]["tools"])] += 1
    return out


def distributions_figure(examples: Sequence[Mapping[str, Any]]) -> Any:
    """Turns per example, calls per turn, examples per server, perturbations."""
    import matplotlib.pyplot as plt

    d = distribution_tables(examples)
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5))
    for ax, key, title in ((axes[0][0], "turns", "user turns per example"),
                           (axes[0][1], "calls_per_turn", "ground-truth calls per user turn")):
        xs = sorted(d[key])
        ax.bar([str(x) for x in xs], [d[key][x] for x in xs], color="tab:blue")
        ax.set_title(title)
    servers = sorted(d["servers"], key=lambda s: -d["servers"][s])
    axes[1][0].bar(servers, [d["servers"][s] for s in servers], color="tab:green")
    axes[1][0].set_title("examples per server")
    axes[1][0].tick_params(axis="x", rotation=70, labelsize=8)
    perts = sorted(d["perturbations"], key=lambda p: -d["perturbations"][p])
    axes[1][1].barh(perts, [d["perturbations"][p] for p in perts], color="tab:orange")
    axes[1][1].set_title("perturbations (an example may carry several)")
    fig.tight_layout()
    return fig


def render_example(example: Mapping[str, Any], width: int = 100, max_result: int = 160) -> str:
    """The conversation as text: roles, calls with arguments, shortened results, ground truth."""
    lines = [f"{example['id']}  kind={example['kind']}  servers={','.join(example['servers'])}  "
             f"seed={example['seed']}  chain={example['chain']['id']}"]
    if example["perturbations"]:
        lines.append("perturbations: " + "; ".join(
            json.dumps(p, sort_keys=True)[:140] for p in example["perturbations"]))
    turn = -1
    for m in example["messages"]:
        role = m["role"]
        if role == "system":
            continue
        if role == "user":
            turn += 1
            gt = example["turns"][turn]
            lines.append(f"--- turn {turn}: ground truth {[c['name'] for c in gt['calls']]} "
                         f"depends_on={gt['depends_on']}")
        if m.get("tool_calls"):
            for tc in m["tool_calls"]:
                lines.append(f"  assistant → {tc['function']['name']}({tc['function']['arguments']})")
        elif role == "tool":
            text = m["content"]
            lines.append(f"  tool ← {text[:max_result]}{'…' if len(text) > max_result else ''}")
        else:
            wrapped = textwrap.fill(m["content"], width, subsequent_indent=" " * 12)
            lines.append(f"  {role:>9}: {wrapped}")
    r = example["replay"]
    lines.append(f"replay: {r['n_calls']} calls, {r['n_errors']} failed, state {r['state_hash'][:16]}…")
    return "\n".join(lines)
