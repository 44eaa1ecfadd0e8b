"""`prove serve`'s limits: a byte budget given on the command line (refused clearly when malformed),
and capacity answered with HTTP 503 on every route, MCP included.

    .venv/bin/python -m pytest tests/env/test_serve_flags.py -q
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from prove.env.client import EnvCapacity, EnvClient
from prove.env.launch import EnvServer


def test_a_malformed_budget_is_refused_before_serving() -> None:
    out = subprocess.run([sys.executable, "-m", "prove", "serve", "--max-memory", "2X", "--port", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--max-memory must be a byte count like 2G" in out.stderr


def test_a_budget_on_the_command_line_serves() -> None:
    with EnvServer(extra_args=["--max-memory", "256M"]) as server:
        with urllib.request.urlopen(server.url + "/control/health", timeout=30) as resp:
            assert resp.status == 200


def _post(url: str, body: dict) -> tuple[int, dict, str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read()), resp.headers.get("retry-after", "")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers.get("retry-after", "")


def test_capacity_is_503_on_mcp_as_on_control() -> None:
    """One open episode allowed and in use (called within --busy-seconds): a second episode is
    refused with status 503 on both doors, the MCP body still a JSON-RPC error a client reads, and
    the first episode's calls still answer 200."""
    def call(episode: str) -> dict:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "_meta": {"episode_id": episode, "seed": 0}, "name": "list_accounts", "arguments": {}}}

    with EnvServer(extra_args=["--max-episodes", "1", "--busy-seconds", "600",
                               "--servers", "banking"]) as server:
        mcp = f"{server.url}/banking/mcp"
        status, body, _ = _post(mcp, call("first"))
        assert status == 200 and "result" in body, body
        status, body, retry = _post(mcp, call("second"))
        assert status == 503 and retry == "1", (status, body)
        assert body["error"]["code"] == -32011 and body["error"]["data"]["status"] == 503
        assert "--max-episodes" in body["error"]["message"]
        status, body, _ = _post(f"{server.url}/control/episodes", {"episode_id": "third"})
        assert status == 503 and "--max-episodes" in body["error"], (status, body)
        assert _post(mcp, call("first"))[0] == 200  # the open one is served as before

        async def client_call() -> None:
            async with EnvClient(server.url) as env:
                await env.call("list_accounts", {}, episode_id="fourth", seed=0)

        with pytest.raises(EnvCapacity) as caught:
            asyncio.run(client_call())
        assert caught.value.status == 503
