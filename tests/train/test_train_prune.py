"""Checkpoint pruning after a finished run (prove.train.launch.prune_checkpoints): the shards go,
the HF model folder that model.json names stays loadable."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from prove.train.launch import prune_checkpoints


def _checkpoint_tree(root: Path, steps: tuple[int, ...] = (50, 100), ranks: int = 2) -> Path:
    """A GRPO run's checkpoint folder as VERL 0.9.1's FSDP checkpoint manager leaves it."""
    for step in steps:
        actor = root / f"global_step_{step}" / "actor"
        hf = actor / "huggingface"
        hf.mkdir(parents=True)
        for rank in range(ranks):
            for kind in ("model", "optim", "extra_state"):
                (actor / f"{kind}_world_size_{ranks}_rank_{rank}.pt").write_bytes(b"x" * 1000)
        (actor / "fsdp_config.json").write_text("{}")
        (root / f"global_step_{step}" / "data.pt").write_bytes(b"d")
        (hf / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
        (hf / "tokenizer_config.json").write_text("{}")
        save_file({"lm_head.weight": np.ones((2, 2), dtype=np.float32)}, str(hf / "model.safetensors"))
    (root / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))
    return root


def test_a_finished_run_keeps_its_hf_model_and_loses_every_shard(tmp_path: Path) -> None:
    root = _checkpoint_tree(tmp_path / "ckpt" / "prove" / "qwen3-4b-default")
    kept = root / "global_step_100" / "actor" / "huggingface"
    model_json = tmp_path / "model.json"
    model_json.write_text(json.dumps({"hf_model": str(kept), "global_step": 100}))
    freed = prune_checkpoints(root, model_json)
    assert freed == 2 * 2 * 3 * 1000  # two steps x two ranks x (model, optim, extra_state)
    assert not list(root.rglob("*_world_size_*"))
    assert (kept / "config.json").is_file() and (kept / "model.safetensors").is_file()
    assert (kept / "tokenizer_config.json").is_file()
    assert (root / "global_step_50" / "actor" / "huggingface" / "model.safetensors").is_file()
    assert not (root / "latest_checkpointed_iteration.txt").exists()  # nothing left to resume from
    assert "--keep-shards" in (root / "PRUNED.txt").read_text()
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(kept).model_type == "qwen3"  # what evaluation loads
    assert load_file(str(kept / "model.safetensors"))["lm_head.weight"].sum() == 4


def test_nothing_is_pruned_when_the_kept_folder_is_no_model(tmp_path: Path) -> None:
    root = _checkpoint_tree(tmp_path / "ckpt")
    kept = root / "global_step_100" / "actor" / "huggingface"
    (kept / "model.safetensors").unlink()  # config and tokenizer only: hf_model was not saved
    model_json = tmp_path / "model.json"
    model_json.write_text(json.dumps({"hf_model": str(kept)}))
    with pytest.raises(FileNotFoundError, match="no config.json or no weights: nothing pruned"):
        prune_checkpoints(root, model_json)
    assert len(list(root.rglob("*_world_size_*"))) == 12
    model_json.write_text(json.dumps({"hf_model": str(tmp_path / "elsewhere")}))
    with pytest.raises(FileNotFoundError, match="not under"):
        prune_checkpoints(root, model_json)


def test_launch_prunes_after_success_unless_shards_are_kept(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`prove train` prunes once model.json is written; ``--keep-shards`` keeps everything."""
    import io

    from prove.train import launch as launch_mod
    from prove.train.cli import build_parser
    from prove.train.config import load_train_config

    assert build_parser().parse_args(["smollm2-135m", "--keep-shards"]).keep_shards is True
    cfg = load_train_config("smollm2-135m")
    for keep in (False, True):
        ckpt = tmp_path / f"keep{keep}"
        paths = launch_mod.RunPaths.for_run(cfg, cfg.variant("sft"), tmp_path / "results", ckpt)
        _checkpoint_tree(paths.checkpoints, steps=(4,), ranks=1)
        monkeypatch.setattr(launch_mod, "check_device", lambda cfg: None)
        monkeypatch.setattr(launch_mod, "init_model", lambda *a, **k: "base-model")
        monkeypatch.setattr("prove.train.data.ensure_prepared", lambda *a, **k: None)
        monkeypatch.setattr(launch_mod, "_run", lambda *a, **k: 0)
        monkeypatch.setattr(launch_mod, "_push_identity", lambda *a, **k: None)
        out = io.StringIO()
        assert launch_mod.launch(cfg, "sft", results_dir=tmp_path / "results", checkpoints_dir=ckpt,
                                 out=out, keep_shards=keep) == 0
        assert json.loads(paths.model.read_text())["global_step"] == 4
        assert json.loads(paths.model.read_text())["thinking"] is False
        assert bool(list(paths.checkpoints.rglob("*_world_size_*"))) == keep
        assert ("checkpoints pruned" in out.getvalue()) != keep
