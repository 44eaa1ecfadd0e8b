"""PROVE in NVIDIA NeMo Gym's terms (``nemo-gym`` 0.4, for NeMo RL): the rows as NeMo Gym JSONL, and the
PROVE side of its ``prove`` resources server (an HTTP service the resources server forwards to).

    python -m prove.integrations.nemo_gym export --rows results/synth/val.parquet --out data/nemo_gym/val.jsonl
    python -m prove.integrations.nemo_gym serve --port 8790            # starts prove serve; or --env-url URL

NeMo Gym needs Python >= 3.12 and pins mcp<2, PROVE runs on 3.11 with mcp 2.3, so the two run in two
interpreters and meet over HTTP. The NeMo Gym half is the resources server
``environments/nemo_gym/resources_servers/prove`` (NeMo Gym's ``SimpleResourcesServer``, its packaging
convention: ``app.py``, ``configs/prove.yaml``, ``requirements.txt``, ``data/``), which holds no PROVE logic:
its ``/seed_session``, every tool endpoint and ``/verify`` forward here, keyed by NeMo Gym's session id.
This half is ``prove.integrations.turn.Turn`` per session:

* ``POST /seed_session {episode_id, row}``: a fresh PROVE episode for the row (opened lazily at its seed
  with its prefix replayed); every NeMo Gym session is its own episode, so rollouts never share state.
* ``POST /call {episode_id, name, arguments}``: one tool call (``arguments``: the JSON text the agent
  posted); returns the text the model reads back, logged as training logs it.
* ``POST /verify {episode_id, calls, reward}``: the rollout's calls in the model's order (each
  ``function_call`` of NeMo Gym's response), ``prove.reward`` under ``reward`` (``prove`` or an ablation)
  over that call log, then the episode closes. A call NeMo Gym's simple agent answered itself (arguments
  that are no JSON) is logged as PROVE's rollouts log it, so the reward charges it as training does.
* ``POST /close {episode_id}``, ``GET /health``.

``nemo_gym_row`` / ``export`` write a row as NeMo Gym's dataset wants it: ``responses_create_params``
(the row's conversation as Responses API input items and its offered tools as function tools),
``agent_ref`` (the simple agent of ``configs/prove.yaml``), ``prove_reward`` when the row names its own
reward configuration, and ``prove_row`` (the training row itself:
tools, seed, prefix, ground truth), which ``/seed_session`` hands back here.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from prove.integrations.turn import Turn, TurnRow, prove_servers
from prove.reward import ABLATIONS, outcome_of

__all__ = ["AGENT_NAME", "EPISODE_PREFIX", "nemo_gym_row", "export", "rollout_log", "create_app", "main"]

AGENT_NAME = "prove_simple_agent"
"""The simple agent ``configs/prove.yaml`` declares: a row's ``agent_ref`` names it."""
EPISODE_PREFIX = "nemo-gym-"
"""How the resources server names a session's episode: this prefix and NeMo Gym's session id."""


def _input_items(row: TurnRow) -> list[dict[str, Any]]:
    """The row's conversation as Responses API input items: messages, and each earlier assistant
    turn's tool calls and results as ``function_call`` / ``function_call_output`` items."""
    items: list[dict[str, Any]] = []
    for m in row.chat():
        if m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
            continue
        if m.get("content") or not m.get("tool_calls"):
            items.append({"type": "message", "role": m["role"], "content": m.get("content") or ""})
        for call in m.get("tool_calls") or []:
            fn = call["function"]
            items.append({"type": "function_call", "call_id": call["id"], "name": fn["name"],
                          "arguments": fn["arguments"]})
    return items


