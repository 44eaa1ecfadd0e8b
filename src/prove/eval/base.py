"""The one shape every benchmark adapter has (load tasks, run against an endpoint, score) and shared I/O.

    from prove.eval.base import Endpoint, write_table

``Endpoint`` is ``prove.llm.endpoint.Endpoint`` (the model servers below evaluation make them).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from prove.llm.endpoint import Endpoint  # lives with the model servers; every adapter takes one

__all__ = ["Endpoint", "Benchmark", "write_table", "write_json", "read_table"]


@runtime_checkable
class Benchmark(Protocol):
    """What each adapter module exposes as a class: load the tasks, run them, score the run.

    `run` returns a handle (a directory or file of raw model outputs) that `score` reads, so a run can
    be scored again later without the model. `score` returns a flat dict of metrics.
    """

    name: str

    def load_tasks(self) -> list[dict[str, Any]]: ...

    def run(self, endpoint: Endpoint) -> Path: ...

    def score(self, run: Path) -> dict[str, Any]: ...


def write_table(rows: Iterable[Mapping[str, Any]], path: str | Path, columns: Sequence[str] | None = None) -> Path:
    """Write rows as CSV (columns: given, else the union in first-seen order); returns the path."""
    rows = list(rows)
    if columns is None:
        seen: dict[str, None] = {}
        for row in rows:
            seen.update(dict.fromkeys(row))
        columns = list(seen)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_table(path: str | Path) -> list[dict[str, str]]:
    with Path(path).open(newline="") as fh:
        return list(csv.DictReader(fh))


def write_json(data: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    return path
