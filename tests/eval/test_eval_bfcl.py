"""BFCL multi-turn adapter: the official checker on replayed ground truth, the unreachable items, scoring bfcl's files."""

from __future__ import annotations

import ast
import json
import time

import pytest

from prove.eval.bfcl_shim import BFCL_EVAL_VERSION

pytest.importorskip("bfcl_eval", reason=f"bfcl-eval is not installed (pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION})")

from prove.eval.bfcl import (  # noqa: E402
    BFCL,
    CATEGORIES,
    UNREACHABLE_GROUND_TRUTH,
    BFCLConfig,
    load_ground_truth,
    load_tasks,
    score_project,
    self_check,
    write_results,
)
from prove.eval.bfcl_child import CappedClient, read_config  # noqa: E402


def test_ground_truth_replay_scores_800_and_dropping_each_turns_last_call_scores_0():
    start = time.perf_counter()
    rows = self_check()
    elapsed = time.perf_counter() - start
    by_cat = {r["category"]: r for r in rows}
    assert list(by_cat) == list(CATEGORIES)
    for cat, r in by_cat.items():
        assert (r["total"], r["replay_correct"], r["dropped_correct"]) == (200, 200, 0), cat
    print(f"\nBFCL self-check: {sum(r['replay_correct'] for r in rows)}/800 and "
          f"{sum(r['dropped_correct'] for r in rows)} in {elapsed:.1f}s")


def test_tasks_carry_what_generation_needs():
    tasks = load_tasks(["multi_turn_miss_func"], ids=["multi_turn_miss_func_0"])
    assert len(tasks) == 1
    task = tasks[0]
    assert task["function"] and task["involved_classes"] and task["missed_function"]
    assert len(task["question"]) == len(load_ground_truth(["multi_turn_miss_func"])[task["id"]])


def test_listed_unreachable_items_really_are_unreachable():
    """The gold tweet is the word-sorted report, but sort() on the one-line report returns it unchanged."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    truth = load_ground_truth()
    for entry_id in UNREACHABLE_GROUND_TRUTH:
        entry = load_tasks([entry_id.rsplit("_", 1)[0]], ids=[entry_id])[0]
        turns = truth[entry_id]
        sort_turn = next(i for i, t in enumerate(turns) if any(c.startswith("sort(") for c in t))
        outputs = []
        for turn in turns[: sort_turn + 1]:
            results, _ = execute_multi_turn_func_call(
                turn, entry["initial_config"], entry["involved_classes"], f"unreach-{entry_id}", entry_id,
                long_context="long_context" in entry_id, is_evaL_run=False)
            outputs += results
        sorted_content = json.loads(outputs[-1])["sorted_content"]
        tweet = next(c for t in turns for c in t if c.startswith("post_tweet("))
        gold_content = tweet.split("content='")[1].split("'")[0]
        assert sorted_content != gold_content
        assert sorted(sorted_content.split()) == sorted(gold_content.split())  # same words, other order


def _fake_project(tmp_path, label, outcomes):
    """bfcl's files for `label`: outcomes = {category: {id: passed}}."""
    model_dir = f"prove_{label}"
    for cat, ids in outcomes.items():
        res = tmp_path / "result" / model_dir / "multi_turn"
        score = tmp_path / "score" / model_dir / "multi_turn"
        res.mkdir(parents=True, exist_ok=True)
        score.mkdir(parents=True, exist_ok=True)
        (res / f"BFCL_v4_{cat}_result.json").write_text("".join(json.dumps({"id": i, "result": []}) + "\n" for i in ids))
        correct = sum(ids.values())
        lines = [{"accuracy": correct / len(ids), "correct_count": correct, "total_count": len(ids)}]
        lines += [{"id": i, "valid": False, "error": {"error_type": "multi_turn:instance_state_mismatch"}}
                  for i, ok in ids.items() if not ok]
        (score / f"BFCL_v4_{cat}_score.json").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_scores_are_reported_with_and_without_unreachable_items(tmp_path):
    outcomes = {cat: {f"{cat}_{i}": i % 2 == 0 for i in range(10)} for cat in CATEGORIES}
    _fake_project(tmp_path, "toy", outcomes)
    s = score_project(tmp_path, "toy", unreachable=["multi_turn_base_4", "multi_turn_base_5"])
    base = s["categories"][0]
    assert base["accuracy"] == 0.5 and base["total_reachable"] == 8
    assert base["correct_reachable"] == 4 and base["accuracy_reachable"] == 0.5
    s2 = score_project(tmp_path, "toy", unreachable=["multi_turn_base_1", "multi_turn_base_3"])
    assert s2["categories"][0]["accuracy_reachable"] == pytest.approx(5 / 8)
    assert s2["overall"] == pytest.approx(0.5)  # unweighted mean over the four categories
    assert s2["overall_reachable"] == pytest.approx((5 / 8 + 0.5 * 3) / 4)
    assert not s2["complete"]
    assert s2["errors"]["multi_turn_base:multi_turn:instance_state_mismatch"] == 5
    paths = write_results([s2], tmp_path / "out")
    header = paths["csv"].read_text().splitlines()[0]
    assert "accuracy_reachable" in header
    assert json.loads(paths["json"].read_text())["unreachable_ids"]


