"""The TRL engine's parts: settings from the one config, the dataset, the rollout against live episodes.

The rollout tests drive ``ProveRollout`` with a scripted policy (a ``generate`` that writes given
assistant turns): what is under test is the path from text to live calls, log, tokens and loss
mask, not what a 135M model happens to write. The real model and TRL's trainer run in
``test_train_chain.py`` (the update's direction) and in the laptop experiment.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from train_helpers import need_verl, unclosed_episodes

from prove.env.launch import EnvServer


def _trl() -> None:
    need_verl()  # the rollout parses blocks with the agent loop's hermes rule (VERL's parser)
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")



def test_settings_come_from_the_configs_verl_keys() -> None:
    from prove.train.config import load_train_config
    from prove.train.trl_engine import trl_settings

    cfg = load_train_config("smollm2-135m-laptop")
    s = trl_settings(cfg.verl)
    assert (s.num_generations, s.prompts_per_step, s.max_completion_length) == (8, 1, 256)
    assert (s.max_assistant_turns, s.max_parallel_calls) == (4, 8)  # room to exceed the call budget
    assert s.beta == 0.0  # use_kl_loss: false in the laptop config
    paper = trl_settings(load_train_config("qwen3-4b").verl)
    assert paper.beta == 0.001 and paper.num_generations == 8 and paper.prompts_per_step == 64


def test_grpo_args_carry_the_variant_and_group(tmp_path: Path) -> None:
    _trl()
    from prove.train.config import load_train_config
    from prove.train.trl_engine import grpo_args

    cfg = load_train_config("smollm2-135m-laptop")
    args = grpo_args(cfg, cfg.variant("lr_high"), tmp_path, "x", steps=3, report_to=[])
    assert args.learning_rate == cfg.lr_sweep["lr_high"] and args.max_steps == 3
    assert args.per_device_train_batch_size == 8 and args.num_generations == 8
    assert args.use_cpu and args.max_completion_length == 256


def test_gpu_runs_train_in_bf16_in_verls_mini_batches(tmp_path: Path) -> None:
    """The paper config on a GPU: 64 prompts x 8 = 512 trajectories generated once per VERL step,
    an optimiser step per VERL mini-batch (16 prompts x 8 = 128 trajectories) in micro-batches of
    4, bf16; on the CPU the laptop config keeps one pass and fp32."""
    from prove.train.config import load_train_config
    from prove.train.trl_engine import GPU_MICRO_BATCH, batch_settings, grpo_config_kwargs

    paper = load_train_config("qwen3-4b")
    kw = grpo_config_kwargs(paper, paper.variant("default"), tmp_path, "x", steps=2, report_to=[],
                            device="cuda")
    assert kw["bf16"] and not kw["fp16"] and not kw["use_cpu"] and kw["gradient_checkpointing"]
    assert kw["generation_batch_size"] == 512 and kw["per_device_train_batch_size"] == GPU_MICRO_BATCH
    assert kw["per_device_train_batch_size"] * kw["gradient_accumulation_steps"] == 128
    assert kw["max_steps"] == 2 * 4  # four mini-batch updates per VERL step
    laptop = load_train_config("smollm2-135m-laptop")
    cpu = grpo_config_kwargs(laptop, laptop.variant("default"), tmp_path, "x", steps=3, report_to=[])
    assert cpu["use_cpu"] and not cpu["bf16"] and cpu["max_steps"] == 3
    assert (cpu["per_device_train_batch_size"], cpu["gradient_accumulation_steps"]) == (8, 1)  # the group in one pass
    odd = {"data.train_batch_size": 6, "actor_rollout_ref.actor.ppo_mini_batch_size": 4,
           "actor_rollout_ref.rollout.n": 2}
    with pytest.raises(ValueError, match="ppo_mini_batch_size=4 does not divide data.train_batch_size=6"):
        batch_settings(odd, "cuda")
    micro = batch_settings({**odd, "data.train_batch_size": 8,
                            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 3}, "cuda")
    assert micro == {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 4,
                     "generation_batch_size": 16}  # 3 does not divide 8 trajectories: the next that does


def test_grpo_config_accepts_the_gpu_settings(tmp_path: Path) -> None:
    """TRL's own GRPOConfig validates the GPU batch keys (built here without a GPU: bf16 off)."""
    _trl()
    from trl import GRPOConfig

    from prove.train.config import load_train_config
    from prove.train.trl_engine import grpo_config_kwargs

    paper = load_train_config("qwen3-4b")
    kw = grpo_config_kwargs(paper, paper.variant("default"), tmp_path, "x", steps=1, report_to=[],
                            device="cuda")
    args = GRPOConfig(**{**kw, "bf16": False, "use_cpu": True})  # bf16 needs the GPU it will have
    assert args.steps_per_generation == 512 // kw["per_device_train_batch_size"]
    assert args.generation_batch_size % args.num_generations == 0


