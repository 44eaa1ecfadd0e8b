"""bench_integrations plugin: per-call time of the verifiers adapter's tool server (``ProveToolset.call_tool``).

    python benchmarks/bench_integrations.py        # lists "verifiers 0.4.0 ProveToolset.call_tool"

verifiers 0.4.0 pins mcp==2.0.0 against the project's 2.3.0, so it lives in the side venv the tests
build (``tests/side_venv.py``; built here on first use): ``measure`` reruns this file there (``--child``)
and reads the seconds back. What is timed is the adapter's part of a verifiers tool call: the rollout's
state as verifiers hands it to the call (``ProveState``), the row's ``Turn`` rebuilt from it, the call
in the rollout's episode and the log written back. verifiers' own MCP hop (harness -> tool server over
streamable HTTP) and its state channel (a GET and a PUT to the interception server per call) are the
framework's, not the adapter's, and are not in the number.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

FRAMEWORK = "verifiers 0.4.0 ProveToolset.call_tool"
ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ["verifiers==0.4.0", "uv==0.13.9", f"--editable={ROOT / 'environments' / 'prove_env'}"]
"""The side venv of tests/integrations/test_verifiers.py (the same list, so the same venv)."""
WARMUP = 20


def _venv() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from side_venv import side_venv

    return side_venv("verifiers", REQUIREMENTS)


def available() -> str | None:
    try:
        _venv()
    except Exception as exc:  # noqa: BLE001 - the bench lists why the adapter did not run
        return f"its side venv could not be built: {str(exc).splitlines()[0]}"
    return None


def _raw_row(row: Any) -> dict[str, Any]:
    """The training row a ``TurnRow`` was read from, in the shape ``TurnRow.from_row`` reads."""
    spec = asdict(row.spec)
    return {"prompt": list(row.messages), "reward_model": {"ground_truth": json.dumps(row.ground_truth)},
            "extra_info": {"example_id": row.example_id, "turn": row.turn, "kind": row.kind, "split": row.split,
                           "tools": json.dumps(list(row.tools)), "expected_effect": row.expected_effect,
                           "tools_kwargs": {"prove": {"create_kwargs": {
                               "seed": spec["seed"], "prefix": json.dumps(spec["prefix"]),
                               "servers": list(spec["servers"])}}}}}


def measure(env_url: str, row: Any, call: dict[str, Any], n: int) -> list[float]:
    job = {"env_url": env_url, "row": _raw_row(row), "call": call, "n": n}
    done = subprocess.run([str(_venv() / "bin" / "python"), __file__, "--child"], input=json.dumps(job),
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the verifiers benchmark failed in its side venv:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child() -> None:
    # _call_state: how verifiers' _with_state hands a tool call its rollout's state
    import verifiers.v1 as vf
    from verifiers.v1.mcp.server import _call_state

    from prove.integrations.verifiers import ProveState, ProveToolset

    job = json.loads(sys.stdin.read())
    call = job["call"]

    async def go() -> list[float]:
        toolset = ProveToolset(vf.SharedToolsetConfig())
        state = ProveState(row=job["row"], env_url=job["env_url"], episode_id="bench-verifiers")
        _call_state.set(state)
        out = []
        for i in range(WARMUP + job["n"]):
            start = time.perf_counter()
            result = await toolset.call_tool(call["name"], call["arguments"])
            if i >= WARMUP:
                out.append(time.perf_counter() - start)
            assert not result.is_error, result.content
        await state.turn().close()
        return out

    print(json.dumps(asyncio.run(go())))


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    # Run as a script, this file's folder leads sys.path and this file would shadow the verifiers package.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    _child()
