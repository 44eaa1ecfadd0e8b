"""T-Eval adapter: T-Eval's own evaluators (from the opencompass wheel) on hand-written samples.

Gold answers score 100 (or T-Eval v2's epsilon-limited value), wrong answers what T-Eval v2 defines.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from prove.eval import teval_evaluators
from prove.eval.teval import (
    ABILITIES,
    RUNS,
    SAMPLE_DATA_DIR,
    TEval,
    TEvalConfig,
    bag_of_words_model,
    combine,
    evaluate_file,
    gold_prediction,
    sample_texts,
    split_special_tokens,
    teval_available,
    write_predictions,
)

_OK, _WHY = teval_available()
needs_evaluators = pytest.mark.skipif(not _OK, reason=f"T-Eval's evaluators are not importable: {_WHY}")

RUN = {r.key: r for r in RUNS}
WRONG = {
    # wrong tool name, one of the args wrong -> format ok (1), args_em = (0 + 1 of 2 args) / 3
    "instruct_json": lambda s, r: (gold_prediction(s, r).replace("WeatherAPI.get_weather", "Calculator.add")
                                   if s["meta_data"]["response_format"] == "json"
                                   else gold_prediction(s, r).replace("'b': 3", "'b': 4").replace(
                                       "Calculator.add", "WeatherAPI.get_weather")),
    # no plan step matches: T-Eval's LIS still counts 1 matched node -> P = 1/3, R = 1/3
    "plan_json": lambda s, r: json.dumps([{"id": i, "name": f"Nothing{i}", "args": "{}"} for i in range(3)]),
    "plan_str": lambda s, r: "nothing useful here",
    "reason_str": lambda s, r: "zebra quantum",
    "retrieve_str": lambda s, r: "I would call FlightAPI.book",
    "understand_str": lambda s, r: "{'city': 'Rome'}",
    "rru_json": lambda s, r: json.dumps({"thought": "zebra quantum", "name": "Calculator.add",
                                         "args": {**json.loads(json.dumps(s["ground_truth"]["args"])),
                                                  list(s["ground_truth"]["args"])[0]: "WRONG"}}),
    "review_str": lambda s, r: "Answer: E" if s["ground_truth"]["answer"] != "E" else "Answer: A",
}


PLAN_NAMES_RIGHT_ARGS_WRONG = json.dumps([{"id": i, "name": n, "args": "zebra quantum"} for i, n in
                                          enumerate(["FlightAPI.search", "FlightAPI.book", "WeatherAPI.get_weather"])])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("teval")
    cfg = TEvalConfig(label="gold", data_dir=SAMPLE_DATA_DIR)
    extra = [WRONG[r.key](s, r) for r in cfg.selected()
             for s in json.loads(cfg.data_file(r).read_text()).values()] + [PLAN_NAMES_RIGHT_ARGS_WRONG]
    cfg.embedding_model = str(bag_of_words_model(sample_texts(cfg, extra), tmp / "bow"))
    return cfg, tmp


def _score(cfg, tmp, name, predict):
    write_predictions(cfg, tmp / name, predict)
    return TEval(cfg).score(tmp / name)


@needs_evaluators
def test_gold_answers_score_100_on_every_ability(setup):
    cfg, tmp = setup
    result = _score(cfg, tmp, "gold", gold_prediction)
    for ability in ABILITIES:
        assert result["abilities"][ability] == pytest.approx(100, abs=1e-3), ability
    assert result["abilities"]["overall"] == pytest.approx(100, abs=1e-3)
    assert set(result["files"]) == set(RUN)


@needs_evaluators
def test_wrong_answers_score_what_t_eval_defines(setup):
    cfg, tmp = setup
    files = _score(cfg, tmp, "wrong", lambda s, r: WRONG[r.key](s, r))["files"]
    inst = files["instruct_json"]
    assert inst["json_format_metric"] == 1 and inst["json_args_em_metric"] == pytest.approx(1 / 2, abs=1e-4)  # T-Eval rounds to 4 places
    assert inst["string_format_metric"] == 1 and inst["string_args_em_metric"] == pytest.approx(1 / 3, abs=1e-4)
    assert files["plan_json"]["f1_score"] == pytest.approx(1 / 3)  # T-Eval's LIS floor of one node
    assert files["plan_str"]["f1_score"] == 0 and files["plan_str"]["parse_rate"] == 0
    assert files["reason_str"]["thought"] == pytest.approx(0, abs=1e-6)
    assert files["retrieve_str"]["name"] == 0
    assert files["understand_str"]["args"] == 0
    rru = files["rru_json"]
    assert rru["name"] == 0 and rru["thought"] == pytest.approx(0, abs=1e-6)
    assert rru["args"] == pytest.approx(1 / (2 + 1e-5))  # one of two args exact per sample: v2's strict match, 1e-5 epsilon
    # opencompass's copy still computes v1's cosine of the two args strings; kept, but not used
    assert rru["args_v1_cosine"] > rru["args"] + 0.1 and files["understand_str"]["args_v1_cosine"] > 0
    assert files["review_str"]["review_quality"] == 0 and files["review_str"]["parse_rate"] == 1


@needs_evaluators
def test_unparseable_replies_score_zero(setup):
    cfg, tmp = setup
    files = _score(cfg, tmp, "garbage", lambda s, r: "no idea")["files"]
    assert files["instruct_json"]["json_format_metric"] == 0
    assert files["review_str"]["parse_rate"] == 0 and files["review_str"]["review_quality"] == 0
    assert files["plan_json"]["f1_score"] == 0


@needs_evaluators
def test_plan_uses_t_eval_v2_match_threshold(setup):
    """Right tool names, unrelated args: similarity 0.75*1 + 0.25*0 = 0.75, a match at opencompass's default
    threshold (0.7) but not at T-Eval v2's (0.8), where only the LIS floor of one node is left."""
    cfg, tmp = setup
    run = {r.key: r for r in RUNS}["plan_json"]
    one = TEvalConfig(label="plan", data_dir=SAMPLE_DATA_DIR, runs=("plan_json",), embedding_model=cfg.embedding_model)
    path = write_predictions(one, tmp / "plan_threshold", lambda s, r: PLAN_NAMES_RIGHT_ARGS_WRONG) / "plan_json.json"
    assert evaluate_file(path, run, cfg.embedding_model)["f1_score"] == pytest.approx(1 / 3)
    official_default = teval_evaluators.evaluator_class("PlanningEvaluator")(
        str(path), default_prompt_type="json", eval_type="plan", bert_score_model=cfg.embedding_model)
    assert official_default.match_threshold == 0.7  # opencompass 0.5.4's default, hence the explicit 0.8
    assert official_default.evaluate()["f1_score"] == pytest.approx(1)


