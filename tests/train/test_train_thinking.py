"""The policy's thinking mode in training: one setting (the config's, the profile's through the
matrix, ``prove train --thinking/--no-thinking``) in every chat template training renders."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from train_helpers import need_verl

from prove.llm.families import ThinkingError
from prove.profiles import ChainPlan
from prove.train.config import load_train_config, train_configs
from prove.train.launch import RunPaths, grpo_overrides, launch, sft_overrides

KWARGS = "data.apply_chat_template_kwargs"


def test_qwen3_trains_without_thinking_by_default_in_grpo_and_sft(tmp_path: Path) -> None:
    cfg = load_train_config("qwen3-4b")
    assert cfg.thinking is False and cfg.chat_template_kwargs() == {"enable_thinking": False}
    paths = RunPaths.for_run(cfg, cfg.variant("default"), tmp_path)
    assert f"+{KWARGS}.enable_thinking=false" in grpo_overrides(cfg, cfg.variant("default"), paths)
    assert f"+{KWARGS}.enable_thinking=false" in sft_overrides(cfg, cfg.variant("sft"), paths)
    thinking = cfg.with_thinking(True)
    assert f"+{KWARGS}.enable_thinking=true" in grpo_overrides(thinking, thinking.variant("default"), paths)


@pytest.mark.slow
def test_the_switch_reaches_verls_composed_data_config_for_rl_and_sft(tmp_path: Path) -> None:
    """VERL 0.9.1 reads ``data.apply_chat_template_kwargs`` in the RL dataset, the agent loop's
    continuous-token builder (AgentLoopBase) and the multi-turn SFT dataset."""
    need_verl()
    from prove.train.compose import check_variant

    cfg = load_train_config("qwen3-8b")
    assert dict(check_variant(cfg, "default", tmp_path).data.apply_chat_template_kwargs) == {
        "enable_thinking": False}
    assert dict(check_variant(cfg, "sft", tmp_path).data.apply_chat_template_kwargs) == {
        "enable_thinking": False}


def test_families_without_a_switch_get_no_kwargs_and_refuse_thinking() -> None:
    for name in train_configs():
        cfg = load_train_config(name)
        if cfg.family != "qwen3":
            assert cfg.chat_template_kwargs() == {}
    with pytest.raises(ThinkingError, match="model family 'granite' has no thinking mode"):
        load_train_config("granite-4.1-8b").with_thinking(True)


def test_cli_flag_overrides_the_config_and_granite_thinking_stops_before_launch(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from prove.train.cli import main

    assert main(["qwen3-4b", "--thinking", "--dry-run", "--results-dir", str(tmp_path)]) == 0
    assert f"+{KWARGS}.enable_thinking=true" in capsys.readouterr().out
    assert main(["granite-4.1-8b", "--thinking", "--dry-run", "--results-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "thinking: true is set but model family 'granite' has no thinking mode" in err
    out = io.StringIO()
    assert launch(load_train_config("qwen3-4b"), dry_run=True, results_dir=tmp_path, out=out,
                  thinking=False) == 0
    assert f"+{KWARGS}.enable_thinking=false" in out.getvalue()


def test_the_matrix_passes_the_profiles_thinking_to_every_job(tmp_path: Path) -> None:
    from prove.profiles import load_profile
    from prove.train.matrix import plan_jobs

    profile = load_profile("paper")
    jobs = plan_jobs(profile.train, tmp_path, tmp_path / "ckpt", profile.thinking)
    assert jobs and all("--no-thinking" in j.command for j in jobs)
    with pytest.raises(ThinkingError, match="'granite' has no thinking mode"):
        plan_jobs(ChainPlan(configs=("qwen3-4b", "granite-4.1-8b")), tmp_path, tmp_path / "ckpt", True)


def test_sft_and_rl_data_are_measured_in_the_configs_thinking_mode() -> None:
    """prove.train.data drops rows by token budget: it renders with the same switch VERL uses."""
    need_verl()
    from test_train_boundaries import family_tokenizer

    from prove.train.data import _tokens

    tok = family_tokenizer("qwen3")
    messages = [{"role": "user", "content": "hi"}]
    off = _tokens(tok, messages, [], True, load_train_config("qwen3-4b").chat_template_kwargs())
    assert off > _tokens(tok, messages, [], True, {"enable_thinking": True})  # + the empty think block
