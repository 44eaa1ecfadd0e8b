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
    try:
        import verl.experimental.agent_loop.tool_agent_loop  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"verl is installed but its agent loop does not import: {exc}")


def need_verl_sft() -> None:
    """Skip unless VERL's SFT dataset imports (it needs transformers < 5.11, VERL's own pin)."""
    need_verl()
    try:
        import verl.utils.dataset.multiturn_sft_dataset  # noqa: F401
    except ImportError as exc:
        import transformers

        pytest.skip(f"verl 0.9.1's SFT dataset does not import with transformers "
                    f"{transformers.__version__} (verl pins <5.11): {exc}")
