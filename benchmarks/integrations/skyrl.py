"""SkyRL-Gym plugin of ``benchmarks/bench_integrations.py``: per-call time of ``ProveTextEnv.step``.

    python benchmarks/bench_integrations.py

``measure`` registers the environment, makes it with ``skyrl_gym.make`` from the row's columns as
SkyRL's dataset hands them over, and times ``step`` on the model text of one ``<tool_call>``: the
step path SkyRL's generator runs per assistant turn (parse, call in the episode, the tool message).
"""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

FRAMEWORK = "SkyRL-Gym (skyrl-gym 0.4.0) ProveTextEnv.step"
WARMUP = 20


def available() -> str | None:
    """Why the plugin cannot run (skyrl_gym missing: ``pip install -e .[skyrl]``), or None."""
    return None if importlib.util.find_spec("skyrl_gym") else "skyrl_gym is not installed (pip install -e .[skyrl])"


def measure(env_url: str, row: Any, call: dict[str, Any], n: int) -> list[float]:
    """Seconds per ``step`` carrying ``call``, ``n`` times after ``WARMUP``, in one episode of ``row``."""
    import skyrl_gym

    from prove.integrations.skyrl import register_prove

    env_id = register_prove(env_url, env_id="prove-bench")
    extras = {
        "reward_model": {"style": "rule", "ground_truth": json.dumps(row.ground_truth)},
        "extra_info": {"example_id": row.example_id, "turn": row.turn, "kind": row.kind,
                       "tools": json.dumps(list(row.tools)), "expected_effect": row.expected_effect,
                       "tools_kwargs": {"prove": {"create_kwargs": {
                           "seed": row.spec.seed, "prefix": json.dumps(list(row.spec.prefix)),
                           "servers": list(row.spec.servers)}}}},
        "max_turns": WARMUP + n + 1,
    }
    env = skyrl_gym.make(env_id, env_config={}, extras=extras)
    text = f"<tool_call>\n{json.dumps({'name': call['name'], 'arguments': call['arguments']})}\n</tool_call>"
    out = []
    for i in range(WARMUP + n):
        start = time.perf_counter()
        env.step(text)
        if i >= WARMUP:
            out.append(time.perf_counter() - start)
    env.close()
    return out
