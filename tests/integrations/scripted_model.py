"""A scripted "model" for the adapters' tests: an OpenAI-compatible chat server on loopback that replays
each row's ground-truth calls, so a framework's own rollout loop reaches a known reward (1.0).

    with ScriptedModel({last_user_message: [{"name": ..., "arguments": {...}}, ...]}) as model:
        client = OpenAI(base_url=model.base_url, api_key="EMPTY")   # model name: model.model

A request is matched to its script by the conversation's last user message; the k-th assistant turn
after it calls script[k] (one call per turn), and once the script is spent the reply is plain text,
which ends a chat loop. Stateless: two rollouts of one row get the same replies. Streams (SSE, with a
usage chunk when asked) or answers in one body, as the request says. Standard library only, so it runs
in any venv.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "prove-scripted"
DONE_TEXT = "Done."


def _last_user(messages: Sequence[Mapping[str, Any]]) -> tuple[str, int]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            content = messages[i].get("content")
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
            return str(content or ""), i
    raise ValueError("the conversation has no user message")


class ScriptedModel:
    """The server; ``scripts`` maps a row's last user message to its ground-truth calls."""

    def __init__(self, scripts: Mapping[str, Sequence[Mapping[str, Any]]], host: str = "127.0.0.1") -> None:
        self.scripts = {k: [dict(c) for c in v] for k, v in scripts.items()}
        self.requests = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: the tests print what matters
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    return self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
                self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": f"no route {self.path}"}})
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                try:
                    message = model.reply(body.get("messages") or [])
                except (KeyError, ValueError) as exc:
                    return self._json(400, {"error": {"message": str(exc)}})
                model.requests += 1
                if body.get("stream"):
                    return self._stream(message, bool((body.get("stream_options") or {}).get("include_usage")))
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                self._json(200, {"id": f"chatcmpl-{model.requests}", "object": "chat.completion", "created": 0,
                                 "model": MODEL, "usage": _USAGE,
                                 "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, message: dict[str, Any], usage: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                base = {"id": f"chatcmpl-{model.requests}", "object": "chat.completion.chunk", "created": 0,
                        "model": MODEL}
                delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
                if message.get("tool_calls"):
                    delta["tool_calls"] = [{**tc, "index": i} for i, tc in enumerate(message["tool_calls"])]
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
                if usage:
                    chunks.append({**base, "choices": [], "usage": _USAGE})
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._thread: threading.Thread | None = None

    def reply(self, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The assistant message for this conversation: the next scripted call, or the closing text."""
        user, at = _last_user(messages)
        if user not in self.scripts:
            raise KeyError(f"no script for the user message {user[:80]!r}")
        turn = sum(1 for m in messages[at + 1:] if m.get("role") == "assistant")
        script = self.scripts[user]
        if turn >= len(script):
            return {"role": "assistant", "content": DONE_TEXT}
        call = script[turn]
        args = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{turn}", "type": "function", "function": {"name": call["name"], "arguments": args}}]}

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def model(self) -> str:
        return MODEL

    def __enter__(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


_USAGE = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
