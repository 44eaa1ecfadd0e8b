"""Contamination audit: renamed PROVE tools are caught, unrelated ones are not, copied benchmark words are
counted, and the installed benchmarks load (τ² only where installed).

    .venv/bin/python -m pytest tests/eval/test_contamination.py -q
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from prove.eval import contamination as cm
from prove.eval.bfcl import bfcl_available
from prove.eval.contamination import (
    DESCRIPTION_SIM,
    NEAR_NAME,
    NGRAM,
    BenchmarkData,
    BenchmarkTool,
    audit,
    compare,
    name_similarity,
    ngram_overlap,
    write_card,
)
from prove.eval.tau2 import tau2_available

BFCL_OK, BFCL_WHY = bfcl_available()
TAU2_OK, TAU2_WHY = tau2_available()
needs_bfcl = pytest.mark.skipif(not BFCL_OK, reason=BFCL_WHY)
needs_tau2 = pytest.mark.skipif(not TAU2_OK, reason=TAU2_WHY)
BFCL_MULTI_TURN_CLASSES = ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI",
                           "TradingBot", "TravelAPI", "VehicleControlAPI")

UNRELATED = BenchmarkData("unrelated", (
    BenchmarkTool("harmonise_xylophone", "Tune the bars of a xylophone to a just-intonation scale.",
                  ("bar_index", "cents_offset")),
    BenchmarkTool("measureGlacierCalving", "Estimate iceberg calving from a glacier terminus by sonar.",
                  ("glacier_name", "sonar_band", "epoch")),
), ("The glacier terminus retreated while the xylophone played in the fjord at dawn.",))


@pytest.fixture(scope="module")
def prove() -> list[BenchmarkTool]:
    return cm.prove_tools()


@pytest.fixture(scope="module")
def bfcl() -> BenchmarkData:
    if not BFCL_OK:
        pytest.skip(BFCL_WHY)
    return cm.bfcl_benchmark()


def _camel(tokens: tuple[str, ...]) -> str:
    return tokens[0] + "".join(t.title() for t in tokens[1:])


def _renamed_benchmark(prove: list[BenchmarkTool]) -> tuple[BenchmarkTool, BenchmarkData]:
    """A benchmark holding one real PROVE tool three ways: same name, camelCase plural, one letter off;
    each with the PROVE tool's own schema (so its parameters) but a new description."""
    from prove.env import load_registry

    spec = next(s for s in load_registry().tools.values() if len(s.params) >= 2 and s.name.count("_") >= 2
                and len(s.name.rsplit("_", 1)[-1]) > 3)
    schema = spec.openai_schema()
    fn = schema["function"]
    tokens = cm.name_tokens(fn["name"])
    renamed = {
        fn["name"]: "Run the operation that this benchmark defines for its own world.",
        _camel(tokens) + "s": "A re-described copy under a camelCase plural name.",
        fn["name"][:-1] + ("z" if fn["name"][-1] != "z" else "y"): "A re-described copy, one letter changed.",
    }
    tools = tuple(BenchmarkTool.from_schema({"type": "function", "function": {**fn, "name": n, "description": d}})
                  for n, d in renamed.items())
    original = next(t for t in prove if t.name == spec.name)
    return original, BenchmarkData("renamed", tools, ())


def test_a_renamed_prove_tool_is_an_exact_and_a_near_match(prove):
    original, bench = _renamed_benchmark(prove)
    result = compare(prove, bench)
    assert [(p.prove_tool, p.benchmark_tool) for p in result.exact] == [(original.name, original.name)]
    near = {(p.prove_tool, p.benchmark_tool): p.score for p in result.near}
    camel, typo = bench.tools[1].name, bench.tools[2].name
    assert near[(original.name, camel)] == 1.0  # the same words, camelCase and plural
    assert NEAR_NAME <= near[(original.name, typo)] < 1.0  # one letter off
    assert {p.benchmark_tool for p in result.parameters if p.prove_tool == original.name} == {
        original.name, camel, typo}
    assert "parameters" in result.exact[0].detail
    table = cm.ContaminationReport(len(prove), (result,)).as_table()
    assert f"exact: {original.name} ~ {original.name}" in table and f"near: {original.name} ~ {camel}" in table


def test_a_copied_description_is_listed(prove):
    original = prove[0]
    bench = BenchmarkData("copied", (BenchmarkTool("zz_other", original.description, ()),), ())
    result = compare(prove, bench)
    assert [(p.prove_tool, p.score) for p in result.description][:1] == [(original.name, pytest.approx(1.0))]
    assert result.description_max == pytest.approx(1.0)


def test_an_unrelated_tool_list_matches_nothing(prove):
    result = compare(prove, UNRELATED, ["Show my checking account balance, then move 50 dollars to savings."])
    assert (result.exact, result.near, result.parameters, result.description) == ((), (), (), ())
    assert result.description_max < DESCRIPTION_SIM
    assert result.ngrams is not None and result.ngrams.shared_turns == 0 and result.ngrams.share == 0.0


def test_name_similarity_normalises_case_separators_and_plurals():
    assert name_similarity("get_user_details", "getUserDetail") == 1.0
    assert name_similarity("send_message", "message_send") == 1.0  # same words, another order
    assert name_similarity("cd", "ls") < NEAR_NAME
    assert name_similarity("transfer_funds", "book_flight") < NEAR_NAME


