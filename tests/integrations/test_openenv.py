"""The OpenEnv adapter (``prove.integrations.openenv``) through OpenEnv's own server and client, and TRL's
``GRPOTrainer`` consuming it through ``rollout_func``, against live `prove serve` episodes.

    .venv/bin/python -m pytest tests/integrations/test_openenv.py -q -s     # -s: the side-by-side lines
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv", reason="the openenv extra (openenv-core) is not installed")

from prove.env.launch import EnvServer  # noqa: E402
from prove.integrations.openenv import (  # noqa: E402
    OpenEnvServer,
    ProveAction,
    ProveEnv,
    make_rollout_func,
    openai_model_step,
    play,
    reward_from_env,
    scripted_model_step,
    trl_dataset,
)
from prove.integrations.turn import TurnRow  # noqa: E402
from prove.reward import outcome_of, score_turn  # noqa: E402


def _prove_reward(row: TurnRow, calls: list[dict], effect: str, reward: str) -> dict:
    """prove.reward on a call log and an episode's effect, computed here, apart from the adapter."""
    outcome = outcome_of(effect, row.expected_effect) if row.expected_effect else None
    return score_turn(calls, row.ground_truth, list(row.tools), reward, outcome)


@pytest.fixture(scope="module")
def rows(writing_row: dict[str, Any]) -> dict[str, Any]:
    """A row whose ground truth writes to the records (its effect differs from the untouched
    episode's), as a raw row and a TurnRow."""
    return {"raw": writing_row, "row": TurnRow.from_row(writing_row)}


@pytest.fixture(scope="module")
def server(rows_parquet: Path, env_server: EnvServer) -> Iterator[OpenEnvServer]:
    """The command a user runs: python -m prove.integrations.openenv --rows R --env-url U."""
    with OpenEnvServer(rows_parquet, [env_server.url]) as srv:
        yield srv


def test_a_scripted_ground_truth_episode_through_openenv_scores_one_as_prove_reward(
        rows: dict, server: OpenEnvServer) -> None:
    row: TurnRow = rows["row"]
    with ProveEnv(base_url=server.url).sync() as env:
        rollout = play(env, row.id, scripted_model_step(row.ground_truth["calls"]))
        with pytest.raises(RuntimeError, match="has ended"):
            env.step(ProveAction(tool_name=row.tool_names[0]))
        with pytest.raises(RuntimeError, match="unknown row 'no-such-row:0'"):
            env.reset(row="no-such-row:0")
        with pytest.raises(RuntimeError, match=f"opens its episode at seed {row.spec.seed}"):
            env.reset(row=row.id, seed=row.spec.seed + 1)
    final = rollout.final
    assert rollout.messages[: rollout.prompt_len] == row.chat()
    assert [c["name"] for c in final.calls] == [c["name"] for c in row.ground_truth["calls"]]
    assert all(c["ok"] for c in final.calls) and final.effect == row.expected_effect
    expected = _prove_reward(row, final.calls, final.effect, "prove")
    assert final.done and final.reward == pytest.approx(1.0) == expected["score"]
    assert final.scores == pytest.approx({k: float(v) for k, v in expected.items()})
    print(f"\n{row.id} scripted: {len(final.calls)} calls, OpenEnv reward {final.reward:.4f}, "
          f"PROVE {expected['score']:.4f}")


def test_two_rollouts_of_one_row_never_share_state(rows: dict, server: OpenEnvServer) -> None:
    row: TurnRow = rows["row"]
    with ProveEnv(base_url=server.url).sync() as a, ProveEnv(base_url=server.url).sync() as b:
        a.reset(row=row.id, reward="outcome")
        b.reset(row=row.id, reward="outcome")  # open together: b's episode exists while a writes
        for call in row.ground_truth["calls"]:
            assert a.step(ProveAction(tool_name=call["name"], arguments=call["arguments"])).observation.ok
        ids = a.state().episode_id, b.state().episode_id
        done_b = b.step(ProveAction()).observation
        done_a = a.step(ProveAction()).observation
    assert ids[0] != ids[1]
    assert done_a.effect == row.expected_effect and done_b.effect != done_a.effect  # b never saw a's writes
    assert done_a.reward == pytest.approx(1.0) and done_a.scores["outcome"] == 1.0
    assert done_b.reward < 1.0 and done_b.scores["outcome"] == 0.0 and done_b.calls == []
    for done in (done_a, done_b):
        assert done.reward == pytest.approx(_prove_reward(row, done.calls, done.effect, "outcome")["score"])


