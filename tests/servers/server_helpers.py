"""Shared by the per-server tests (tests/servers/test_<name>.py): the ``hub`` fixture over a
module's tiny hand-built state, a call that must succeed, and one that must fail with given
fragments in its error and leave the state unchanged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from prove.env import Hub, ServerSpec, ServerState
from prove.env.errors import REASONS

EPISODE = "t"  # the one episode each test's hub opens


def hub_fixture(server: ServerSpec, tiny: Callable[[], ServerState]) -> Any:
    """A ``hub`` fixture for a test module: ``server`` over a fresh ``tiny()`` state, one episode
    open. Use as ``hub = hub_fixture(SERVER, tiny)``."""

    @pytest.fixture
    def hub() -> Hub:
        h = Hub.for_state(server, tiny())
        h.open(EPISODE, seed=0)
        return h

    return hub


def ok(hub: Hub, tool: str, /, **args: Any) -> Any:
    """Call ``tool`` with ``args``; it must succeed; its result."""
    out = hub.call(tool, args, episode_id=EPISODE)
    assert out["ok"], out
    return out["result"]


def fails(hub: Hub, tool: str, /, *fragments: str, **args: Any) -> str:
    """Call ``tool`` with ``args``; it must fail, its error must contain every fragment, and the
    state must be what it was before the call; the error."""
    every = sorted(hub.registry.servers)  # the hub's server(s), whether called yet or not
    before = hub.state_hash(EPISODE, every)
    out = hub.call(tool, args, episode_id=EPISODE)
    assert not out["ok"], out
    for frag in fragments:
        assert frag in out["error"], (frag, out["error"])
    assert out["detail"]["reason"] in REASONS, out["detail"]  # every refusal carries its facts
    assert hub.state_hash(EPISODE, every) == before, "a failed call changed the state"
    return out["error"]


def refusal(hub: Hub, tool: str, /, **args: Any) -> dict[str, Any]:
    """Call ``tool`` with ``args``; it must fail; its structured detail (prove.env.errors): reason,
    params, rejected_params, rejected, choices, wanted."""
    out = hub.call(tool, args, episode_id=EPISODE)
    assert not out["ok"], out
    return out["detail"]