def nemo_gym_row(raw: Mapping[str, Any], agent: str = AGENT_NAME, reward: str | None = None) -> dict[str, Any]:
    """One line of NeMo Gym's dataset JSONL for a training row (``prove.rows``); ``reward``: the
    ``prove.reward`` configuration this row is scored with (``prove_reward``; default: the server's)."""
    if reward is not None and reward not in ABLATIONS:
        raise ValueError(f"unknown reward config {reward!r}; known: {', '.join(ABLATIONS)}")
    row = TurnRow.from_row(raw)
    tools = [{"type": "function", "name": fn["name"], "description": fn.get("description") or "",
              "parameters": fn.get("parameters") or {"type": "object", "properties": {}}, "strict": False}
             for fn in (t.get("function", t) for t in row.tools)]
    line = {"responses_create_params": {"input": _input_items(row), "tools": tools},
            "agent_ref": {"type": "responses_api_agents", "name": agent},
            "prove_row_id": row.id, "prove_row": dict(raw)}
    if reward is not None:
        line["prove_reward"] = reward
    return line


def export(rows: Iterable[Mapping[str, Any]], out: str | Path, agent: str = AGENT_NAME,
           reward: str | None = None) -> Path:
    """Write ``rows`` as NeMo Gym's JSONL (``ng_collect_rollouts +input_jsonl_fpath=<out>``)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for raw in rows:
            fh.write(json.dumps(nemo_gym_row(raw, agent, reward), sort_keys=True) + "\n")
    return out


async def rollout_log(turn: Turn, calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rollout's call log in the model's order. ``calls``: NeMo Gym's ``function_call`` items
    (``name``, ``arguments`` text). A call whose arguments parse as JSON reached the resources server and
    so this service (``Turn.call`` logged it, refused if the row does not offer the tool or the JSON is no
    object); one whose arguments do not parse was answered by NeMo Gym's simple agent itself, and is
    logged here as ``Turn.call`` logs it, without reaching a server."""
    refusals = Turn(turn.row, [], episode_id=turn.episode_id)  # no server: a refused call never reaches one
    served = iter(turn.log)
    log: list[dict[str, Any]] = []
    for call in calls:
        arguments = call.get("arguments")
        try:
            json.loads(arguments if isinstance(arguments, str) else json.dumps(arguments))
        except (json.JSONDecodeError, TypeError):
            await refusals.call(call.get("name"), arguments)
            log.append(refusals.log[-1])
            continue
        entry = next(served, None)
        if entry is None or entry["name"] != call.get("name"):
            raise ValueError(f"the episode's log {[e['name'] for e in turn.log]} does not match the response "
                             f"at call {call.get('name')!r}")
        log.append(entry)
    rest = [e["name"] for e in served]
    if rest:
        raise ValueError(f"the episode logged calls the response does not show: {rest}")
    return log


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(env_urls: Sequence[str], timeout: float = 30.0) -> Starlette:
    """The PROVE side of NeMo Gym's ``prove`` resources server, over the ``prove serve`` at ``env_urls``."""
    turns: dict[str, Turn] = {}

    async def body(request: Request, *keys: str) -> dict[str, Any]:
        data = await request.json()
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        missing = [k for k in keys if k not in data]
        if missing:
            raise ValueError(f"missing {missing}; this endpoint takes {list(keys)}")
        return data

    def turn_of(episode_id: Any) -> Turn:
        turn = turns.get(str(episode_id))
        if turn is None:
            raise KeyError(f"no episode {episode_id!r}: NeMo Gym's /seed_session opens one per session "
                           f"({len(turns)} open)")
        return turn

    async def seed_session(request: Request) -> JSONResponse:
        try:
            data = await body(request, "episode_id", "row")
            row = TurnRow.from_row(data["row"])
        except ValueError as exc:
            return _error(400, str(exc))
        episode_id = str(data["episode_id"])
        old = turns.pop(episode_id, None)
        if old is not None:  # a session seeded twice starts over from the row's seed
            await old.close()
        turns[episode_id] = Turn(row, env_urls, episode_id=episode_id, timeout=timeout)
        return JSONResponse({"episode_id": episode_id, "row_id": row.id, "tools": row.tool_names})

    async def call(request: Request) -> JSONResponse:
        try:
            data = await body(request, "episode_id", "name", "arguments")
            turn = turn_of(data["episode_id"])
        except ValueError as exc:
            return _error(400, str(exc))
        except KeyError as exc:
            return _error(404, exc.args[0])
        text = await turn.call(data["name"], data["arguments"])
        return JSONResponse({"text": text, "ok": bool(turn.log[-1]["ok"])})

    async def verify(request: Request) -> JSONResponse:
        try:
            data = await body(request, "episode_id", "calls")
            reward = str(data.get("reward") or "prove")
            if reward not in ABLATIONS:
                raise ValueError(f"unknown reward config {reward!r}; known: {', '.join(ABLATIONS)}")
            turn = turns.pop(str(data["episode_id"]))
        except ValueError as exc:
            return _error(400, str(exc))
        except KeyError:
            return _error(404, f"no episode {data['episode_id']!r}: seed the session first")
        try:
            turn.log = await rollout_log(turn, data["calls"])
            row = turn.row
            effect = await turn.effect() if row.expected_effect else ""
            scores = await turn.score(reward, effect or None)
        except ValueError as exc:
            return _error(409, str(exc))
        finally:
            await turn.close()
        return JSONResponse({
            "reward": float(scores["score"]), "reward_config": reward, "episode_id": turn.episode_id,
            "row_id": row.id, "log": turn.log, "effect": effect, "expected_effect": row.expected_effect,
            "outcome": outcome_of(effect, row.expected_effect) if row.expected_effect else None, "scores": scores,
        })

    async def close(request: Request) -> JSONResponse:
        try:
            data = await body(request, "episode_id")
        except ValueError as exc:
            return _error(400, str(exc))
        turn = turns.pop(str(data["episode_id"]), None)
        return JSONResponse({"closed": bool(turn and await turn.close())})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "episodes": len(turns), "env_urls": list(env_urls)})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for turn in list(turns.values()):  # episodes of sessions never verified
            await turn.close()
        turns.clear()

    return Starlette(routes=[Route("/seed_session", seed_session, methods=["POST"]),
                             Route("/call", call, methods=["POST"]), Route("/verify", verify, methods=["POST"]),
                             Route("/close", close, methods=["POST"]), Route("/health", health)],
                     lifespan=lifespan)


