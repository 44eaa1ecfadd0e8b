"""OpenEnv adapter's step path for ``benchmarks/bench_integrations.py``: one tool call as a
``ProveEnv`` (OpenEnv's client, WebSocket) step against ``python -m prove.integrations.openenv`` in
its own process, which runs it in the row's episode on the same `prove serve`.

    python benchmarks/bench_integrations.py --calls 300
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

FRAMEWORK = "OpenEnv (openenv-core {version}): ProveEnv.step over WebSocket"
WARMUP = 20


def available() -> str | None:
    """Why the OpenEnv adapter cannot run here, or None."""
    global FRAMEWORK
    try:
        from importlib.metadata import version

        import prove.integrations.openenv  # noqa: F401
    except ImportError as exc:
        return f"the openenv extra is not installed ({exc})"
    FRAMEWORK = FRAMEWORK.format(version=version("openenv-core"))
    return None


def _raw_row(row: Any) -> dict[str, Any]:
    """The training row (``prove.rows`` contract) a ``TurnRow`` was read from: what --rows serves."""
    from prove.rows import encode_message

    prefix = json.dumps([dict(c) for c in row.spec.prefix])
    create = {"seed": row.spec.seed, "prefix": prefix, "servers": list(row.spec.servers)}
    return {
        "data_source": "prove", "agent_name": "prove_tool_agent", "ability": "tool_use",
        "prompt": [encode_message(m) for m in row.messages],
        "reward_model": {"style": "rule", "ground_truth": json.dumps(row.ground_truth)},
        "extra_info": {"index": 0, "split": row.split, "example_id": row.example_id, "kind": row.kind,
                       "turn": row.turn, "servers": list(row.spec.servers), "seed": row.spec.seed,
                       "prefix": prefix, "tools": json.dumps(list(row.tools)), "tool_selection": row.tool_names,
                       "need_tools_kwargs": True, "tools_kwargs": {"prove": {"create_kwargs": create}},
                       "expected_effect": row.expected_effect},
    }


def measure(env_url: str, row: Any, call: dict[str, Any], n: int) -> list[float]:
    """Seconds per ``ProveEnv.step`` of ``call``, ``n`` times after ``WARMUP``, in one episode."""
    from prove.integrations.openenv import OpenEnvServer, ProveAction, ProveEnv
    from prove.rows import write_rows

    rows = write_rows([_raw_row(row)], Path(tempfile.mkdtemp(prefix="bench-openenv-")) / "rows.parquet")
    action = ProveAction(tool_name=call["name"], arguments=call["arguments"])
    out = []
    with OpenEnvServer(rows, [env_url]) as server, ProveEnv(base_url=server.url).sync() as env:
        env.reset(row=row.id)
        for i in range(WARMUP + n):
            start = time.perf_counter()
            obs = env.step(action).observation
            if i >= WARMUP:
                out.append(time.perf_counter() - start)
            if not obs.ok:
                raise RuntimeError(f"{call['name']} failed through OpenEnv: {obs.result}")
        env.step(ProveAction())
    return out
