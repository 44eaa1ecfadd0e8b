"""The CPU checks of the training integration, as one call the 05 notebook shows (needs verl).

    from prove.train.smoke import live_check
    tables = await live_check(results_dir="results")   # dataset, rollouts (live servers), rewards

On this machine everything but generation runs for real: demo rows built from live calls are
written to parquet and read back by VERL's dataset class with the SmolLM2 tokenizer and our hermes
template; ``prove serve`` starts on loopback; VERL's tool registry loads ``ProveTool`` from a
generated YAML; ``ProveAgentLoop`` runs concurrent trajectories with a scripted policy (the
rows' ground-truth calls, and a padded variant with extra and unknown calls); VERL's reward
manager scores them through the configured reward hook; the episodes are checked closed.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pandas as pd

__all__ = ["live_check"]

PADDING = ({"name": "get_balance", "arguments": {"account_id": "ACC-0001"}},
           {"name": "open_pod_bay_doors", "arguments": {}})


def _episodes(url: str) -> int:
    with urllib.request.urlopen(f"{url}/control/health", timeout=10) as resp:
        return json.loads(resp.read())["episodes"]


async def live_check(results_dir: str | Path = "results", model: str = "qwen3-4b",
                     n_examples: int = 2, servers: tuple[str, ...] = ("banking",)) -> dict[str, pd.DataFrame]:
    """Run the checks; return {"dataset", "rollouts"} tables (one row per row / trajectory)."""
    from verl.tools.tool_registry import load_all_tools

    from prove.env.launch import EnvServer
    from prove.rows import write_rows
    from prove.train.chat_template import load_tokenizer
    from prove.train.compose import check_grpo
    from prove.train.config import load_train_config
    from prove.train.dataset import ProveRLDataset
    from prove.train.demo import demo_examples, demo_rows
    from prove.train.launch import RunPaths, grpo_overrides
    from prove.train.rollout import oracle_script, run_rollouts, score_with_verl
    from prove.train.session import close_clients
    from prove.train.tool_config import write_tool_config

    out = Path(results_dir) / "train_smoke"
    tokenizer = load_tokenizer()
    rows = demo_rows(demo_examples(n_examples))
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
            "prompt_tokens": len(tokenizer.apply_chat_template(
                item["raw_prompt"], tools=json.loads(item["extra_info"]["tools"]),
                add_generation_prompt=True, tokenize=True)),
        } for item in (dataset[i] for i in range(len(dataset)))])
        tools = load_all_tools(str(tools_yaml), None)
        before = _episodes(server.url)
        scripts = [oracle_script(r, parallel=i % 2 == 1) for i, r in enumerate(rows)]
        scripts += [oracle_script(r, extra=PADDING) for r in rows]
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