def test_v2_args_definition():
    assert teval_evaluators.v2_args({"args": {"a": 1, "b": "x"}}, {"args": {"a": "1", "b": "y"}}) == pytest.approx(
        1 / (2 + 1e-5))
    assert teval_evaluators.v2_args({"args": {}}, {"args": {}}) == 1
    assert teval_evaluators.v2_args({"args": {"a": 1}}, {"args": {}}) == 0
    assert teval_evaluators.v2_args({}, {"args": {"a": 1}}) == 0
    assert teval_evaluators.v2_args({"args": "'{'a': 1}'"}, {"args": "{'a': 1}"}) == 1
    assert teval_evaluators.v2_args({"args": "{'a': 2}"}, {"args": "{'a': 1}"}) == 0


@needs_evaluators
def test_evaluators_come_from_the_opencompass_wheel_without_its_package_init():
    root = Path(next(iter(importlib.util.find_spec("opencompass").submodule_search_locations)))
    for name in teval_evaluators.EVALUATOR_MODULES:
        cls = teval_evaluators.evaluator_class(name)
        assert Path(sys.modules[cls.__module__].__file__).is_relative_to(root / "datasets" / "teval" / "evaluators")
    # opencompass/datasets/__init__.py (hundreds of datasets) was not run, unless something else imported it
    datasets_pkg = sys.modules["opencompass.datasets"]
    assert getattr(datasets_pkg, "__prove_stub__", False) or hasattr(datasets_pkg, "BaseDataset")
    assert not (Path(__file__).resolve().parents[2] / "src" / "prove" / "eval" / "teval_official").exists()