def main(argv: list[str] | None = None) -> int:
    """``python -m prove.integrations.nemo_gym export|serve``."""
    from prove.rows import read_rows

    parser = argparse.ArgumentParser(prog="python -m prove.integrations.nemo_gym", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write training rows as NeMo Gym's dataset JSONL")
    ex.add_argument("--rows", required=True, help="training rows (a parquet from synthesis: train.parquet)")
    ex.add_argument("--out", required=True, help="the JSONL to write (ng_collect_rollouts +input_jsonl_fpath=...)")
    ex.add_argument("--agent", default=AGENT_NAME, help="the agent each row's agent_ref names")
    ex.add_argument("--reward", default=None, choices=sorted(ABLATIONS),
                    help="score these rows under this reward configuration (default: the resources server's)")
    sv = sub.add_parser("serve", help="the PROVE side of NeMo Gym's prove resources server")
    sv.add_argument("--env-url", action="append", default=None,
                    help="prove serve's URL (repeat for workers); default: start one for this service")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8790)
    sv.add_argument("--timeout", type=float, default=30.0, help="seconds per PROVE request")
    args = parser.parse_args(argv)
    if args.command == "export":
        rows = read_rows(Path(args.rows))
        out = export(rows, args.out, args.agent, args.reward)
        print(f"# {len(rows)} rows -> {out}", file=sys.stderr)
        return 0
    import uvicorn

    def stop(signum: int, frame: object) -> None:  # unwind on SIGTERM, so a prove serve started here stops too
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    with prove_servers(args.env_url) as urls:
        print(f"# NeMo Gym's PROVE service: prove serve {', '.join(urls)}, http://{args.host}:{args.port}",
              file=sys.stderr)
        uvicorn.run(create_app(urls, args.timeout), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