def test_engine_trl_builds_the_trl_command_and_bad_engines_are_refused(tmp_path: Path) -> None:
    from prove.profiles import ChainPlan, from_mapping
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths, build_command, launch

    cfg = load_train_config("smollm2-135m-laptop")
    v = cfg.variant("recall_only")
    paths = RunPaths.for_run(cfg, v, tmp_path)
    cmd = build_command(cfg, v, paths, {}, "/m", "trl")
    assert cmd[1:3] == ["-m", "prove.train.trl_engine"] and cmd[cmd.index("--variant") + 1] == "recall_only"
    assert cmd[cmd.index("--env-url") + 1] == cfg.env.urls[0] and cmd[cmd.index("--model") + 1] == "/m"
    # SFT stays VERL's whatever the engine
    assert "verl.trainer.sft_trainer" in build_command(cfg, cfg.variant("sft"), paths, {}, "/m", "trl")
    with pytest.raises(ValueError, match="unknown engine 'jax'; valid: verl, trl"):
        launch(cfg, "default", dry_run=True, results_dir=tmp_path, engine="jax")
    with pytest.raises(ValueError, match="train.engine must be one of 'verl', 'trl', got 'deepspeed'"):
        from_mapping(ChainPlan, {"configs": ["x"], "engine": "deepspeed"}, "p.yaml", "train")
    plan = from_mapping(ChainPlan, {"configs": ["x"], "engine": "trl", "chain_benchmarks": []})
    assert plan.engine == "trl" and plan.chain_benchmarks == ()


def test_dataset_keeps_each_rows_episode_tools_and_ground_truth(rl_parquet: Path, synth_rows: list) -> None:
    _trl()
    from prove.train.trl_engine import trl_dataset

    ds = trl_dataset(rl_parquet)
    assert len(ds) == len(synth_rows)
    first, row = ds[0], synth_rows[0]
    assert first["seed"] == row["extra_info"]["seed"] and first["tools"] == row["extra_info"]["tools"]
    assert first["ground_truth"] == row["reward_model"]["ground_truth"]
    assert [m["role"] for m in first["prompt"]] == [m["role"] for m in row["prompt"]]
    assert json.loads(first["messages"])[-1]["role"] == "user"


def test_tool_tokens_are_what_the_template_renders_after_the_turn(tokenizer: Any) -> None:
    from prove.train.config import load_train_config
    from prove.train.trl_engine import ProveRollout, trl_settings

    rollout = ProveRollout(tokenizer, ["http://127.0.0.1:1"], trl_settings(load_train_config("smollm2-135m").verl))
    try:
        call = {"type": "function", "function": {"name": "get_balance", "arguments": {"account_id": "A"}}}
        convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
        tool = [{"role": "tool", "name": "get_balance", "content": '{"balance": 3}'}]
        head = tokenizer.apply_chat_template(convo, tokenize=True)
        head = list(head["input_ids"] if isinstance(head, Mapping) else head)
        head = head[: max(i for i, t in enumerate(head) if t == tokenizer.eos_token_id) + 1]
        full = tokenizer.apply_chat_template(convo + tool, add_generation_prompt=True, tokenize=True)
        full = list(full["input_ids"] if isinstance(full, Mapping) else full)
        assert head + rollout.tool_ids(tool) == full
        assert "<tool_response>" in tokenizer.decode(rollout.tool_ids(tool))
    finally:
        rollout.close()


