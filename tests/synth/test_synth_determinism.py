"""Same seed, same bytes: every output file of a small synthesis run, in-process and with 2 workers."""

from __future__ import annotations

import json
from pathlib import Path

from synth_helpers import SMALL, small_config

from prove.synth.pipeline import SynthResult, synthesize


def test_kept_counts_hit_the_targets(small_run: tuple[SynthResult, Path]) -> None:
    result, out = small_run
    assert result.kept == SMALL
    lines = (out / "examples.jsonl").read_text().splitlines()
    assert len(lines) == sum(SMALL.values())
    ids = [json.loads(line)["id"] for line in lines]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("prove-") for i in ids)


def test_two_runs_with_the_same_seed_are_byte_identical(small_run: tuple[SynthResult, Path],
                                                        tmp_path: Path) -> None:
    result, out = small_run
    again = synthesize(small_config(workers=2), tmp_path)  # other worker count, same bytes
    assert again.files == result.files
    for name in result.files:
        assert (out / name).read_bytes() == (tmp_path / name).read_bytes(), name
    sums = (out / "SHA256SUMS").read_text()
    assert all(f"{h}  {n}" in sums for n, h in result.files.items())


def test_another_seed_gives_other_data(tmp_path: Path) -> None:
    a = synthesize(small_config(sizes={"multi_turn": 3}, seed=11), tmp_path / "a")
    b = synthesize(small_config(sizes={"multi_turn": 3}, seed=12), tmp_path / "b")
    assert a.files["examples.jsonl"] != b.files["examples.jsonl"]


def test_card_counts_match_the_data(small_run: tuple[SynthResult, Path]) -> None:
    result, out = small_run
    card = json.loads((out / "card.json").read_text())
    assert card["n_examples"] == sum(SMALL.values())
    assert card["counts"]["kind"] == SMALL
    for kind, funnel in card["funnel"].items():
        rejected = sum(funnel["rejected"].values())
        assert funnel["attempted"] == funnel["kept"] + rejected, kind
        assert funnel["kept"] == SMALL[kind]
    rejected_lines = (out / "rejected.jsonl").read_text().splitlines()
    reasons = [json.loads(line)["reason"] for line in rejected_lines]
    total = sum(n for f in card["funnel"].values() for r, n in f["rejected"].items() if r != "duplicate")
    assert len(reasons) == total
    assert all(json.loads(line)["transitions"] for line in rejected_lines)  # each one explained
    assert "Funnel" in (out / "card.md").read_text()
