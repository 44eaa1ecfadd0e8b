"""Helpers shared by the training tests (a unique module name: tests/ has no packages)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, closing the pooled env connections of that loop afterwards."""
    from prove.train.session import close_clients

    async def main() -> T:
        try:
            return await coro
        finally:
            await close_clients()

    return asyncio.run(main())


def need_verl() -> None:
    """Skip unless verl imports (the `train` extra: torch CPU build, then verl 0.9.1)."""
    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl is not installed (the train extra); VERL integration not exercised")
    import verl.experimental.agent_loop.tool_agent_loop  # noqa: F401  (installed, so it must import)


def need_verl_sft() -> None:
    """Skip without VERL; with it, VERL's SFT dataset must import (the pinned transformers has what it needs)."""
    need_verl()
    import verl.utils.dataset.multiturn_sft_dataset  # noqa: F401
