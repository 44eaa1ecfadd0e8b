"""A kind the selected servers cannot produce stops synthesis before any attempt, saying what to do.

    .venv/bin/python -m pytest tests/synth/test_synth_feasibility.py -q
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from prove.env.registry import Registry, load_registry
from prove.env.state import ServerState
from prove.env.tool import ToolSpec, tool
from prove.graph.chains import Chain
from prove.synth import pipeline
from prove.synth.cli import main as cli_main
from prove.synth.feasibility import kind_feasibility, require_feasible, withholdable
from prove.synth.pipeline import SynthConfig, SynthesisInfeasible, synthesize

EXTRA_SERVERS = Path(__file__).parent / "extra_servers"  # holds the `library` server


@pytest.fixture
def with_library(monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    """Every server plus `library` (list_books, borrow_book, return_book), for this test only."""
    import prove_servers

    monkeypatch.delenv("PROVE_SERVERS", raising=False)
    monkeypatch.setenv("PROVE_SERVER_PATH", str(EXTRA_SERVERS))
    monkeypatch.setattr(prove_servers, "__path__", list(prove_servers.__path__))  # undone after
    load_registry.cache_clear()
    yield load_registry()
    load_registry.cache_clear()


def _no_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a synthesis worker was built: an attempt was about to be made")

    monkeypatch.setattr(pipeline.Worker, "build", classmethod(refuse))


def test_clarification_on_a_server_with_nothing_to_withhold_stops_before_any_attempt(
    with_library: Registry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_attempts(monkeypatch)
    cfg = SynthConfig(sizes={"multi_turn": 2, "clarification": 3, "abstention": 0},
                      servers=("library",), n_chains=20, n_worlds=1)
    with pytest.raises(SynthesisInfeasible) as caught:
        synthesize(cfg, tmp_path / "out")
    message = str(caught.value)
    assert message.startswith("cannot synthesize clarification: clarification (3 asked for): "
                              "no server of library can produce it.")
    assert "library: nothing the user supplies to withhold in list_books" in message
    assert "Ask for none of it (SynthConfig.sizes {'clarification': 0})" in message
    assert "add servers that can (SynthConfig.servers)" in message
    assert list(caught.value.kinds) == ["clarification"]  # multi_turn is possible on library
    assert not (tmp_path / "out").exists()  # nothing written


def test_asking_for_none_of_the_kind_is_not_an_error(with_library: Registry,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _no_attempts(monkeypatch)  # gets past the check: the next thing is building the worker
    cfg = SynthConfig(sizes={"multi_turn": 2, "clarification": 0, "abstention": 1},
                      servers=("library",), n_chains=20, n_worlds=1)
    with pytest.raises(AssertionError, match="a synthesis worker was built"):
        synthesize(cfg)


def test_a_kind_some_servers_cannot_produce_is_reported_and_comes_from_the_others(
    with_library: Registry,
) -> None:
    said: list[str] = []
    cfg = SynthConfig(sizes={"multi_turn": 0, "clarification": 2, "abstention": 0}, seed=1,
                      servers=("banking", "library"), n_chains=40, n_worlds=1, chunk_size=4)
    result = synthesize(cfg, progress=said.append)
    notes = [m for m in said if m.startswith("clarification: library cannot produce it")]
    assert len(notes) == 1 and "nothing the user supplies to withhold in list_books" in notes[0]
    assert notes[0].endswith("its examples come from banking")
    assert said.index(notes[0]) < next(i for i, m in enumerate(said) if "attempts" in m)
    assert result.kept["clarification"] == 2


def test_a_real_server_whose_chains_hold_one_call_each_cannot_make_multi_turn(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_attempts(monkeypatch)
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps({"tools": [t], "servers": ["banking"], "edges": []}) + "\n"
                              for t in ("get_bank_account", "list_accounts")))
    cfg = SynthConfig(sizes={"multi_turn": 1, "clarification": 0, "abstention": 1},
                      servers=("banking",), chain_source=str(chains), n_worlds=1)
    with pytest.raises(SynthesisInfeasible, match=r"^cannot synthesize multi_turn: multi_turn \(1 "
                       r"asked for\): no server of banking can produce it\. A multi_turn example "
                       r"needs a tool chain of two or more calls .*; banking: its chains hold one "
                       r"call each \(get_bank_account, list_accounts\)\. Ask for none of it "
                       r"\(SynthConfig\.sizes \{'multi_turn': 0\}\), or add servers"):
        synthesize(cfg)


class _Done(BaseModel):
    ok: bool


@tool(write=True)
def set_vacation_mode(state: ServerState,
                      enabled: Annotated[bool, Field(description="Turn it on or off.")],
                      offset: Annotated[int, Field(ge=0, description="Paging offset.")]) -> _Done:
    """Switch vacation mode."""
    raise NotImplementedError


def test_paging_and_yes_no_flags_are_nothing_to_withhold(with_library: Registry) -> None:
    assert withholdable(ToolSpec.from_function(set_vacation_mode, "home")) == []
    assert withholdable(with_library.tool("borrow_book")) == ["book_id"]
    assert withholdable(with_library.tool("list_books")) == []


def test_every_kind_says_why_per_server_and_several_kinds_fail_together(
    with_library: Registry,
) -> None:
    chains = [Chain(("list_books",), ("library",))]
    report = kind_feasibility(chains, with_library, ["library", "banking"])
    assert report["abstention"] == {"library": None,
                                    "banking": "no tool chain starts on it (the tool graph links "
                                               "none of its tools)"}
    assert report["multi_turn"]["library"] == "its chains hold one call each (list_books)"
    assert report["clarification"]["library"].startswith("nothing the user supplies to withhold")
    with pytest.raises(SynthesisInfeasible) as caught:
        require_feasible({"multi_turn": 5, "clarification": 1, "abstention": 0}, report)
    assert list(caught.value.kinds) == ["multi_turn", "clarification"]
    assert "SynthConfig.sizes {'multi_turn': 0, 'clarification': 0}" in str(caught.value)
    said: list[str] = []
    require_feasible({"abstention": 4}, report, said.append)
    assert said == ["abstention: banking cannot produce it (banking: no tool chain starts on it "
                    "(the tool graph links none of its tools)); its examples come from library"]


def test_prove_synth_says_an_infeasible_request_in_one_line_with_status_2(
    with_library: Registry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str]
) -> None:
    _no_attempts(monkeypatch)
    rc = cli_main(["--profile", "smoke", "--out", str(tmp_path), "--servers", "library",
                   "--sizes", "multi_turn=2,clarification=3,abstention=0", "--n-chains", "20"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(
        "prove synth: cannot synthesize clarification: clarification (3 asked for)")
    assert not (tmp_path / "examples.jsonl").exists()
