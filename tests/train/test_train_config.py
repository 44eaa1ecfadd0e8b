"""Paper training configs: every model × variant composes against VERL's own Hydra config."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from train_helpers import need_verl

from prove.reward.config import ABLATIONS, PROVE
from prove.train.config import CONFIG_DIR, LR_KEYS, TrainConfig, load_train_config, paper_configs
from prove.train.launch import RunPaths, build_command, hydra_value, launch, run_env, sft_overrides
from prove.train.tool_config import read_tool_names

MODELS = {"qwen3-4b": "Qwen/Qwen3-4B", "qwen3-8b": "Qwen/Qwen3-8B",
          "qwen2.5-7b": "Qwen/Qwen2.5-7B-Instruct", "granite-4.1-8b": "ibm-granite/granite-4.1-8b"}
PER_MODEL_KEYS = {"actor_rollout_ref.rollout.tensor_model_parallel_size",
                  "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"}
ALL = [(m, v) for m in MODELS for v in load_train_config(m).variants()]


def test_one_config_per_paper_model_with_the_papers_settings() -> None:
    assert sorted(paper_configs()) == sorted(MODELS)
    configs = [load_train_config(m) for m in MODELS]
    for cfg in configs:
        assert cfg.model == MODELS[cfg.name]
        assert (cfg.steps, cfg.gpus) == (350, 8)
        v = cfg.verl
        assert v["algorithm.adv_estimator"] == "grpo" and v["actor_rollout_ref.rollout.name"] == "vllm"
        assert v["actor_rollout_ref.rollout.multi_turn.format"] == "hermes"
        assert v["actor_rollout_ref.rollout.multi_turn.max_tool_response_length"] >= 4096
        assert "wandb" in v["trainer.logger"]
        assert sorted(cfg.lr_sweep) == sorted(LR_KEYS) and len(set(cfg.lr_sweep.values())) == 3
    # Identical settings for all models except the per-size keys; only the lr is tuned.
    shared = [{k: x for k, x in c.verl.items() if k not in PER_MODEL_KEYS} for c in configs]
    assert all(s == shared[0] for s in shared)


def test_variants_are_the_sweep_the_ablations_and_sft() -> None:
    cfg = load_train_config("qwen2.5-7b")
    variants = cfg.variants()
    assert set(variants) == {"default", *LR_KEYS, *(a for a in ABLATIONS if a != "prove"), "sft"}
    assert variants["default"].lr == cfg.lr_sweep["lr_mid"] and variants["default"].reward == "prove"
    assert [variants[k].lr for k in LR_KEYS] == [cfg.lr_sweep[k] for k in LR_KEYS]
    assert all(variants[a].reward == a and variants[a].lr == variants["default"].lr
               for a in ABLATIONS if a != "prove")
    assert variants["sft"].trainer == "sft"
    with pytest.raises(ValueError, match="unknown variant"):
        cfg.variant("lr_huge")


def test_configs_may_not_add_keys_verl_lacks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"base": str(CONFIG_DIR / "grpo.yaml"), "name": "x", "model": "m",
                                   "family": "f", "lr_sweep": dict.fromkeys(LR_KEYS, 1e-6),
                                   "verl": {"+trainer.my_new_key": 1}}))
    with pytest.raises(ValueError, match="adds a key"):
        load_train_config(bad)


@pytest.mark.parametrize("text", ["plain", "a b", "it's", "1e-5", "true", "pkg://x.y", "[x]", "a,b", ""])
def test_hydra_values_round_trip(text: str) -> None:
    need_verl()
    from prove.train.compose import compose

    cfg = compose([f"trainer.experiment_name={hydra_value(text)}", f"trainer.logger={hydra_value(['a', text])}"])
    assert cfg.trainer.experiment_name == text and list(cfg.trainer.logger) == ["a", text]


def test_unknown_keys_fail_composition() -> None:
    need_verl()
    from prove.train.compose import compose

    with pytest.raises(Exception, match="not_a_key"):
        compose(["actor_rollout_ref.rollout.multi_turn.not_a_key=1"])
    with pytest.raises(ValueError, match="adds a key"):
        compose(["+trainer.not_a_key=1"])


@pytest.mark.slow
@pytest.mark.parametrize(("model", "variant"), ALL, ids=[f"{m}-{v}" for m, v in ALL])
def test_every_model_and_variant_composes_and_validates(model: str, variant: str, tmp_path: Path) -> None:
    need_verl()
    from prove.train.compose import check_variant

    cfg: TrainConfig = load_train_config(model)
    composed = check_variant(cfg, variant, tmp_path)
    v = cfg.variant(variant)
    if v.trainer == "sft":
        assert composed.optim.lr == v.lr and composed.model.path == cfg.model
        assert composed.data.custom_cls.name == "ProveSFTDataset"
        return
    arr = composed.actor_rollout_ref
    assert arr.actor.optim.lr == v.lr and arr.model.path == cfg.model
    assert composed.trainer.total_training_steps == 350 and composed.trainer.n_gpus_per_node == 8
    assert composed.reward.custom_reward_function.reward_kwargs.config == v.reward
    assert arr.rollout.agent.default_agent_loop == "prove_tool_agent"
    assert Path(arr.rollout.agent.agent_loop_config_path).is_file()
    assert composed.trainer.experiment_name == f"{model}-{variant}"


def test_reward_weights_are_one_config_for_every_model() -> None:
    assert ABLATIONS["prove"] is PROVE  # the default variant uses the reward's defaults, unchanged


def test_dry_run_writes_tool_config_and_prints_the_exact_command(tmp_path: Path) -> None:
    cfg = load_train_config("qwen3-8b")
    out = io.StringIO()
    assert launch(cfg, "beta0", dry_run=True, results_dir=tmp_path, out=out) == 0
    paths = RunPaths.for_run(cfg, cfg.variant("beta0"), tmp_path)
    printed = out.getvalue()
    assert "-m verl.trainer.main_ppo" in printed and "reward_kwargs.config=beta0" in printed
    assert "actor_rollout_ref.model.path=Qwen/Qwen3-8B" in printed and "WANDB_MODE=offline" in printed
    assert f"tool_config_path={paths.tool_config}" in printed
    assert read_tool_names(paths.tool_config)  # every tool, pointing at the configured env URLs
    assert "main_ppo" in paths.command.read_text()
    env = run_env(paths, {"WANDB_API_KEY": "k"})
    assert "WANDB_MODE" not in env  # online when a key is set
    sft = build_command(cfg, cfg.variant("sft"), paths)
    assert sft[1:4] == ["-m", "torch.distributed.run", "--standalone"] and "verl.trainer.sft_trainer" in sft


def test_cli_entry_point_lists_and_dry_runs(tmp_path: Path) -> None:
    listing = subprocess.run([sys.executable, "-m", "prove.train.cli", "granite-4.1-8b", "--list"],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    assert "lr_high" in listing and "no_efficiency" in listing and "sft" in listing
    bad = subprocess.run([sys.executable, "-m", "prove.train.cli", "granite-4.1-8b", "--variant", "nope",
                          "--dry-run", "--results-dir", str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unknown variant" in bad.stderr


def test_an_interrupted_trainer_is_stopped_with_every_process_it_started(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (or a notebook cell's timeout) while a run streams its log stops the trainer's whole
    process group, workers included, and still raises: nothing keeps training in the background."""
    import os
    import time

    from prove.train.launch import _run

    script = ("import subprocess, sys, time\n"
              "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "print(f'step:1 worker={w.pid}', flush=True)\n"
              "time.sleep(120)\n")
    seen: list[int] = []

    class Interrupt(io.StringIO):
        def write(self, text: str) -> int:
            if "worker=" in text:
                seen.append(int(text.split("worker=")[1].split()[0]))
                raise KeyboardInterrupt
            return super().write(text)

    monkeypatch.setattr(sys, "stdout", io.StringIO())  # no byte stream: metric lines go to `out`
    paths = RunPaths(tmp_path / "run", tmp_path / "ckpt")
    paths.run_dir.mkdir(parents=True)
    with pytest.raises(KeyboardInterrupt):
        _run([sys.executable, "-c", script], {}, paths, out=Interrupt())
    assert seen, "the trainer's step line never reached the notebook output"
    deadline = time.monotonic() + 10
    stat = Path(f"/proc/{seen[0]}/stat")
    while time.monotonic() < deadline:
        try:
            os.kill(seen[0], 0)
            if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break  # killed, not yet reaped by its new parent
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the trainer's worker {seen[0]} is still running")
    assert "step:1" in paths.log.read_text()