def test_openenv_yaml_names_the_app_and_classes_openenv_loads(rows_parquet: Path, env_server: EnvServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from openenv.auto._discovery import _load_manifest_from_package
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server.types import Action, Observation

    manifest = _load_manifest_from_package("prove", "prove.integrations")  # OpenEnv's manifest reader
    assert manifest is not None and manifest["spec_version"] == 1 and manifest["runtime"] == "fastapi"
    module_name, attr = manifest["app"].split(":")
    module = importlib.import_module(module_name)
    assert issubclass(getattr(module, manifest["action"]), Action)
    assert issubclass(getattr(module, manifest["observation"]), Observation)
    client_module, client = manifest["client"].split(":")
    assert issubclass(getattr(importlib.import_module(client_module), client), EnvClient)
    with pytest.raises(RuntimeError, match="PROVE_OPENENV_ROWS"):
        getattr(module, attr)
    monkeypatch.setenv("PROVE_OPENENV_ROWS", str(rows_parquet))
    monkeypatch.setenv("PROVE_ENV_URLS", env_server.url)
    try:
        app = getattr(module, attr)
        assert {"/ws", "/health", "/schema"} <= {getattr(r, "path", "") for r in app.routes}
    finally:
        module.__dict__.pop("app", None)


def _trainer(model_dir: Path, rows: dict, rollout_func: Any, reward_funcs: list, tmp: Path) -> Any:
    from prove.train.trl_engine import hide_unsupported_vllm

    hide_unsupported_vllm()
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    args = GRPOConfig(output_dir=str(tmp), per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=64, use_cpu=True, report_to=[], beta=0.0, logging_steps=1,
                      save_strategy="no", max_steps=1, remove_unused_columns=False)
    trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(model_dir),
                          processing_class=AutoTokenizer.from_pretrained(model_dir), args=args,
                          reward_funcs=reward_funcs, train_dataset=trl_dataset([rows["raw"]]),
                          rollout_func=rollout_func)
    trainer.model.train()
    return trainer


def test_trl_grpo_rollout_func_reports_openenv_reward_equal_to_prove_reward(
        rows: dict, server: OpenEnvServer, tmp_path: Path) -> None:
    from prove.reward import make_trl_reward
    from prove.train.chat_template import policy_model_dir

    row: TurnRow = rows["row"]
    seen: dict[str, list] = {}

    def recorded(fn: Any, name: str) -> Any:
        def column(completions: list, **kwargs: Any) -> list[float]:
            seen[name] = fn(completions=completions, **kwargs)
            seen.setdefault("tool_calls", kwargs["tool_calls"])
            return seen[name]
        column.__name__ = name
        return column

    rollout = make_rollout_func(server.url, scripted_model_step(row.ground_truth["calls"]))
    trainer = _trainer(policy_model_dir(), rows, rollout,
                       [recorded(reward_from_env, "env_reward"), recorded(make_trl_reward("prove"), "prove")],
                       tmp_path)
    batch = [trainer.train_dataset[0]] * 2  # TRL's sampler repeats a prompt once per generation
    out = trainer._generate_and_score_completions(batch)  # what GRPOTrainer's training step runs
    assert seen["env_reward"] == pytest.approx([1.0, 1.0]) and seen["prove"] == pytest.approx(seen["env_reward"])
    logged = trainer._metrics["train"]
    assert logged["rewards/env_reward/mean"][-1] == pytest.approx(logged["rewards/prove/mean"][-1]) == 1.0
    assert logged["completions/clipped_ratio"][-1] == 0.0  # each rollout ends at the model's EOS
    for log in seen["tool_calls"]:  # each rollout's own episode ran every ground-truth call
        assert [c["name"] for c in log] == [c["name"] for c in row.ground_truth["calls"]] and all(c["ok"] for c in log)
    trained, generated = int(out["tool_mask"].sum()), int(out["completion_mask"].sum())  # TRL's env_mask
    assert 0 < trained < generated and int(out["num_items_in_batch"]) == trained  # tool results out of the loss
    print(f"\n{row.id}:trl scripted: 2 rollouts, TRL env_reward {seen['env_reward']}, PROVE {seen['prove']}")


def test_smollm2_drives_an_episode_and_openenv_reports_prove_reward(
        rows: dict, server: OpenEnvServer, smollm2: Any) -> None:
    row: TurnRow = rows["row"]
    step = openai_model_step(smollm2.base_url, smollm2.model, api_key=smollm2.api_key, max_tokens=64)
    with ProveEnv(base_url=server.url).sync() as env:
        rollout = play(env, row.id, step, max_turns=2)
    final = rollout.final
    expected = _prove_reward(row, final.calls, final.effect, "prove")
    assert final.done and final.reward == pytest.approx(expected["score"])
    assert rollout.messages[rollout.prompt_len]["role"] == "assistant"  # the model wrote the next message
    n_called = sum(len(m.get("tool_calls") or []) for m in rollout.messages[rollout.prompt_len:])
    assert len(final.calls) == n_called  # every call it wrote was stepped and logged, none else
    print(f"\n{row.id} smollm2: {len(final.calls)} calls, OpenEnv reward {final.reward:.4f}, "
          f"PROVE {expected['score']:.4f} ({json.dumps([c['name'] for c in final.calls])})")
