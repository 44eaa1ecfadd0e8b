"""The `prove` command line: `prove serve`, `prove serve --stdio NAME`, `prove tools`, `prove new-server`, `prove runs`.

Run `prove --help` (or `python -m prove --help`) for every subcommand and flag.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

__all__ = ["main"]


TOKEN_ENV = "PROVE_ENV_TOKEN"  # the same name prove.env.launch and prove.env.client read
MIN_TOKEN = 16


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name other than localhost may resolve anywhere
        return False


def _serve(args: argparse.Namespace) -> int:
    import os

    from prove.env.hub import Hub, parse_bytes

    try:
        max_memory = parse_bytes(args.max_memory, "--max-memory") if args.max_memory else None
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    for flag, value, low in (("--max-prefix", args.max_prefix, 0), ("--max-body", args.max_body, 1),
                             ("--max-control-body", args.max_control_body, 1),
                             ("--max-episodes", args.max_episodes, 1)):
        if value < low:
            print(f"{flag} must be >= {low}, got {value}", file=sys.stderr)
            return 2
    hub = Hub(max_episodes=args.max_episodes, idle_seconds=args.idle_seconds,
              busy_seconds=args.busy_seconds, max_prefix=args.max_prefix, max_memory=max_memory)
    if args.stdio:
        from prove.env.transports import run_stdio

        if args.stdio not in hub.registry.servers:
            print(f"unknown server {args.stdio!r}; known: {', '.join(hub.registry.servers)}",
                  file=sys.stderr)
            return 2
        run_stdio(args.stdio, hub)
        return 0
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV, "")
    if token and len(token) < MIN_TOKEN:
        print(f"the token must be at least {MIN_TOKEN} characters (got {len(token)}); make one with "
              "python -c 'import secrets; print(secrets.token_urlsafe(24))'", file=sys.stderr)
        return 2
    if not token and not _is_loopback(args.host):
        print(f"refusing to serve on {args.host!r} without a token: off loopback anyone who can reach "
              f"the port could read and rewrite every episode. Set {TOKEN_ENV} (or --token) to a "
              "secret of 16+ characters; clients send it as 'Authorization: Bearer <token>' "
              f"(EnvClient reads {TOKEN_ENV})", file=sys.stderr)
        return 2
    import logging

    handler = logging.StreamHandler()  # PROVE's own lines (refusals, dropped requests) at --log-level
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    logging.getLogger("prove").addHandler(handler)
    logging.getLogger("prove").setLevel(args.log_level.upper())
    hosts = [h.strip() for group in args.allow_host for h in group.split(",") if h.strip()]
    if args.workers > 1:
        from prove.env.launch import supervise_workers

        passthrough = ["--max-episodes", str(args.max_episodes), "--idle-seconds",
                       str(args.idle_seconds), "--busy-seconds", str(args.busy_seconds),
                       "--max-prefix", str(args.max_prefix), "--max-body", str(args.max_body),
                       "--max-control-body", str(args.max_control_body), "--log-level", args.log_level]
        if args.max_memory:
            passthrough += ["--max-memory", args.max_memory]
        passthrough += [f"--allow-host={h}" for h in hosts]
        if args.servers:
            passthrough += ["--servers", args.servers]
        # The token travels in the environment, never on a command line other users can read.
        worker_env = {**os.environ, TOKEN_ENV: token} if token else None
        return supervise_workers(args.workers, args.host, args.port, passthrough, worker_env=worker_env)
    from prove.env.transports import build_http_app, run_http

    servers = args.servers.split(",") if args.servers else None
    try:
        app = build_http_app(hub, servers, allowed_hosts=hosts, token=token or None,
                             max_body=args.max_body, max_control_body=args.max_control_body)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    print(f"PROVE: {len(servers or hub.registry.servers)} servers at "
          f"http://{args.host}:{args.port}/<server>/mcp"
          f"{' (bearer token required)' if token else ''}", file=sys.stderr, flush=True)
    run_http(app, args.host, args.port, log_level=args.log_level)  # with the header read timeout
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


def _new_server(args: argparse.Namespace) -> int:
    from prove.env.scaffold import ScaffoldError, scaffold

    root = Path(args.root) if args.root else _repo_root()
    try:
        made = scaffold(args.name, args.family, root)
    except ScaffoldError as exc:
        print(f"prove new-server: {exc}", file=sys.stderr)
        return 2
    for path in made.files:
        print(f"wrote {path}")
    print(f"server {made.name!r} ({made.family}) with tools {', '.join(made.tools)}")
    servers = root.resolve() / "servers"
    extra = "" if servers == _repo_root().resolve() / "servers" else f"PROVE_SERVER_PATH={servers} PYTHONPATH=tests/servers "
    print(f"validate: {extra}PROVE_SERVERS=banking,{made.name} .venv/bin/python -m pytest "
          f"{made.files[-1]} tests/env -q")
    return 0


def _repo_root() -> Path:
    from prove.profiles import repo_root

    return repo_root()


# Subcommands that own their flags: `prove graph --help` shows theirs.
DELEGATED = {
    "graph": ("prove.graph.build", "build the tool dependency graph (schema or LLM classifier)"),
    "synth": ("prove.synth.cli", "synthesize grounded conversations, replay-validate, export JSONL/parquet"),
    "train": ("prove.train.cli", "launch (or --dry-run print) a VERL GRPO/SFT run from configs/train"),
    "runs": ("prove.tracking", "list the local training runs with their config and evaluation summary"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prove", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the MCP servers (streamable HTTP, or stdio for one)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="bind address (default: loopback only; any other needs a token)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    serve.add_argument("--workers", type=int, default=1,
                       help="N independent processes on ports PORT..PORT+N-1; clients route an "
                            "episode to one by a stable hash of its id")
    serve.add_argument("--servers", default="", help="comma-separated subset (default: all)")
    serve.add_argument("--stdio", metavar="NAME", default="", help="serve one server over stdio")
    serve.add_argument("--token", default=None,
                       help=f"bearer token every route requires (default: ${TOKEN_ENV}; prefer the "
                            "variable, a flag is visible to other users); required off loopback")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="a Host/Origin name to accept besides 127.0.0.1, localhost and ::1 "
                            "(repeatable or comma-separated; '*' accepts any)")
    serve.add_argument("--max-episodes", type=int, default=200_000,
                       help="open-episode cap; least recently used idle ones are evicted beyond it")
    serve.add_argument("--idle-seconds", type=float, default=1800.0,
                       help="episodes idle this long expire")
    serve.add_argument("--busy-seconds", type=float, default=60.0,
                       help="an episode called within this many seconds is in use and never "
                            "evicted; at the cap with all in use, new episodes are refused (503)")
    serve.add_argument("--max-prefix", type=int, default=1024,
                       help="most calls one episode prefix may replay (default 1024)")
    serve.add_argument("--max-body", type=int, default=1 << 20,
                       help="byte cap on one /<server>/mcp request body (default 1 MiB)")
    serve.add_argument("--max-control-body", type=int, default=4 << 20,
                       help="byte cap on one /control/ request body (default 4 MiB)")
    serve.add_argument("--max-memory", default=None, metavar="BYTES",
                       help="byte budget of open episodes, e.g. 2G (default: none; $PROVE_MAX_MEMORY); "
                            "least recently used idle episodes are evicted beyond it and reported gone")
    serve.add_argument("--log-level", default="warning", help="uvicorn log level")
    serve.set_defaults(fn=_serve)

    tools = sub.add_parser("tools", help="print the tool inventory")
    tools.add_argument("--json", action="store_true", help="one JSON row per tool")
    tools.add_argument("-v", "--verbose", action="store_true", help="list every tool")
    tools.set_defaults(fn=_tools)

    new = sub.add_parser("new-server", help="write a minimal working server and its test (servers/README.md)")
    new.add_argument("name", help="server name, lower_snake (e.g. library); its tools are named from it")
    new.add_argument("--family", default="productivity",
                     help="the server's family, one of prove.env.registry.FAMILIES (default: "
                          "productivity); an unknown one is refused with the list")
    new.add_argument("--root", default=None, metavar="DIR",
                     help="write DIR/servers/NAME and DIR/tests/servers/test_NAME.py (default: this "
                          "checkout); outside it, set PROVE_SERVER_PATH=DIR/servers to load it")
    new.set_defaults(fn=_new_server)
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