def test_missing_opencompass_says_what_to_install(monkeypatch):
    monkeypatch.setattr(teval_evaluators.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=re.escape("pip install --no-deps opencompass==0.5.4 mmengine-lite")):
        teval_evaluators.evaluator_class("InstructEvaluator")


@needs_evaluators
def test_combine_matches_t_evals_convert_results(tmp_path, capsys):
    teval_evaluators.evaluator_class("InstructEvaluator")  # registers the bare opencompass packages
    from opencompass.datasets.teval.utils.convert_results import convert_results

    results = {
        "instruct_json": {"json_format_metric": 1, "json_args_em_metric": 0.5,
                          "string_format_metric": 0.5, "string_args_em_metric": 0.25},
        "plan_str": {"f1_score": 0.2}, "plan_json": {"f1_score": 0.45},
        "reason_str": {"thought": 0.6}, "rru_json": {"thought": 0.85, "name": 1, "args": 0.5},
        "retrieve_str": {"name": 0.3}, "understand_str": {"args": 0.55}, "review_str": {"review_quality": 0.9},
    }
    (tmp_path / "r.json").write_text(json.dumps(results))
    capsys.readouterr()
    convert_results(str(tmp_path / "r.json"))
    printed = dict(re.findall(r"(\w+): ([0-9.]+)", capsys.readouterr().out.split("Cut Paste Results:")[1]))
    ours = combine(results)
    for ability in (*ABILITIES, "overall"):
        assert ours[ability] == pytest.approx(float(printed[ability.capitalize()]), abs=0.051), ability


def test_combine_is_convert_results():
    results = {
        "instruct_json": {"json_format_metric": 1, "json_args_em_metric": 0.5,
                          "string_format_metric": 1, "string_args_em_metric": 0},
        "plan_str": {"f1_score": 0.2}, "plan_json": {"f1_score": 0.4},
        "reason_str": {"thought": 0.6}, "rru_json": {"thought": 0.8, "name": 1, "args": 0.5},
        "retrieve_str": {"name": 0}, "understand_str": {"args": 0.5}, "review_str": {"review_quality": 0.9},
    }
    out = combine(results)
    assert out["instruct"] == pytest.approx(100 * (0.75 + 0.5) / 2)
    assert out["plan"] == pytest.approx(30) and out["reason"] == pytest.approx(70)
    assert out["retrieve"] == pytest.approx(50) and out["understand"] == pytest.approx(50)
    assert out["review"] == pytest.approx(90)
    assert out["overall"] == pytest.approx(sum(out[a] for a in ABILITIES) / 6)
    del results["rru_json"]
    partial = combine(results)
    assert "reason" not in partial and "overall" not in partial and "plan" in partial


def test_split_special_tokens_matches_test_py():
    assert split_special_tokens("```json\n{\"a\": 1}\n```<|im_end|>junk") == '{"a": 1}'
    assert split_special_tokens("Answer: B\nuser: more") == "Answer: B"


def test_missing_data_says_where_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="lovesnowbest/T-Eval"):
        TEval(TEvalConfig(label="x")).load_tasks()
    with pytest.raises(FileNotFoundError, match="lovesnowbest/T-Eval"):
        TEval(TEvalConfig(label="x", data_dir=tmp_path)).load_tasks()
