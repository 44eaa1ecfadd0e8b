"""`prove synth`: generate the grounded synthetic data set (JSONL, VERL parquet, dataset card).

    python -m prove.synth.cli --profile smoke --out results/synth --workers 2
    python -m prove.synth.cli --profile paper --teacher programmatic --workers 2   # 13,517 examples

Wire into the main CLI with `prove.synth.cli.add_parser(subparsers)`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "main", "run"]


def _sizes(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        if part.strip():
            key, _, value = part.partition("=")
            out[key.strip()] = int(value)
    return out


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--profile", default="smoke", help="configs/profiles/<name>.yaml (default smoke)")
    parser.add_argument("--out", default="results/synth", help="output folder (default results/synth)")
    parser.add_argument("--seed", type=int, default=None, help="global seed (default 0)")
    parser.add_argument("--sizes", type=_sizes, default=None,
                        help="kept examples per kind, e.g. multi_turn=200,clarification=30,abstention=30")
    parser.add_argument("--paper-sizes", action="store_true",
                        help="10,895 multi-turn + 1,500 clarification + 1,122 abstention")
    parser.add_argument("--teacher", choices=("programmatic", "openai"), default=None,
                        help="programmatic (offline default) or an OpenAI-compatible endpoint")
    parser.add_argument("--base-url", default=None,
                        help="a running OpenAI-compatible teacher (…/v1); default: start the profile's teacher")
    parser.add_argument("--model", default=None, help="model id served at --base-url")
    parser.add_argument("--n-chains", type=int, default=None, help="chains sampled from the graph")
    parser.add_argument("--n-worlds", type=int, default=None, help="distinct world seeds")
    parser.add_argument("--workers", type=int, default=1, help="processes (output is identical)")
    parser.add_argument("--servers", default="", help="comma-separated subset of servers")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(fn=run)
    return parser


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register `synth` on an argparse subparsers object (the lead wires it into `prove`)."""
    sub = subparsers.add_parser("synth", help="generate the synthetic training data (03_synthesis)")
    return configure(sub)


def run(args: argparse.Namespace) -> int:
    """`prove synth`; a request the servers cannot meet (`SynthesisInfeasible`, said before the
    first attempt) or a kind stopped at its attempt cap (`SynthesisStalled`) is one line on stderr
    and exit status 2, not a traceback."""
    from prove.synth.pipeline import SynthesisInfeasible, SynthesisStalled

    try:
        return _run(args)
    except (SynthesisInfeasible, SynthesisStalled) as exc:
        print(f"prove synth: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from prove.synth.pipeline import PAPER_SIZES, SynthConfig, synthesize

    overrides: dict[str, Any] = {"workers": args.workers}
    for key in ("seed", "teacher", "base_url", "model", "n_chains", "n_worlds", "sizes"):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = value
    if args.paper_sizes:
        overrides["sizes"] = dict(PAPER_SIZES)
    if args.servers:
        overrides["servers"] = tuple(s.strip() for s in args.servers.split(",") if s.strip())
    cfg = SynthConfig.from_profile(args.profile, **overrides)
    progress = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if cfg.teacher == "openai":  # --base-url/--model, else the profile's teacher started for the run
        from prove.llm.teacher import teacher_endpoint
        from prove.profiles import load_profile

        prof = load_profile(args.profile)
        with teacher_endpoint(prof.teacher, cfg.base_url or None, cfg.model or None,
                              thinking=prof.thinking) as llm:
            cfg.base_url, cfg.model = llm.base_url, llm.model
            cfg.chat_template_kwargs = dict(llm.chat_template_kwargs or {})
            result = synthesize(cfg, args.out, progress=progress)
    else:
        result = synthesize(cfg, args.out, progress=progress)
    summary = {"kept": result.kept, "funnel": result.funnel, "files": result.files,
               "timings_s": {k: round(v, 2) for k, v in result.timings.items()},
               "examples_per_s": {k: round(v, 1) for k, v in result.throughput().items()}}
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
    else:
        print(f"kept {sum(result.kept.values())} examples in {result.timings['wall']:.1f}s -> {args.out}")
        for kind, f in result.funnel.items():
            print(f"  {kind:<14} attempted {f['attempted']:>6}  kept {f['kept']:>6}  rejected {f['rejected']}")
        for name, digest in sorted(result.files.items()):
            print(f"  {digest}  {name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = configure(argparse.ArgumentParser(prog="prove synth", description=__doc__,
                                               formatter_class=argparse.RawDescriptionHelpFormatter))
    args = parser.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    raise SystemExit(main())