def test_a_trainer_that_fails_ends_its_run_though_a_process_it_left_still_holds_the_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crashed SFT run left W&B's service holding its output pipe, and the launch waited on that
    pipe until the notebook cell's 30-minute timeout (CI, stop 44). The run ends with the trainer:
    its exit code comes back and what it left behind is stopped."""
    import os
    import time

    from prove.train import launch as launch_mod

    monkeypatch.setattr(launch_mod, "OUTPUT_GRACE_S", 1.0)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    script = ("import subprocess, sys\n"
              "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "print(f'Traceback: boom worker={w.pid}', flush=True)\n"
              "sys.exit(3)\n")
    paths = RunPaths(tmp_path / "run", tmp_path / "ckpt")
    paths.run_dir.mkdir(parents=True)
    out = io.StringIO()
    start = time.monotonic()
    assert launch_mod._run([sys.executable, "-c", script], {}, paths, out=out) == 3
    assert time.monotonic() - start < 60, "the run waited on the leftover process's pipe"
    worker = int(paths.log.read_text().split("worker=")[1].split()[0])
    assert "boom" in out.getvalue() and "held its output" in out.getvalue()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
            stat = Path(f"/proc/{worker}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the process the trainer left behind ({worker}) is still running")


def test_sft_rows_kept_longer_than_verls_sft_max_length_are_refused_when_loaded() -> None:
    """data.max_sft_tokens above the sft section's data.max_length made VERL's SFT dataset raise
    on its first batch (truncation: error); the config says so when it is loaded instead."""
    import dataclasses

    cfg = load_train_config("smollm2-135m")
    assert cfg.data.max_sft_tokens <= int(cfg.sft["data.max_length"])
    with pytest.raises(ValueError, match=r"max_sft_tokens=4096 keeps SFT rows longer than sft data.max_length=2048"):
        dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, max_sft_tokens=4096))
    for name in paper_configs():  # the paper's configs keep every row; VERL truncates at 16384
        assert load_train_config(name).data.max_sft_tokens is None


def test_an_sft_validation_file_shorter_than_one_batch_is_not_validated_on(tmp_path: Path) -> None:
    """VERL's SFT trainer drops a partial validation batch: one val row at batch 2 validated on
    nothing and logged val/loss NaN (the rehearsal's SFT did). Such a run gets no validation, and
    says why; a file of one batch or more is validated on at the config's frequency."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.parquet as pq

    cfg = load_train_config("qwen3-4b")
    val = tmp_path / "sft_val.parquet"
    cfg = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, sft_val=str(val)))
    batch, sft = int(cfg.sft["data.train_batch_size"]), cfg.variant("sft")
    paths = RunPaths.for_run(cfg, sft, tmp_path, tmp_path / "checkpoints")

    def args(rows: int) -> dict[str, str]:
        pq.write_table(pa.table({"messages": ["[]"] * rows}), val)
        return dict(a.split("=", 1) for a in sft_overrides(cfg, sft, paths))

    short = args(batch - 1)
    assert (short["data.val_files"], short["trainer.test_freq"]) == ("null", "-1")
    out = io.StringIO()
    assert launch(cfg, "sft", dry_run=True, results_dir=tmp_path, out=out) == 0
    assert f"no SFT validation: {val} holds {batch - 1} row(s), fewer than one batch (data.train_batch_size={batch})" \
        in out.getvalue()
    enough = args(batch)
    assert enough["data.val_files"] == str(val)
    assert enough["trainer.test_freq"] == hydra_value(cfg.sft["trainer.test_freq"]) != "-1"
    out = io.StringIO()
    assert launch(cfg, "sft", dry_run=True, results_dir=tmp_path, out=out) == 0
    assert "no SFT validation" not in out.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("name", [p.stem for p in sorted(CONFIG_DIR.glob("*.yaml"))
                                  if "name" in (yaml.safe_load(p.read_text()) or {})])
def test_every_config_bounds_the_rollout_context_to_prompt_plus_response(name: str, tmp_path: Path) -> None:
    """VERL leaves rollout.max_model_len null: vLLM then sizes its KV cache for the model's whole
    context window (Granite 4.1's is very long). Every config composes with a bound that still
    holds a full prompt and response."""
    need_verl()
    from prove.train.compose import check_variant

    rollout = check_variant(load_train_config(name), "default", tmp_path).actor_rollout_ref.rollout
    assert rollout.max_model_len is not None
    assert rollout.max_model_len >= rollout.prompt_length + rollout.response_length


def test_a_max_model_len_below_prompt_plus_response_is_refused() -> None:
    import dataclasses

    from prove.train.launch import MAX_MODEL_LEN_KEY, max_model_len

    cfg = load_train_config("granite-4.1-8b")
    assert max_model_len(cfg) == 8192 + 8192  # grpo.yaml's data.max_prompt/response_length
    small = dataclasses.replace(cfg, verl={**cfg.verl, MAX_MODEL_LEN_KEY: 4096})
    with pytest.raises(ValueError, match="max_model_len=4096 is below prompt_length 8192 \\+ response_length 8192"):
        max_model_len(small)
