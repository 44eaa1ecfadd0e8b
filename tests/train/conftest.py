"""Fixtures for the training tests: parquet files of the synthesis fixture's rows (tests/conftest.py:
``synth_export``, ``synth_examples``, ``synth_rows``), the CPU tokenizer, VERL pieces.

Tests that need VERL call ``train_helpers.need_verl()`` (a clear skip without the train extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from train_helpers import need_verl

from prove.env.launch import EnvServer


@pytest.fixture(scope="session")
def rl_parquet(synth_rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthesis fixture's rows (both splits) in one RL parquet file."""
    from prove.rows import write_rows

    return write_rows(synth_rows, tmp_path_factory.mktemp("rows") / "rl_train.parquet")


@pytest.fixture(scope="session")
def sft_parquet(synth_examples: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One SFT row per example of the synthesis fixture."""
    from prove.rows import sft_row, write_rows

    return write_rows([sft_row(e) for e in synth_examples],
                      tmp_path_factory.mktemp("rows") / "sft_train.parquet")


@pytest.fixture(scope="session")
def tokenizer() -> Any:
    from prove.llm.weights import llm_extra_available

    ok, why = llm_extra_available()
    if not ok:
        pytest.skip(f"SmolLM2 tokenizer unavailable: {why}")
    from prove.train.chat_template import load_tokenizer

    return load_tokenizer()


@pytest.fixture(scope="session")
def live_env(env_server: EnvServer) -> EnvServer:
    """`prove serve` with every server (the session's shared one)."""
    return env_server


@pytest.fixture(scope="session")
def tool_yaml(live_env: EnvServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from prove.train.tool_config import write_tool_config

    return write_tool_config(tmp_path_factory.mktemp("tools") / "tools.yaml", [live_env.url], timeout=20)


@pytest.fixture(scope="session")
def verl_tools(tool_yaml: Path) -> list[Any]:
    need_verl()
    from verl.tools.tool_registry import load_all_tools

    return load_all_tools(str(tool_yaml), None)


@pytest.fixture(scope="session")
def policy(tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Qwen3-style model folder without weights (config.json + the CPU tokenizer): what VERL's
    workers load as the policy, so they pick Qwen3's continuous-token builder."""
    need_verl()
    from prove.train.rollout import policy_dir

    return policy_dir(tmp_path_factory.mktemp("policy") / "qwen3-tiny", tokenizer, "qwen3")


@pytest.fixture(scope="session")
def verl_cfg(tool_yaml: Path, policy: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The composed qwen3-4b paper config (VERL's Hydra), tool config pointed at the live env and
    the model at the Qwen3-style ``policy`` folder."""
    need_verl()
    from prove.train.compose import check_grpo
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths, grpo_overrides

    cfg = load_train_config("qwen3-4b")
    variant = cfg.variant("default")
    paths = RunPaths.for_run(cfg, variant, tmp_path_factory.mktemp("results"))
    key = "actor_rollout_ref.rollout.multi_turn.tool_config_path="
    model = "actor_rollout_ref.model.path="
    overrides = [o for o in grpo_overrides(cfg, variant, paths) if not o.startswith((key, model))]
    return check_grpo([*overrides, key + str(tool_yaml), model + str(policy)])