def test_a_category_that_was_not_run_is_an_error_not_a_zero(tmp_path):
    _fake_project(tmp_path, "toy", {"multi_turn_base": {"multi_turn_base_0": True}})
    with pytest.raises(FileNotFoundError):
        score_project(tmp_path, "toy")


def test_config_guards_bfcl_naming():
    with pytest.raises(ValueError, match="'_'"):
        BFCLConfig(label="qwen3_8b")
    with pytest.raises(ValueError, match="unknown categories"):
        BFCLConfig(label="x", categories=("simple_python",))
    cfg = BFCLConfig.for_paper_model("Granite-4.1-8B", "granite-base")
    assert cfg.handler == "Granite4FCHandler"
    with pytest.raises(ValueError, match=r"\['multi_turn_base_50'\] are not in the categories run"):
        BFCLConfig(label="x", categories=("multi_turn_miss_func",), ids=("multi_turn_base_50",))
    assert BFCLConfig(label="x", ids=["multi_turn_base_50"]).ids == ("multi_turn_base_50",)


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_profiles_describe_a_valid_eval_plan(profile):
    from prove.eval.pipeline import EvalPlan
    from prove.profiles import load_profile

    plan = EvalPlan.from_profile(load_profile(profile).eval, results_dir="out")
    assert plan.bfcl_categories == CATEGORIES and plan.tau2_trials == (4 if profile == "paper" else 1)
    cfg = BFCLConfig(label="x", categories=plan.bfcl_categories, ids=plan.bfcl_ids)  # ids validated
    known = {e["id"] for e in load_tasks(plan.bfcl_categories, plan.bfcl_ids)}
    if profile == "smoke":  # a handful, one per category, each of which bfcl can load
        assert len(cfg.ids) == len(CATEGORIES) and known == set(cfg.ids)
        assert plan.bfcl_max_new_tokens and plan.bfcl_max_steps_per_turn == 1 and plan.bfcl_num_threads == 1
    else:  # every entry, bfcl's own limits
        assert cfg.ids is None and len(known) == 800
        assert plan.bfcl_max_new_tokens is None and plan.bfcl_max_steps_per_turn is None
    assert EvalPlan.from_profile(load_profile("smoke").eval, bfcl_ids=None).bfcl_ids is None  # overrides win
    with pytest.raises(ValueError, match="unknown eval settings \\['bfcl_entries'\\]; valid: .*bfcl_ids"):
        EvalPlan.from_profile(load_profile("smoke").eval, bfcl_entries=8)


def test_capped_client_limits_new_tokens_and_passes_everything_else():
    seen = []

    class Inner:
        def create(self, **kw):
            seen.append(kw)
            return "ok"

    class Client:
        completions = Inner()
        chat = type("C", (), {"completions": Inner()})()
        base_url = "http://x/v1"

    capped = CappedClient(Client(), 32)
    capped.completions.create(model="m", prompt="p", max_tokens=4096)
    capped.chat.completions.create(model="m", messages=[])
    capped.completions.create(model="m", prompt="p", max_tokens=8)
    assert [k["max_tokens"] for k in seen] == [32, 32, 8]
    assert seen[0]["prompt"] == "p" and capped.base_url == "http://x/v1"


def _as_qwen_fc_step(calls: list[str]) -> str:
    """Ground-truth call strings as one QwenFCHandler model step (`<tool_call>` JSON blocks)."""
    blocks = []
    for call in calls:
        node = ast.parse(call, mode="eval").body
        assert isinstance(node, ast.Call) and not node.args, call
        args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
        blocks.append(f'<tool_call>\n{json.dumps({"name": ast.unparse(node.func), "arguments": args})}\n</tool_call>')
    return "\n".join(blocks)


def test_the_child_evaluates_a_run_with_bfcls_checker(tmp_path):
    """bfcl evaluate in the child (config file, shim, our registered handler) on a written result: the
    ground truth in QwenFCHandler's format scores 1/1 (the self-check above shows the checker fails a
    dropped call). One latency sample: bfcl's leaderboard CSV needs the shim's stdev guard."""
    entry_id = "multi_turn_base_50"
    cfg = BFCLConfig(label="gt-replay", handler="QwenFCHandler", categories=("multi_turn_base",), ids=(entry_id,),
                     project_dir=tmp_path, max_steps_per_turn=2, timeout_s=300)
    turns = load_ground_truth(["multi_turn_base"])[entry_id]
    steps = [[_as_qwen_fc_step(t), "Done."] if t else ["Done."] for t in turns]
    result_dir = tmp_path / "result" / "prove_gt-replay" / "multi_turn"
    result_dir.mkdir(parents=True)
    (result_dir / "BFCL_v4_multi_turn_base_result.json").write_text(json.dumps(
        {"id": entry_id, "result": steps, "latency": [[1.5]], "input_token_count": [[10]],
         "output_token_count": [[5]]}) + "\n")
    BFCL(cfg).evaluate()
    config = read_config(tmp_path / "logs" / "gt-replay.evaluate.json")
    assert config.models[0].registry == "prove/gt-replay" and config.max_steps_per_turn == 2
    assert config.project_dir == str(tmp_path.resolve()) and config.base_url is None
    (row,) = BFCL(cfg).score()["categories"]
    assert (row["total"], row["correct"]) == (1, 1)
    assert (tmp_path / "score" / "data_multi_turn.csv").is_file()  # written after the one-sample latency stats