@needs_bfcl
def test_a_user_turn_copying_eight_words_of_a_bfcl_question_is_counted(bfcl):
    words = next(q for q in bfcl.texts if len(q.split()) >= 12).split()
    copied = "Hey there, " + " ".join(words[:NGRAM]) + " okay xyzzy"
    seven = "xyzzy " + " ".join(words[:NGRAM - 1]) + " xyzzy plugh"
    assert len(cm._ngrams(copied, NGRAM)) > 0
    result = ngram_overlap([copied, seven, "Please list my open invoices from March."], bfcl.texts)
    assert (result.user_turns, result.shared_turns) == (3, 1)
    assert result.share == pytest.approx(1 / 3)
    assert result.top and all(n == 1 and g in " ".join(cm._WORD.findall(copied.lower())) for g, n in result.top)


@needs_bfcl
def test_the_installed_bfcl_multi_turn_docs_load(bfcl):
    from bfcl_eval.constants.eval_config import MULTI_TURN_FUNC_DOC_PATH
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    in_files = {json.loads(line)["name"] for cls in BFCL_MULTI_TURN_CLASSES
                for line in (MULTI_TURN_FUNC_DOC_PATH / MULTI_TURN_FUNC_DOC_FILE_MAPPING[cls]).read_text().splitlines()
                if line.strip()}
    names = {t.name for t in bfcl.tools}
    assert len(bfcl.tools) > 0 and names == in_files
    assert {"cd", "ls", "lockDoors", "book_flight"} <= names
    assert not any(t.description.startswith("This tool belongs to") for t in bfcl.tools)  # preamble stripped
    assert any(q.startswith("Move 'final_report.pdf' within document directory") for q in bfcl.texts)


@needs_tau2
def test_tau2_domains_load_through_its_own_toolkits():
    benches = {b.name: b for b in cm.tau2_benchmarks()}
    assert set(benches) == {"τ² airline", "τ² retail", "τ² telecom"}
    names = {k: {t.name for t in b.tools} for k, b in benches.items()}
    assert {"book_reservation", "cancel_reservation", "get_flight_status"} <= names["τ² airline"]
    assert {"cancel_pending_order", "exchange_delivered_order_items"} <= names["τ² retail"]
    assert {"get_customer_by_phone", "toggle_airplane_mode"} <= names["τ² telecom"]  # agent and user tools
    assert {t.group for t in benches["τ² telecom"].tools} == {"TelecomTools", "TelecomUserTools"}
    assert all(b.available and len(b.texts) > 0 for b in benches.values())


def test_without_tau2_the_table_says_so(monkeypatch):
    monkeypatch.setattr("prove.eval.tau2.tau2_available", lambda: (False, "no tau2 here"))
    benches = cm.tau2_benchmarks()
    assert [(b.name, b.available) for b in benches] == [("τ²-bench", False)]
    report = audit(benchmarks=[UNRELATED, *benches], tools=list(UNRELATED.tools[:1]))
    assert "τ² not installed: no tau2 here" in report.as_table()
    assert report.as_rows()[1]["available"] is False


def test_write_card_adds_the_audit_and_leaves_the_data_bytes_alone(tmp_path: Path):
    data = {"examples.jsonl": json.dumps({"messages": [{"role": "user", "content": "The glacier terminus "
                                                        "retreated while the xylophone played in the fjord."}]})
            + "\n", "train.parquet": "PAR1-train", "val.parquet": "PAR1-val"}
    for name, text in data.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "card.json").write_text(json.dumps({"n_examples": 1}) + "\n")
    (tmp_path / "card.md").write_text("# card\n")
    names = [*data, "card.json", "card.md"]
    (tmp_path / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((tmp_path / n).read_bytes()).hexdigest()}  {n}\n" for n in sorted(names)))
    before = {n: (tmp_path / n).read_bytes() for n in data}
    report = audit(tmp_path, benchmarks=[UNRELATED], tools=[BenchmarkTool("transfer_funds", "Move money.", ())])
    assert report.audits[0].ngrams.shared_turns == 1
    write_card(tmp_path, report)
    first = {n: (tmp_path / n).read_bytes() for n in ("card.json", "card.md", "SHA256SUMS")}
    write_card(tmp_path, report)  # again: the same bytes, one section
    assert {n: (tmp_path / n).read_bytes() for n in first} == first
    assert {n: (tmp_path / n).read_bytes() for n in data} == before
    card = json.loads((tmp_path / "card.json").read_text())
    assert card["n_examples"] == 1 and card["contamination"]["audits"][0]["ngrams"]["shared_turns"] == 1
    assert "dataset" not in card["contamination"]  # no machine path on the card
    md = (tmp_path / "card.md").read_text()
    assert md.startswith("# card\n") and md.count(cm.CARD_SECTION) == 1 and "| unrelated |" in md
    assert "dataset: this dataset" in md and str(tmp_path) not in md
    for line in (tmp_path / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest, name


def test_cli_refuses_write_card_without_a_dataset():
    with pytest.raises(SystemExit):
        cm.main(["--write-card"])
