"""The `prove` command line: `prove serve`, `prove serve --stdio NAME`, `prove tools`.

Run `prove --help` (or `python -m prove --help`) for every subcommand and flag.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

__all__ = ["main"]


def _serve(args: argparse.Namespace) -> int:
    from prove.env.hub import Hub

    hub = Hub(max_episodes=args.max_episodes, idle_seconds=args.idle_seconds)
    if args.stdio:
        from prove.env.transports import run_stdio

        if args.stdio not in hub.registry.servers:
            print(f"unknown server {args.stdio!r}; known: {', '.join(hub.registry.servers)}",
                  file=sys.stderr)
            return 2
        run_stdio(args.stdio, hub)
        return 0
    if args.workers > 1:
        from prove.env.launch import supervise_workers

        passthrough = ["--max-episodes", str(args.max_episodes), "--idle-seconds",
                       str(args.idle_seconds), "--log-level", args.log_level]
        if args.servers:
            passthrough += ["--servers", args.servers]
        return supervise_workers(args.workers, args.host, args.port, passthrough)
    import uvicorn

    from prove.env.transports import build_http_app

    servers = args.servers.split(",") if args.servers else None
    try:
        app = build_http_app(hub, servers)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    print(f"PROVE: {len(servers or hub.registry.servers)} servers at "
          f"http://{args.host}:{args.port}/<server>/mcp", file=sys.stderr, flush=True)
    # Long keep-alive: RL clients hold pooled connections across slow steps; a server-side close
    # racing a reused connection would surface as a spurious transport error.
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                timeout_keep_alive=120, backlog=4096)
    return 0


def _tools(args: argparse.Namespace) -> int:
    from prove.env.registry import load_registry

    reg = load_registry()
    rows = reg.inventory()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{len(reg.servers)} servers, {len(reg.tools)} tools")
    by_family = Counter(r["family"] for r in rows)
    for fam, n in sorted(by_family.items()):
        servers = sorted({r["server"] for r in rows if r["family"] == fam})
        print(f"  {fam:<13} {n:>4} tools  ({', '.join(servers)})")
    print()
    for name, spec in reg.servers.items():
        writes = sum(t.write for t in spec.tools)
        print(f"{name:<14} {spec.family:<13} {len(spec.tools):>3} tools "
              f"({len(spec.tools) - writes} read, {writes} write)")
        if args.verbose:
            for t in spec.tools:
                print(f"    {'W' if t.write else 'R'} {t.name}({', '.join(t.params)})")
    return 0


# Subcommands that own their flags: `prove graph --help` shows theirs.
DELEGATED = {
    "graph": ("prove.graph.build", "build the tool dependency graph (schema or LLM classifier)"),
    "synth": ("prove.synth.cli", "synthesize grounded conversations, replay-validate, export JSONL/parquet"),
    "train": ("prove.train.cli", "launch (or --dry-run print) a VERL GRPO/SFT run from configs/train"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prove", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the MCP servers (streamable HTTP, or stdio for one)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default: loopback only)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    serve.add_argument("--workers", type=int, default=1,
                       help="N independent processes on ports PORT..PORT+N-1; clients route an "
                            "episode to one by a stable hash of its id")
    serve.add_argument("--servers", default="", help="comma-separated subset (default: all)")
    serve.add_argument("--stdio", metavar="NAME", default="", help="serve one server over stdio")
    serve.add_argument("--max-episodes", type=int, default=200_000,
                       help="open-episode cap; least recently used are evicted beyond it")
    serve.add_argument("--idle-seconds", type=float, default=1800.0,
                       help="episodes idle this long expire")
    serve.add_argument("--log-level", default="warning", help="uvicorn log level")
    serve.set_defaults(fn=_serve)

    tools = sub.add_parser("tools", help="print the tool inventory")
    tools.add_argument("--json", action="store_true", help="one JSON row per tool")
    tools.add_argument("-v", "--verbose", action="store_true", help="list every tool")
    tools.set_defaults(fn=_tools)
    for name, (_, help_text) in DELEGATED.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        import importlib

        result = importlib.import_module(DELEGATED[argv[0]][0]).main(argv[1:])
        return int(result or 0)
    args = build_parser().parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    raise SystemExit(main())
