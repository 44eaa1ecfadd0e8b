"""`prove train CONFIG [--variant NAME] [--dry-run]`: launch (or print) a paper training run.

    prove train configs/train/qwen3-4b.yaml --dry-run             # the exact VERL command
    prove train qwen3-4b --variant lr_high                        # serve, check, train
    prove train qwen3-4b --list                                   # the config's variants
    prove train smollm2-135m --variant sft                        # CPU: SFT of SmolLM2-135M
    prove train smollm2-135m                                      # CPU: GRPO from that SFT model
    prove train smollm2-135m --engine trl                         # the same GRPO with TRL's GRPOTrainer
    prove train qwen3-4b --variant beta0 --lr-key pick            # at the sweep point picked on validation
    prove train qwen3-4b --thinking --keep-shards                 # Qwen3 thinking; keep optimizer shards
    python -m prove.train.cli qwen3-4b --dry-run                  # same, without the `prove` hook

Wire into `prove`'s CLI with ``prove.train.cli.add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from prove.train.config import LR_KEYS, PICK_LR

__all__ = ["add_parser", "main", "PICK_LR", "build_parser"]


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("config", help="a training config (path, or a name in configs/train/: "
                                       "qwen3-4b, qwen3-8b, qwen2.5-7b, granite-4.1-8b)")
    parser.add_argument("--variant", default="default",
                        help="default | lr_low | lr_mid | lr_high | a reward ablation "
                             "(no_validity, beta0, ...) | sft  (see --list)")
    parser.add_argument("--dry-run", action="store_true",
                        help="write the tool config and print the command; start nothing")
    parser.add_argument("--list", action="store_true", help="print the config's variants and exit")
    parser.add_argument("--init", default=None,
                        help="what GRPO starts from: base, sft (this config's SFT run) or an HF "
                             "model folder (default: the config's grpo_init)")
    parser.add_argument("--engine", default="verl", choices=("verl", "trl"),
                        help="GRPO trainer: verl (the paper's, default) or trl (TRL's GRPOTrainer over the "
                             "same environments and reward: one process, one device); SFT is VERL's either way")
    parser.add_argument("--lr-key", default=None, choices=(*LR_KEYS, PICK_LR),
                        help="run the variant at this point of the config's learning-rate sweep "
                             f"(default: the config's default_lr); {PICK_LR}: the point whose finished "
                             "sweep run has the best final validation reward, picked when the run starts")
    parser.add_argument("--thinking", action=argparse.BooleanOptionalAction, default=None,
                        help="the policy's thinking mode in every chat template training renders "
                             "(default: the config's thinking, false); an error for a model family "
                             "without a thinking mode")
    parser.add_argument("--keep-shards", action="store_true",
                        help="keep every saved step's optimizer and model shards after the run "
                             "(default: delete them once the run's HF model folder is recorded)")
    parser.add_argument("--steps", type=int, default=None,
                        help="training steps for this run (default: the config's)")
    parser.add_argument("--results-dir", default="results",
                        help="run files go to RESULTS_DIR/train/<model>-<variant>/")
    parser.add_argument("--checkpoints-dir", default="checkpoints",
                        help="VERL checkpoints go to CHECKPOINTS_DIR/<project>/<model>-<variant>/")
    parser.set_defaults(fn=_run)
    return parser


def _run(args: argparse.Namespace) -> int:
    from prove.train.config import load_train_config
    from prove.train.launch import launch

    try:
        cfg = load_train_config(args.config)
        if args.list:
            for name, v in cfg.variants().items():
                print(f"{name:<14} {v.trainer:<5} lr={v.lr:<8g} reward={v.reward:<14} {v.description}")
            return 0
        lr_key = args.lr_key
        if lr_key == PICK_LR:
            lr_key = _picked(cfg, args)
        return launch(cfg, args.variant, dry_run=args.dry_run, results_dir=args.results_dir,
                      checkpoints_dir=args.checkpoints_dir, init=args.init, steps=args.steps,
                      engine=args.engine, lr_key=lr_key, thinking=args.thinking,
                      keep_shards=args.keep_shards)
    except (FileNotFoundError, ValueError) as exc:
        print(f"prove train: {exc}", file=sys.stderr)
        return 2


def _picked(cfg: Any, args: argparse.Namespace) -> str:
    """``--lr-key pick``: the sweep point with the best final validation reward (a dry run before
    the sweep has finished shows the config's default_lr and says so)."""
    from prove.train.matrix import pick_lr

    key, values = pick_lr(cfg.with_results(args.results_dir), args.results_dir, args.checkpoints_dir)
    if key is not None:
        print(f"# learning rate {key} picked on validation ({values})")
        return key
    if args.dry_run:
        print(f"# --lr-key {PICK_LR}: the sweep has not finished ({values}); showing {cfg.default_lr}")
        return cfg.default_lr
    raise ValueError(f"--lr-key {PICK_LR}: no learning rate to pick, the sweep runs' final validation "
                     f"rewards are {values} (None: not finished or no validation logged); run "
                     f"{', '.join(LR_KEYS)} first (with trainer.test_freq > 0)")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `train` subcommand to an argparse subparsers object (sets ``fn``)."""
    return _configure(subparsers.add_parser(
        "train", help="launch (or --dry-run print) a GRPO/SFT run with VERL against live servers",
        description=__doc__.splitlines()[0]))


def build_parser(**kwargs: Any) -> argparse.ArgumentParser:
    """The ``prove train`` argument parser (``kwargs`` go to ``argparse.ArgumentParser``)."""
    return _configure(argparse.ArgumentParser(prog="prove train", description=__doc__, **kwargs))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    raise SystemExit(main())