class ScriptedPolicy:
    """A policy whose every ``generate`` writes the next scripted assistant turn (then EOS)."""

    def __init__(self, tokenizer: Any, turns: list[str]) -> None:
        import torch

        self.tok, self.turns, self.calls = tokenizer, list(turns), 0
        self.training = True
        self.generation_config = type("G", (), {"eos_token_id": [tokenizer.eos_token_id]})()
        self._torch = torch

    def eval(self) -> None:
        self.training = False

    def train(self) -> None:
        self.training = True

    def generate(self, input_ids: Any, attention_mask: Any, max_new_tokens: int, **_: Any) -> Any:
        rows = []
        for _ in range(input_ids.shape[0]):
            text = self.turns[min(self.calls, len(self.turns) - 1)]
            rows.append(self.tok.encode(text, add_special_tokens=False) + [self.tok.eos_token_id])
        self.calls += 1
        width = max(len(r) for r in rows)
        pad = self.tok.pad_token_id
        new = self._torch.tensor([r + [pad] * (width - len(r)) for r in rows])
        return self._torch.cat([input_ids, new], dim=1)


def _row_and_calls(synth_rows: list[dict]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    row = next(r for r in synth_rows if json.loads(r["reward_model"]["ground_truth"])["calls"])
    return row, json.loads(row["reward_model"]["ground_truth"])["calls"]


def _block(call: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": call["name"], "arguments": call["arguments"]}) + "\n</tool_call>"


def _dataset_row(row: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    from prove.rows import write_rows
    from prove.train.trl_engine import trl_dataset

    return trl_dataset(write_rows([row], tmp_path / "one.parquet"))[0]


@pytest.fixture()
def rollout_for(tokenizer: Any, live_env: EnvServer) -> Any:
    from prove.train.config import load_train_config
    from prove.train.trl_engine import ProveRollout, trl_settings

    made = []

    def make(**settings: Any) -> ProveRollout:
        base = trl_settings(load_train_config("smollm2-135m").verl)
        r = ProveRollout(tokenizer, [live_env.url], dataclasses.replace(base, **settings), tag="test-trl")
        made.append(r)
        return r

    yield make
    for r in made:
        r.close()


def test_scripted_ground_truth_runs_live_and_scores_one(tokenizer: Any, live_env: EnvServer, synth_rows: list,
                                                        tmp_path: Path, rollout_for: Any) -> None:
    _trl()
    from prove.reward.trl import score_batch

    row, calls = _row_and_calls(synth_rows)
    data = _dataset_row(row, tmp_path)
    turns = [_block(c) for c in calls] + ["Done."]
    rollout = rollout_for(max_assistant_turns=len(turns), max_completion_length=2048)
    before = unclosed_episodes(live_env.url)
    out = rollout.rollouts(ScriptedPolicy(tokenizer, turns), [data, data])
    assert unclosed_episodes(live_env.url) == before, "every episode is closed when its rollout ends"
    for log, ids, mask in zip(out["tool_calls"], out["completion_ids"], out["env_mask"], strict=True):
        assert [e["name"] for e in log] == [c["name"] for c in calls] and all(e["ok"] for e in log), log
        assert len(ids) == len(mask) and 0 in mask and mask[-1] == 1
        model_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if m])
        tool_text = tokenizer.decode([t for t, m in zip(ids, mask, strict=True) if not m])
        assert "<tool_response>" in tool_text and "<tool_response>" not in model_text
        assert model_text.count("<tool_call>") == len(calls) and "Done." in model_text
    assert data["expected_effect"] and out["effect_hash"] == [data["expected_effect"]] * 2
    scores = score_batch(out["completion_ids"], [data["ground_truth"]] * 2, [data["tools"]] * 2,
                         out["tool_calls"], "prove", out["effect_hash"], [data["expected_effect"]] * 2)
    assert [s["score"] for s in scores] == [1.0, 1.0] and [s["outcome"] for s in scores] == [1.0, 1.0]


def test_a_rollout_without_calls_is_read_at_its_prefix(tokenizer: Any, live_env: EnvServer, synth_rows: list,
                                                       synth_examples: list, tmp_path: Path,
                                                       rollout_for: Any) -> None:
    """No call opened its episode: it is opened at the row's prefix to be read, then closed; a
    turn that writes is not reached by saying nothing."""
    _trl()
    from prove.env.effects import EMPTY_EFFECT

    effects = {e["id"]: e["replay"]["turn_effects"] for e in synth_examples}
    row = next(r for r in synth_rows if r["extra_info"]["turn"] == 1
               and effects[r["extra_info"]["example_id"]][0] != EMPTY_EFFECT
               and effects[r["extra_info"]["example_id"]][1] != effects[r["extra_info"]["example_id"]][0])
    data = _dataset_row(row, tmp_path)
    before = unclosed_episodes(live_env.url)
    out = rollout_for().rollouts(ScriptedPolicy(tokenizer, ["Sorry, I can't."]), [data])
    assert unclosed_episodes(live_env.url) == before
    assert out["tool_calls"] == [[]] and out["effect_hash"] == [effects[data["example_id"]][0]]
    from prove.train.trl_engine import signals_column

    logged: dict[str, float] = {}
    column = signals_column("prove")
    assert column([""], [data["ground_truth"]], [data["tools"]], out["tool_calls"], out["effect_hash"],
                  [data["expected_effect"]], log_metric=logged.__setitem__) == [0.0]
    assert column.__name__ == "outcome"
    assert logged["prove/state_success"] == 0.0 and logged["prove/no_call_share"] == 1.0
    assert logged["prove/calls_per_turn"] == 0.0 and "prove/reward_state_corr" not in logged  # NaN: one rollout


def test_malformed_unknown_and_over_limit_calls_are_logged_as_failed(
        tokenizer: Any, synth_rows: list, tmp_path: Path, rollout_for: Any) -> None:
    _trl()
    row, calls = _row_and_calls(synth_rows)
    data = _dataset_row(row, tmp_path)
    unknown = _block({"name": "open_pod_bay_doors", "arguments": {}})
    turn = "<tool_call>\n{not json}\n</tool_call>" + unknown + _block(calls[0])
    out = rollout_for(max_parallel_calls=1, max_assistant_turns=2).rollouts(
        ScriptedPolicy(tokenizer, [turn, _block(calls[0])]), [data])
    log = out["tool_calls"][0]
    assert not log[0]["ok"] and "malformed" in log[0]["error"]
    assert log[1]["name"] == "open_pod_bay_doors" and "Unknown function" in log[1]["error"]
    assert not log[2]["ok"] and "max_parallel_calls" in log[2]["error"]
    # the second (last allowed) assistant turn's call is not run: the rollout ends on the limit
    assert not log[3]["ok"] and "max_assistant_turns=2" in log[3]["error"]
    assert len(log) == 4


def test_stop_tokens_are_the_folders_and_the_tokenizers(tokenizer: Any) -> None:
    from prove.train.trl_engine import stop_tokens

    policy = ScriptedPolicy(tokenizer, ["x"])
    policy.generation_config.eos_token_id = [2, 1]
    assert stop_tokens(policy, tokenizer) == [2, 1]
    policy.generation_config.eos_token_id = 1
    assert stop_tokens(policy, tokenizer) == [tokenizer.eos_token_id, 1]



def test_grpo_trainer_imports_beside_the_installed_vllm() -> None:
    """TRL 1.12 imports vLLM 0.19-0.27 names at load; vLLM's CPU build (0.30) lacks them. In a fresh
    interpreter (TRL caches nothing yet): the engine's guard lets ``GRPOTrainer`` import, and hides
    vLLM only when the installed one is outside TRL's range."""
    import subprocess
    import sys

    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    probe = ("from prove.train.trl_engine import hide_unsupported_vllm\n"
             "hidden = hide_unsupported_vllm()\n"
             "from trl import GRPOTrainer\n"
             "import trl.import_utils as iu\n"
             "print(hidden, iu.is_vllm_available())\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    hidden, available = out.stdout.split()
    from trl.import_utils import _is_package_available

    found, ver = _is_package_available("vllm", return_version=True)
    from packaging.version import Version

    from prove.train.trl_engine import TRL_VLLM_RANGE

    outside = found and not (Version(TRL_VLLM_RANGE[0]) <= Version(Version(ver).base_version)
                             <= Version(TRL_VLLM_RANGE[1]))
    assert hidden == str(bool(outside)) and available == str(found and not outside)
