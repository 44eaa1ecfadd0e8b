"""The train/validation split is by chain: no chain appears in both."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from prove.synth.pipeline import SynthResult
from prove.synth.records import chain_split, split_chains


def test_no_chain_in_both_splits(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    chains: dict[str, set[str]] = {"train": set(), "val": set()}
    split_of = {}
    for line in (out / "examples.jsonl").read_text().splitlines():
        ex = json.loads(line)
        chains[ex["split"]].add(ex["chain"]["id"])
        split_of[ex["id"]] = ex["split"]
    assert chains["train"] and not chains["train"] & chains["val"]
    for split in ("train", "val"):
        for info in pq.read_table(out / f"{split}.parquet").column("extra_info").to_pylist():
            assert split_of[info["example_id"]] == split == info["split"]


def test_split_is_a_seeded_function_of_the_chain() -> None:
    ids = [f"s:{i}" for i in range(2000)]
    a = split_chains(ids, 0.1, seed=0)
    assert set(a) == set(ids) and 150 <= sum(v == "val" for v in a.values()) <= 250
    assert a == split_chains(list(reversed(ids)), 0.1, seed=0)  # order does not matter
    assert all(chain_split(i, 0.1, 0) == a[i] for i in ids[:50])  # nor the other chains
    assert a != split_chains(ids, 0.1, seed=1)
