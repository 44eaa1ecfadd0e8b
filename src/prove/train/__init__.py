"""GRPO with VERL against live PROVE servers: rows, tool/agent-loop integration, configs, launcher.

Use: ``prove train configs/train/qwen3-4b.yaml [--variant lr_high] [--dry-run]`` (``prove.train.cli``).
The rows it trains on follow ``prove.rows`` (the contract synthesis writes and training reads).
Light modules (no VERL import): ``schema``, ``config``, ``launch``, ``tool_config``,
``chat_template``, ``report``, ``session``.
VERL-side (the ``train`` extra): ``tool.ProveTool``, ``agent_loop.ProveAgentLoop``
(``prove_tool_agent``), ``dataset.ProveRLDataset``, ``sft_dataset.ProveSFTDataset``, ``compose``
(configs against VERL's Hydra), ``rollout`` (VERL's agent loop on CPU with a scripted policy),
``smoke`` (those checks on a few rows of a synthesis export). The reward hook is
``prove.reward.verl.compute_score``.

The chain (``matrix.run_matrix`` runs a profile's ``train:`` section, a ``prove.profiles.ChainPlan``): ``data`` prepares a config's files from the synthesis export,
``launch`` runs VERL's SFT then GRPO trainer and records each run's HF model folder; ``cpu`` is the
CPU stand-in for the GPU parts (``configs/train/smollm2-135m.yaml``), ``hf_generate`` its rollout
server; ``preflight`` checks attention and chat template before any GPU work.
"""

from prove.train.config import TrainConfig, Variant, load_train_config, paper_configs
from prove.train.schema import normalise_tool_schema

__all__ = ["TrainConfig", "Variant", "load_train_config", "normalise_tool_schema", "paper_configs"]
