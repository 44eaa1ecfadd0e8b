"""Canonical JSON, deterministic ids and per-example random streams shared by the synthesis modules.

    from prove.synth.records import dumps, example_id, example_rng
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable
from typing import Any

__all__ = ["KINDS", "dumps", "sha256_text", "example_id", "example_rng", "derived_rng", "chain_split",
           "split_chains"]

KINDS: tuple[str, ...] = ("multi_turn", "clarification", "abstention")
"""Example kinds, in the order they are generated and written."""


def dumps(obj: Any) -> str:
    """Canonical JSON: sorted keys, fixed separators, UTF-8 kept (byte-identical across runs)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def example_id(kind: str, index: int) -> str:
    """`prove-<kind>-<index:06d>`: stable across runs and worker counts."""
    return f"prove-{kind}-{index:06d}"


def example_rng(seed: int, kind: str, index: int) -> random.Random:
    """The random stream of one example, a pure function of (global seed, kind, index).

    `random.Random(str)` hashes the string with SHA-512, so it does not depend on PYTHONHASHSEED.
    """
    return random.Random(f"prove-synth:{seed}:{kind}:{index}")


def derived_rng(*parts: Any) -> random.Random:
    """A random stream for anything else that must be reproducible (chains, probes, the split)."""
    return random.Random("prove-synth:" + ":".join(str(p) for p in parts))


def chain_split(chain_id: str, val_fraction: float, seed: int) -> str:
    """"val" or "train" for a chain: a pure function of (seed, chain id), so every example of a
    chain (and of a chain truncated to the same tools) lands in the same split."""
    digest = hashlib.sha256(f"prove-split:{seed}:{chain_id}".encode()).digest()
    return "val" if int.from_bytes(digest[:8], "big") / 2**64 < val_fraction else "train"


def split_chains(chain_ids: Iterable[str], val_fraction: float, seed: int) -> dict[str, str]:
    """chain id -> "train" | "val" (see `chain_split`)."""
    return {cid: chain_split(cid, val_fraction, seed) for cid in sorted(set(chain_ids))}
