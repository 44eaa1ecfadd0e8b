"""bench_integrations plugin: per-call time of a tool call through NeMo Gym's ``prove`` resources server.

    python benchmarks/bench_integrations.py        # lists "NeMo Gym 0.4.0 resources server POST /<tool>"

NeMo Gym 0.4.0 needs Python 3.12 (and pins mcp<2), so it lives in the side venv the tests build
(``tests/side_venv.py`` from a Python 3.12; built here on first use). ``measure`` starts PROVE's side
(``python -m prove.integrations.nemo_gym serve`` over the bench's ``prove serve``) and ``ng_run`` with the
resources server alone (every server in the side venv, ``skip_venv_if_present``), then reruns this file in
the side venv (``--child``): it seeds a session (``/seed_session`` with the row) and times ``POST /<tool>``
with the session cookie over aiohttp (the client NeMo Gym's servers use), which is what NeMo Gym's simple
agent sends per tool call. The number is the adapter's whole path: the resources server, the HTTP hop to PROVE's side and
``Turn.call`` there (two hops more than ``EnvClient``); the model and the agent's loop are not in it. Beside
it, ``measure`` prints the median of ``GET /`` (NeMo Gym's liveness route) on the same server: the hop
through NeMo Gym's own server stack (its middlewares, uvicorn) that any resources server costs.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

FRAMEWORK = "NeMo Gym 0.4.0 resources server POST /<tool>"
ROOT = Path(__file__).resolve().parents[2]
GYM_DIR = ROOT / "environments" / "nemo_gym"
REQUIREMENTS = ["nemo-gym==0.4.0"]
"""The side venv of tests/integrations/test_nemo_gym.py (the same list and base, so the same venv)."""
WARMUP = 20


def _venv() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from side_venv import find_python, side_venv

    python = find_python("3.12", "PROVE_NEMO_PYTHON")
    if python is None:
        raise RuntimeError("no Python 3.12 (PROVE_NEMO_PYTHON, pyenv's 3.12, python3.12 on PATH)")
    return side_venv("nemo-gym", REQUIREMENTS, base=python)


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
    from prove.proc import ChildServer, free_port, spawn, stop_group

    venv = _venv()
    service_port, gym_port = free_port(), free_port()
    serve = [sys.executable, "-m", "prove.integrations.nemo_gym", "serve", "--env-url", env_url,
             "--port", str(service_port)]
    with ChildServer(serve, [f"http://127.0.0.1:{service_port}/health"], name="NeMo Gym's PROVE service"), \
            tempfile.TemporaryDirectory(prefix="bench-nemo-gym-") as tmp:
        (Path(tmp) / "venvs" / "resources_servers" / "prove").mkdir(parents=True)
        (Path(tmp) / "venvs" / "resources_servers" / "prove" / ".venv").symlink_to(venv)
        (Path(tmp) / "gym.yaml").write_text(
            "prove_resources_server:\n  resources_servers:\n    prove:\n      entrypoint: app.py\n"
            f"      prove_url: http://127.0.0.1:{service_port}\n      domain: agent\n      host: 127.0.0.1\n"
            f"      port: {gym_port}\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", WANDB_MODE="disabled")
        log = Path(tmp) / "ng_run.log"
        with log.open("wb") as out:
            proc = spawn([str(venv / "bin" / "ng_run"), f"+config_paths=[{tmp}/gym.yaml]",
                          f"+uv_venv_dir={tmp}/venvs", "+skip_venv_if_present=true", "+head_server.host=127.0.0.1",
                          f"+head_server.port={free_port()}"], env=env, cwd=GYM_DIR, stdout=out,
                         stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while "servers ready!" not in log.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"ng_run did not come up:\n{log.read_text()[-3000:]}")
                time.sleep(1)
            job = {"url": f"http://127.0.0.1:{gym_port}", "row": _raw_row(row), "call": call, "n": n}
            done = subprocess.run([str(venv / "bin" / "python"), __file__, "--child"], input=json.dumps(job),
                                  capture_output=True, text=True, timeout=600, check=False, env=env)
        finally:
            stop_group(proc)
    if done.returncode != 0:
        raise RuntimeError(f"the NeMo Gym benchmark failed in its side venv:\n{done.stderr[-3000:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"# NeMo Gym's own hop, GET / (its liveness route) on the same resources server: "
          f"{statistics.median(got['liveness']) * 1e3:.2f} ms median", file=sys.stderr)
    return got["calls"]


def _child() -> None:
    from aiohttp import ClientSession, CookieJar

    job = json.loads(sys.stdin.read())
    call = job["call"]

    async def go() -> dict[str, list[float]]:
        # unsafe: the jar keeps cookies of an IP-address host (127.0.0.1), as NeMo Gym's agent passes them on
        async with ClientSession(cookie_jar=CookieJar(unsafe=True)) as http:
            seeded = await http.post(f"{job['url']}/seed_session", json={"prove_row": job["row"]})
            assert seeded.status == 200, await seeded.text()
            out: dict[str, list[float]] = {"calls": [], "liveness": []}
            for i in range(WARMUP + job["n"]):
                start = time.perf_counter()
                response = await http.post(f"{job['url']}/{call['name']}", json=call["arguments"])
                text = await response.text()
                if i >= WARMUP:
                    out["calls"].append(time.perf_counter() - start)
                assert response.status == 200, text
                start = time.perf_counter()
                response = await http.get(f"{job['url']}/")
                await response.text()
                if i >= WARMUP:
                    out["liveness"].append(time.perf_counter() - start)
            return out

    print(json.dumps(asyncio.run(go())))


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    # Run as a script, this file's folder leads sys.path and this file would shadow the nemo_gym package.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    _child()
