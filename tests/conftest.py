"""Shared fixtures: the registry, and one `prove serve` on a free loopback port per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prove.env.launch import EnvServer
from prove.env.registry import Registry, load_registry


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def env_server() -> Iterator[EnvServer]:
    with EnvServer() as server:
        yield server
