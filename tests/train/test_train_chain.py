"""The paper's chain on CPU, for real: VERL SFT -> VERL GRPO (live tool calls, vLLM rollouts) -> HF folder -> held-out.

The VERL GRPO checks read the suite's rehearsal run (``pipeline_run``: 05 trains SFT, then the
learning rates it sweeps (and any reward ablation it lists) with ``verl.trainer.main_ppo`` and
VERL's vLLM rollout on vLLM's CPU build, each from the SFT model; 06 evaluates the picked run on
held-out turns through a served model): its GRPO runs started from the SFT model, rolled out against
a real ``prove serve`` on loopback through ``ProveTool``, logged PROVE's signals, updated the policy
exactly where a group's rollouts scored differently and saved an HF folder that 06 evaluated. (The chain ran its own SFT and GRPO launches until the rehearsal joined
the suite; the same launch a second time cost ~4 minutes of the 45.)

A module fixture of its own trains the SFT model (VERL's SFT trainer, three steps on the first turn
of one conversation of a small synthesis run) that two GRPO steps of TRL's trainer (``--engine
trl``) start from: the update's direction, on two first turns that call the same tool with other
values.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from notebook_run import PIPELINE_PROFILE, PIPELINE_TIMEOUT_S, pipeline_results
from train_helpers import need_verl

from prove.profiles import load_profile
from prove.train.matrix import sweep_points

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # the module fixture trains SFT (~1 min here)

# The TRL direction test (see its docstring): one prompt x 4 rollouts per step, each row once.
# Measured here on the earlier hand-built banking rows (before the chain used synthesis rows):
# 0.74 -> 1.14 (sum of the two rows' expected reward), and 0.74 -> 0.40 with the reward negated;
# ~95 s here.
DIRECTION_LR = 5e-5


def _weights(folder: str | Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    out: dict[str, Any] = {}
    for f in sorted(Path(folder).glob("*.safetensors")):
        out.update(load_file(f))
    return out


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _first_turn(example: dict[str, Any]) -> dict[str, Any]:
    """The example cut after its first turn (a short conversation: the test's SFT stays cheap)."""
    from prove.rows import user_turn_positions

    users = user_turn_positions(example["messages"])
    replay = {**example["replay"], "turn_effects": example["replay"]["turn_effects"][:1]}
    return {**example, "messages": example["messages"][:users[1]], "turns": example["turns"][:1],
            "replay": replay}


def _pair(conversations: list[dict[str, Any]], tokenizer: Any) -> list[dict[str, Any]]:
    """Two first turns to train on, each one call with one value from the user's words (the value to
    copy is what tells a group of rollouts apart; a call without arguments is right every time, one
    with several teaches the SFT'd model arguments the other turn must not have): the shortest pair
    that calls the same tools (with other values), else the two shortest;
    short, so calls and tool responses fit the response budget."""
    from prove.rows import sft_row
    from prove.train.data import _tokens

    def length(e: dict[str, Any]) -> int:
        return _tokens(tokenizer, sft_row(e)["messages"], list(e["tools"]), False)

    def tools(e: dict[str, Any]) -> tuple[str, ...]:
        return tuple(c["name"] for c in e["turns"][0]["calls"])

    def copies(e: dict[str, Any]) -> bool:
        calls = e["turns"][0]["calls"]
        return len(calls) == 1 and len(calls[0]["arguments"]) == 1

    ranked = sorted(conversations, key=lambda e: (not copies(e), length(e), e["id"]))
    same = [[e for e in ranked if tools(e) == tools(first)] for first in ranked]
    pairs = [group[:2] for group in same if len(group) >= 2]
    return pairs[0] if pairs else ranked[:2]


@pytest.fixture(scope="module")
def chain_examples(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A synthesis run of its own (24 multi-turn conversations, ~2 s): enough first turns that two
    call the same tool with different values (the session's 6 have none; SFT on one tool and GRPO
    on another leaves every rollout equally wrong). Ids are written, not named (`lookup_rate=0`):
    a named id puts a lookup before the call, and this test wants first turns of one call."""
    from prove.synth.pipeline import SynthConfig, synthesize

    out = tmp_path_factory.mktemp("chain-synth")
    synthesize(SynthConfig(sizes={"multi_turn": 24, "clarification": 0, "abstention": 0}, seed=3,
                           n_chains=60, n_worlds=2, servers=("banking", "email", "shop"), chunk_size=8,
                           val_fraction=0.25, workers=1, lookup_rate=0.0), out)
    with (out / "examples.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory, chain_examples: list[dict[str, Any]],
          tokenizer: Any) -> dict[str, Any]:
    """VERL's SFT trainer on one conversation's first turn; the TRL step trains on it and another's
    (``rl_val``: both rows): the SFT'd model has learnt the call format but not the second turn's
    values, so a group of rollouts differs (values copied or not)."""
    need_verl()
    from prove.env.launch import free_port
    from prove.rows import sft_row, turn_rows, write_rows
    from prove.train.config import DataPaths, load_train_config
    from prove.train.data import narrow_tools
    from prove.train.launch import RunPaths, launch

    root = tmp_path_factory.mktemp("chain")
    conversations = _pair([narrow_tools(_first_turn(e), 2) for e in chain_examples if e["kind"] == "multi_turn"],
                          tokenizer)
    assert [c["turns"][0]["calls"][0]["name"] for c in conversations].count(
        conversations[0]["turns"][0]["calls"][0]["name"]) == 2, "no two first turns call the same tool"
    rows = [r for e in conversations for r in turn_rows(e, split="train")][:2]
    for i, r in enumerate(rows):
        r["extra_info"]["index"] = i
    data = DataPaths(**{k: str(root / "data" / f"{k}.parquet")
                        for k in ("rl_train", "rl_val", "sft_train", "sft_val")})
    write_rows(rows[1:], data.rl_train)
    write_rows(rows, data.rl_val)
    write_rows([sft_row(conversations[0])], data.sft_train)
    write_rows([sft_row(conversations[0])], data.sft_val)

    cfg = load_train_config("smollm2-135m")
    cfg = dataclasses.replace(
        cfg, data=data, env=dataclasses.replace(cfg.env, port=free_port()), sft_lr=1e-4,
        # micro-batches of one (the TRL engine reads the actor's): eight rollouts of ~1,300 tokens at
        # four took an update to 11.7 GB on this machine (CI, stop 38)
        verl={**cfg.verl, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 1,
              "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 1,
              "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 1},
        sft={**cfg.sft, "trainer.total_training_steps": 3, "trainer.total_epochs": 3, "data.max_length": 2048,
             "data.train_batch_size": 1, "data.micro_batch_size_per_gpu": 1,
             "data.max_token_len_per_gpu": 2048, "optim.lr_warmup_steps_ratio": 0.0,
             "optim.lr_scheduler_type": "constant"},
    )
    results, ckpt = root / "results", root / "checkpoints"
    assert launch(cfg, "sft", results_dir=results, checkpoints_dir=ckpt) == 0
    return {"cfg": cfg, "sft": RunPaths.for_run(cfg, cfg.variant("sft"), results, ckpt)}


_TRAIN = load_profile(PIPELINE_PROFILE).train
GRPO_VARIANTS = (*sweep_points(_TRAIN), *(v for v in _TRAIN.variants if v not in ("sft", "default")))
"""The rehearsal's GRPO launches (05: the learning-rate sweep's points, then any reward ablation;
``default`` is the sweep's pick, not a launch of its own)."""


@pytest.fixture(scope="module")
def rehearsal(pipeline_run: dict[str, Any]) -> dict[str, Any]:
    """The rehearsal's SFT run and GRPO runs (``RunPaths``), its training config, GRPO step count
    and results folder."""
    from prove.profiles import load_profile
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths

    prof = load_profile(PIPELINE_PROFILE)
    results = pipeline_results(pipeline_run, "06")
    [config] = prof.train.configs
    cfg = load_train_config(config)
    runs = {v: RunPaths.for_run(cfg, cfg.variant(v), results, results / "checkpoints") for v in ("sft", *GRPO_VARIANTS)}
    return {"cfg": cfg, "runs": runs, "steps": prof.train.grpo_steps, "results": results}


def _step(run: Any, key: str) -> dict[str, Any]:
    """The metrics VERL logged for the run's last step that has `key`."""
    lines = [json.loads(x) for x in run.metrics.read_text().splitlines()]
    return [x["data"] for x in lines if key in x["data"]][-1]


@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("variant", GRPO_VARIANTS)
def test_grpo_starts_from_the_sft_model_and_saves_an_hf_folder(rehearsal: dict[str, Any], variant: str) -> None:
    sft = json.loads(rehearsal["runs"]["sft"].model.read_text())
    grpo = json.loads(rehearsal["runs"][variant].model.read_text())
    assert grpo["init"] == sft["hf_model"] and grpo["trainer"] == "grpo"
    assert grpo["global_step"] == rehearsal["steps"] and grpo["variant"] == variant
    assert Path(grpo["hf_model"]).parts[-2:] == ("actor", "huggingface")
    assert _weights(grpo["hf_model"]), "the saved step has no weights"


@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("variant", GRPO_VARIANTS)
def test_each_steps_hacking_signals_are_in_verls_training_metrics(rehearsal: dict[str, Any], variant: str) -> None:
    """VERL logs no reward key but the score in training; prove.train.verl_metrics adds the step's
    signals (prove.reward.signals) from every rollout's reward keys, state verdict included."""
    run = rehearsal["runs"][variant]
    step = _step(run, "timing_s/step")
    rollouts = [json.loads(x) for x in (run.run_dir / "rollouts" / f"{rehearsal['steps']}.jsonl").read_text().splitlines()]
    n_gt = [len(json.loads(r["gts"])["calls"]) for r in rollouts]  # each rollout's turn's ground truth
    assert step["prove/gt_calls_per_turn"] == pytest.approx(sum(n_gt) / len(n_gt))
    assert 0.0 <= step["prove/state_success"] <= 1.0  # every rollout's episode effect was read
    n = len(rollouts)
    assert step["prove/calls_per_turn"] * n == pytest.approx(round(step["prove/calls_per_turn"] * n))
    assert 0.0 <= step["prove/no_call_share"] <= 1.0 and "prove/high_reward_state_fail" in step
    assert 0.0 <= step["prove/over_budget_share"] <= 1.0  # every rollout's budget B came with its score


def _rollouts(rehearsal: dict[str, Any], variant: str) -> list[dict[str, Any]]:
    """The rollouts VERL wrote for the variant's last GRPO step (``trainer.rollout_data_dir``)."""
    run = rehearsal["runs"][variant]
    lines = (run.run_dir / "rollouts" / f"{rehearsal['steps']}.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def _answers(rollouts: list[dict[str, Any]]) -> list[str]:
    """Every tool response of every rollout, in order."""
    return [part.split("\n</tool_response>", 1)[0]
            for r in rollouts for part in r["output"].split("<tool_response>\n")[1:]]


def _reached_the_server(answer: str) -> bool:
    """A live server's answer: a result (a JSON object) or the tool's own error ("Error: since must
    be a date ..."); an unknown tool name ("Unknown function ...") is refused before the server."""
    return isinstance(_json(answer), dict) or answer.startswith("Error:")


def _groups_that_differ(rollouts: list[dict[str, Any]]) -> list[str]:
    """The prompts whose rollouts did not all score the same: GRPO's advantage is non-zero only
    there. VERL's rollout keys read ``{uid}_{session}_{index}``, the prompt's uid a uuid."""
    scores: dict[str, set[float]] = {}
    for r in rollouts:
        scores.setdefault(r["uid"].split("_", 1)[0], set()).add(round(float(r["score"]), 6))
    return [uid for uid, s in scores.items() if len(s) > 1]


@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("variant", GRPO_VARIANTS)
def test_every_tool_response_of_a_rollout_came_from_prove_tool(rehearsal: dict[str, Any], variant: str) -> None:
    """What came back for each call the rollouts made is the live server's answer or the unknown
    name's refusal. Whether a 135M model's sampled answer makes a call at all is chance (stop 45's
    CI: 3 of 6 rollouts did; the next rehearsal: 0 of 8); test_train_token_exact.py sends prepared
    calls through the same agent loop to a live ``prove serve``."""
    cfg = rehearsal["cfg"]
    rollouts = _rollouts(rehearsal, variant)
    # train_batch_size prompts x rollout.n
    assert len(rollouts) == cfg.verl["data.train_batch_size"] * cfg.verl["actor_rollout_ref.rollout.n"]
    answers = _answers(rollouts)
    assert all(_reached_the_server(a) or a.startswith("Unknown function") for a in answers), answers


@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("variant", GRPO_VARIANTS)
def test_the_update_follows_the_groups_advantage(rehearsal: dict[str, Any], variant: str) -> None:
    """The step's gradient is non-zero exactly when a group's rollouts scored differently (at step 1
    the policy is the reference: the KL loss adds no gradient), and then the saved weights moved;
    a step with nothing to learn from leaves them as they were. Which case a rehearsal meets is the
    sampling's (see above); either way the update follows the advantage."""
    run = rehearsal["runs"][variant]
    differ = _groups_that_differ(_rollouts(rehearsal, variant))
    step = _step(run, "actor/grad_norm")
    assert (step["actor/grad_norm"] > 0) == bool(differ), (step["actor/grad_norm"], differ)
    assert (step["critic/advantages/max"] > step["critic/advantages/min"]) == bool(differ), differ
    sft = json.loads(rehearsal["runs"]["sft"].model.read_text())["hf_model"]
    before, after = _weights(sft), _weights(json.loads(run.model.read_text())["hf_model"])
    assert before.keys() == after.keys()
    changed = [k for k in before if not (before[k] == after[k]).all()]
    assert (len(changed) > len(before) // 2) if differ else not changed, (len(changed), len(before))


@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
def test_heldout_evaluation_runs_the_trained_folder_live(rehearsal: dict[str, Any]) -> None:
    """06 evaluated the picked GRPO run's HF folder (served) on the held-out turns, the same turns as
    the base model's, each scored from its live episode."""
    import pandas as pd

    from prove.eval.heldout import SUMMARY_KEYS

    results = rehearsal["results"]
    runs = pd.read_csv(results / "train_runs.csv").set_index("run")
    summary = pd.read_csv(results / "heldout_summary.csv").set_index("run")
    turns = pd.read_csv(results / "heldout_turns.csv")
    assert set(SUMMARY_KEYS) <= set(summary.columns)
    assert summary.loc["grpo_default", "model"] == runs.loc["grpo_default", "hf_model"]
    grpo, base = turns[turns["label"] == "grpo_default"], turns[turns["label"] == "base"]
    assert len(grpo) == summary.loc["grpo_default", "turns"] > 0
    assert grpo["score"].between(0, 1).all() and sorted(grpo["n_gt"]) == sorted(base["n_gt"])
    assert summary.loc["grpo_default", "gt_calls_per_turn"] == pytest.approx(grpo["n_gt"].mean())


def _sequence_logps(model: Any, batch: dict[str, Any], temperature: float) -> Any:
    """Each trajectory's log-probability under `model` as TRL's GRPO loss reads it: prompt and
    completion ids with their masks, logits over the temperature, the completion's tokens counted
    where the loss counts them (``completion_mask * tool_mask``: the tool turns are not the model's)."""
    import torch

    ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
    mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
    n = batch["completion_ids"].shape[1]
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits[:, -n - 1:-1].float() / temperature
    tokens = torch.log_softmax(logits, -1).gather(-1, batch["completion_ids"].unsqueeze(-1)).squeeze(-1)
    counted = batch["completion_mask"] * batch.get("tool_mask", torch.ones_like(batch["completion_mask"]))
    return (tokens * counted).sum(-1)


def test_a_trl_grpo_step_makes_its_better_rollouts_likelier(chain: dict[str, Any], live_env: Any,
                                                            tmp_path: Path) -> None:
    """The update's direction, not the research result: one optimiser step of TRL's GRPO trainer
    (PROVE's reward, live episodes, both prompts in one step) raises the log-probability of the
    rollouts it scored above their group's mean against the others, on the very rollouts it
    trained on: sum_i A_i * (log pi_after(y_i) - log pi_before(y_i)) > 0. That is the first-order
    property of a policy-gradient step (Adam's first step moves every weight against its gradient),
    whatever the data; a flipped advantage or loss sign makes it negative. (An earlier form judged
    two steps on separately sampled rollouts, reweighted; its verdict followed which two prompts
    the synthesis produced, and it failed when they changed.)"""
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    import torch

    from prove.train.trl_engine import make_trainer, trl_dataset, trl_settings

    cfg = chain["cfg"]
    cfg = dataclasses.replace(
        cfg, data=dataclasses.replace(cfg.data, rl_train=cfg.data.rl_val),  # both rows, one step
        verl={**cfg.verl, "data.train_batch_size": 2, "actor_rollout_ref.actor.ppo_mini_batch_size": 2,
              "actor_rollout_ref.rollout.n": 4,
              "actor_rollout_ref.actor.use_kl_loss": False,
              "data.max_response_length": 128, "actor_rollout_ref.rollout.response_length": 128,
              "actor_rollout_ref.rollout.multi_turn.max_assistant_turns": 2})
    variant = dataclasses.replace(cfg.variant("default"), lr=DIRECTION_LR)
    temperature = trl_settings(cfg.verl).temperature
    sft = json.loads(chain["sft"].model.read_text())["hf_model"]
    assert len(list(trl_dataset(cfg.data.rl_val))) == 2

    trainer = make_trainer(sft, cfg, variant, [live_env.url], tmp_path / "ckpt", "direction",
                           steps=1, report_to=[])
    batches: list[dict[str, Any]] = []
    generate = trainer._generate_and_score_completions

    def recorded(inputs: Any) -> Any:
        out = generate(inputs)  # the policy before the step generated these
        batch = {k: v.detach().clone() for k, v in out.items() if torch.is_tensor(v)}
        batch["before"] = _sequence_logps(trainer.model, batch, temperature)
        batches.append(batch)
        return out

    trainer._generate_and_score_completions = recorded
    try:
        trainer.train()
    finally:
        trainer.prove_rollout.close()
    assert trainer.state.global_step == 1 and len(batches) == 1
    # the rollouts came from the config's engine, vLLM colocated in this process, on the step's weights
    engine = trainer.prove_rollout.generator
    assert engine is not None and engine.synced_step == 0 and trainer.prove_rollout.generate_seconds > 0
    batch = batches[0]
    advantages = batch["advantages"].float()
    assert len(advantages) == 2 * cfg.verl["actor_rollout_ref.rollout.n"]
    assert advantages.abs().sum() > 0, "no reward spread in either group: nothing to learn"
    after = _sequence_logps(trainer.model, batch, temperature)
    moved = after - batch["before"]
    assert moved.abs().sum() > 0, "the step did not change the policy"
    direction = float((advantages * moved).sum())
    assert direction > 0, {"advantages": advantages.tolist(), "log_prob_change": moved.tolist()}

