"""The CPU checks of the training integration, as one call the 05 notebook shows (needs verl).

    from prove.train.smoke import live_check
    tables = await live_check(results_dir="results")   # dataset, rollouts (live servers), rewards

It reads the synthesis export 03 wrote (``<results_dir>/synth``, or ``synth_dir``): the training
rows of a few examples of its train split (``n_examples`` multi-turn conversations, one
clarification, one abstention, in :func:`prove.train.data.sample_order`). On this machine
everything but generation runs for real: the rows are written to parquet and read back by VERL's
dataset class with the SmolLM2 tokenizer and our hermes template; ``prove serve`` starts on
loopback with the examples' servers; VERL's tool registry loads ``ProveTool`` from a generated
YAML; ``ProveAgentLoop`` runs concurrent trajectories with a scripted policy (the rows'
ground-truth calls, and a padded variant with an extra lookup and an unknown call,
:func:`prove.train.rollout.padding_calls`); VERL's reward manager scores them through the
configured reward hook; the episodes are checked closed.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["live_check", "export_rows"]


def _episodes(url: str) -> int:
    with urllib.request.urlopen(f"{url}/control/health", timeout=10) as resp:
        return json.loads(resp.read())["episodes"]


def export_rows(synth_dir: str | Path, n_examples: int = 2) -> list[dict[str, Any]]:
    """The export's train rows of ``n_examples`` multi-turn examples, one clarification and one
    abstention (the first of each kind in ``sample_order``), indexed 0..n-1."""
    import pyarrow.parquet as pq

    from prove.train.data import read_split, sample_order

    wanted = {"multi_turn": n_examples, "clarification": 1, "abstention": 1}
    chosen: set[str] = set()
    for example in sample_order(read_split(Path(synth_dir))["train"]):
        if wanted.get(example["kind"], 0) > 0:
            wanted[example["kind"]] -= 1
            chosen.add(example["id"])
    rows = [r for r in pq.read_table(Path(synth_dir) / "train.parquet").to_pylist()
            if r["extra_info"]["example_id"] in chosen]
    if not rows:
        raise ValueError(f"{synth_dir}: no train rows to check")
    for i, row in enumerate(rows):
        row["extra_info"]["index"] = i
    return rows


async def live_check(results_dir: str | Path = "results", model: str = "qwen3-4b", n_examples: int = 2,
                     synth_dir: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """Run the checks; return {"dataset", "rollouts"} tables (one row per row / trajectory)."""
    from verl.tools.tool_registry import load_all_tools

    from prove.env.launch import EnvServer
    from prove.rows import write_rows
    from prove.train.chat_template import load_tokenizer
    from prove.train.compose import check_grpo
    from prove.train.config import load_train_config
    from prove.train.dataset import ProveRLDataset, prompt_length
    from prove.train.launch import RunPaths, grpo_overrides
    from prove.train.rollout import oracle_script, padding_calls, run_rollouts, score_with_verl
    from prove.train.session import close_clients
    from prove.train.tool_config import write_tool_config

    out = Path(results_dir) / "train_smoke"
    tokenizer = load_tokenizer()
    rows = export_rows(Path(synth_dir) if synth_dir is not None else Path(results_dir) / "synth", n_examples)
    servers = tuple(sorted({s for r in rows for s in r["extra_info"]["servers"]}))
    parquet = write_rows(rows, out / "rl_rows.parquet")
    cfg = load_train_config(model)
    variant = cfg.variant("default")
    with EnvServer(extra_args=["--servers", ",".join(servers)]) as server:
        tools_yaml = write_tool_config(out / "tools.yaml", [server.url], servers=servers)
        key = "actor_rollout_ref.rollout.multi_turn.tool_config_path="
        overrides = [o for o in grpo_overrides(cfg, variant, RunPaths.for_run(cfg, variant, out))
                     if not o.startswith(key)]
        verl_cfg = check_grpo([*overrides, key + str(tools_yaml)])
        dataset = ProveRLDataset(str(parquet), tokenizer, verl_cfg.data)
        data_table = pd.DataFrame([{
            "example": item["extra_info"]["example_id"], "turn": item["extra_info"]["turn"],
            "kind": item["extra_info"]["kind"], "messages": len(item["raw_prompt"]),
            "offered_tools": len(item["extra_info"]["tool_selection"]),
            "prompt_tokens": prompt_length(tokenizer, rows[item["index"]]),  # offered tools included
        } for item in (dataset[i] for i in range(len(dataset)))])
        tools = load_all_tools(str(tools_yaml), None)
        before = _episodes(server.url)
        scripts = [oracle_script(r, parallel=i % 2 == 1) for i, r in enumerate(rows)]
        scripts += [oracle_script(r, extra=padding_calls(r)) for r in rows]
        try:
            outputs = await run_rollouts(verl_cfg, tokenizer, tools, rows * 2, scripts)
            failed = [o for o in outputs if isinstance(o, BaseException)]
            if failed:
                raise failed[0]
            scores = await score_with_verl(verl_cfg, tokenizer, rows * 2, outputs)
        finally:
            await close_clients()
        after = _episodes(server.url)
    rollouts = pd.DataFrame([{
        "example": row["extra_info"]["example_id"], "turn": row["extra_info"]["turn"],
        "policy": "oracle" if i < len(rows) else "oracle+padding",
        "calls": " ".join(e["name"] for e in o.extra_fields["tool_calls"]) or "(none)",
        "ok": sum(e["ok"] for e in o.extra_fields["tool_calls"]),
        "response_tokens": len(o.response_ids), "score": s["score"], "coverage": s["coverage"],
        "efficiency": s["efficiency"], "n_unknown_name": s["n_unknown_name"],
    } for i, (row, o, s) in enumerate(zip(rows * 2, outputs, scores, strict=True))])
    rollouts.attrs["episodes_open_before_after"] = (before, after)
    rollouts.attrs["tools_loaded"] = len(tools)
    return {"dataset": data_table, "rollouts": rollouts}
