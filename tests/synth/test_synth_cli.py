"""`prove synth` plugs into an argparse tree and runs end to end on a tiny set."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from prove.synth.cli import add_parser, main


def test_add_parser_registers_synth() -> None:
    parser = argparse.ArgumentParser(prog="prove")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["synth", "--profile", "smoke", "--sizes", "multi_turn=3,abstention=1",
                              "--workers", "2"])
    assert args.command == "synth" and callable(args.fn)
    assert args.sizes == {"multi_turn": 3, "abstention": 1} and args.workers == 2


def test_main_writes_the_data_set(tmp_path: Path, capsys) -> None:
    rc = main(["--profile", "smoke", "--out", str(tmp_path), "--sizes",
               "multi_turn=2,clarification=1,abstention=1", "--servers", "banking,email,shop",
               "--n-chains", "40", "--n-worlds", "1", "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kept"] == {"multi_turn": 2, "clarification": 1, "abstention": 1}
    assert set(summary["files"]) >= {"examples.jsonl", "train.parquet", "val.parquet", "card.json"}
    assert len((tmp_path / "examples.jsonl").read_text().splitlines()) == 4

