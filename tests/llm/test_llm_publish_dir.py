"""prove.llm.weights.publish_dir: a cache directory appears whole or not at all, and the first writer wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove.llm.weights import publish_dir


def _fill(text: str):
    def fill(tmp: Path) -> None:
        (tmp / "config.json").write_text(text)
    return fill


def test_published_whole_and_the_first_writer_wins(tmp_path: Path) -> None:
    out = tmp_path / "cache" / "model"
    assert publish_dir(out, _fill("first"), "config.json") == out
    assert (out / "config.json").read_text() == "first"
    publish_dir(out, _fill("second"), "config.json")  # a late writer keeps what is there
    assert (out / "config.json").read_text() == "first"
    assert sorted(p.name for p in out.parent.iterdir()) == ["model"]  # no temporary left behind


def test_a_failed_fill_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "model"

    def broken(tmp: Path) -> None:
        (tmp / "half").write_text("x")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        publish_dir(out, broken, "config.json")
    assert list(tmp_path.iterdir()) == []


def test_an_occupied_target_without_the_marker_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "model"
    out.mkdir()
    (out / "stray").write_text("not a model")
    with pytest.raises(OSError):
        publish_dir(out, _fill("x"), "config.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
