"""The synthesis pipeline: chains → scripts → state-machine generation → replay validation and
filters → JSONL, VERL parquet, dataset card; parallel across processes, byte-identical for a seed.

    result = synthesize(SynthConfig.from_profile("smoke", workers=2), "results/synth")
    print(result.funnel, result.files)

Example i of a kind is a pure function of (seed, kind, i, chain pool): its chain, world seed, turn
layout and perturbations come from its own random stream, its episodes are named after its id.
Indices are generated in chunks (in-process or by a process pool, merged in index order) until
each kind has its target of kept examples; the first `target` kept ones are written. The funnel
counts every index up to the last one kept, so it does not depend on chunking or worker count.
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing as mp
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

from prove.graph.chains import Chain, ToolGraph, graph_chains
from prove.synth.export import (
    card_markdown,
    dataset_card,
    example_summary,
    sha256_file,
    training_rows,
    write_jsonl,
    write_parquet,
)
from prove.synth.feasibility import SynthesisInfeasible, kind_feasibility, require_feasible
from prove.synth.machine import Outcome, SynthEnv, Teacher, run_conversation
from prove.synth.perturb import ChainPool, PerturbationRates, build_script
from prove.synth.planner import LOOKUP_RATE
from prove.synth.quality import Linker, bfcl_reference, quality_report, turn_summary
from prove.synth.records import KINDS, dumps, sha256_text
from prove.synth.sampling import StateLinks
from prove.synth.validate import MAX_ERROR_RATE, check_example

__all__ = ["SynthesisInfeasible", "SynthesisStalled", "SynthConfig", "SynthResult", "Worker", "synthesize", "asynthesize", "PAPER_SIZES",
           "generate_range"]

PAPER_SIZES: dict[str, int] = {"multi_turn": 10_895, "clarification": 1_500, "abstention": 1_122}
"""The paper's kept examples by kind (13,517 in all)."""

STAGES: tuple[str, ...] = ("sampling", "generation", "replay", "export")


@dataclass
class SynthConfig:
    """Everything that decides the data (and the machinery that makes it)."""

    sizes: dict[str, int] = field(default_factory=lambda: dict(PAPER_SIZES))
    seed: int = 0
    n_chains: int = 3000
    chain_source: str = "graph"  # "graph" (prove.graph), "synth", or a saved chains file
    graph_file: str | None = None
    """A tool graph 02 saved (``results/graph/tool_graph.json``: its classifier's edges, the LLM's on
    the paper profile) that chains are drawn from; None: the schema classifier's graph, built here."""
    n_worlds: int = 8
    teacher: str = "programmatic"  # or "openai"
    base_url: str = ""
    model: str = ""
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    """Sent with every teacher request (the profile's thinking mode); recorded in each example's teacher."""
    api_key: str = "EMPTY"
    max_tokens: int = 256
    temperature: float = 0.0
    concurrency: int = 8  # concurrent conversations per worker (openai teacher)
    slip_rate: float = 0.06
    lookup_rate: float = LOOKUP_RATE  # ids the user names instead of giving (a lookup call is added)
    max_retries: int = 2
    max_error_rate: float = MAX_ERROR_RATE
    val_fraction: float = 0.1
    servers: tuple[str, ...] | None = None
    rates: PerturbationRates = field(default_factory=PerturbationRates)
    workers: int = 1
    chunk_size: int = 64
    overshoot: float = 1.2
    max_attempts: int | None = None
    """Attempts per kind before synthesis stops with :class:`SynthesisStalled` (None: 100 per
    example asked for, at least 2,000): a teacher or server that cannot produce a kind says so
    instead of looping. A kind the selected servers' declarations rule out (no chain it can be
    built on: :mod:`prove.synth.feasibility`) stops before the first attempt with
    :class:`SynthesisInfeasible`."""

    @classmethod
    def from_profile(cls, profile: str, **overrides: Any) -> SynthConfig:
        """Sizes, chain count, teacher and worlds from configs/profiles/<profile>.yaml, then overrides."""
        from prove.profiles import load_profile

        prof = load_profile(profile)
        syn = prof.synthesis
        kwargs: dict[str, Any] = {
            "sizes": {"multi_turn": syn.n_multi_turn, "clarification": syn.n_clarification,
                      "abstention": syn.n_abstention},
            "n_chains": prof.graph.n_chains, "teacher": syn.teacher, "n_worlds": syn.n_worlds,
            "val_fraction": syn.val_fraction,
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    def data_fields(self) -> dict[str, Any]:
        """The settings that shape the data (recorded on the card; no worker counts)."""
        out = asdict(self)
        for key in ("workers", "chunk_size", "overshoot", "api_key", "concurrency", "base_url",
                    "chat_template_kwargs", "max_attempts"):
            out.pop(key)
        out["servers"] = list(self.servers) if self.servers else None
        graph = out.pop("graph_file")
        if graph is not None:  # what the chains came from, by content (a path differs per machine)
            import hashlib

            out["graph_sha256"] = hashlib.sha256(Path(graph).read_bytes()).hexdigest()
        return out


class SynthesisStalled(RuntimeError):
    """A kind kept too few examples within its attempts; the message names the main rejections."""


@dataclass
class SynthResult:
    kept: dict[str, int]
    funnel: dict[str, dict[str, Any]]
    files: dict[str, str]  # name -> sha256
    timings: dict[str, float]  # seconds per stage (summed over workers) and "wall"
    n_chains: int
    card: dict[str, Any]
    out_dir: Path | None

    def throughput(self) -> dict[str, float]:
        """Examples (attempted ones for generation stages, kept for export) per second per stage."""
        attempted = sum(f["attempted"] for f in self.funnel.values())
        kept = sum(self.kept.values())
        out = {}
        for stage in STAGES:
            n = kept if stage == "export" else attempted
            t = self.timings.get(stage, 0.0)
            out[stage] = n / t if t else float("inf")
        out["end_to_end"] = kept / self.timings["wall"] if self.timings.get("wall") else float("inf")
        return out


# -- the work of one process ------------------------------------------------------------------
@dataclass
class Worker:
    """Everything that turns (kind, index) into a record: the config, the live machinery (hub,
    graph, sampler), the chain pool and the teacher. Built once per process from picklable
    arguments (the config, the graph's rows, the chains as dicts) and used for every chunk."""

    cfg: SynthConfig
    env: SynthEnv
    chains: ChainPool
    teacher: Teacher
    linker: Linker

    @classmethod
    def build(cls, cfg: SynthConfig, graph_rows: list[tuple], chains: list[dict[str, Any]]) -> Worker:
        from prove.env.hub import Hub
        from prove.env.registry import load_registry
        from prove.synth.sampling import LiveSampler

        registry = load_registry()
        if cfg.servers:
            registry = registry.subset(cfg.servers)
        hub = Hub(registry, max_episodes=10_000)
        graph = ToolGraph(registry, graph_rows)
        env = SynthEnv(hub, graph, LiveSampler(hub), max_retries=cfg.max_retries)
        pool = ChainPool([Chain.from_mapping(c) for c in chains], registry)
        linker = Linker(registry)  # one record index per process: the teacher's and the measure's
        return cls(cfg, env, pool, _make_teacher(cfg, linker), linker)

    async def example(self, kind: str, index: int) -> dict[str, Any]:
        """Example `index` of `kind`: generated, validated and, when kept, exported."""
        cfg, env = self.cfg, self.env
        script = build_script(kind, index, self.chains, seed=cfg.seed, n_worlds=cfg.n_worlds,
                              rates=cfg.rates, val_fraction=cfg.val_fraction)
        out: Outcome = await run_conversation(script, self.teacher, env)
        rec: dict[str, Any] = {"kind": kind, "index": index, "chain_id": script.chain.chain_id,
                               "timings": dict(out.timings)}
        if out.example is None:
            rec.update(status="rejected", stage="generation", reason=out.reason, detail=out.detail,
                       transitions=out.transitions)
            return rec
        t0 = time.perf_counter()
        reason, detail = check_example(out.example, env.hub, cfg.max_error_rate)
        t1 = time.perf_counter()
        rec["timings"]["replay"] = t1 - t0
        if reason is not None:
            rec.update(status="rejected", stage="validation", reason=reason, detail=detail,
                       transitions=out.transitions)
            return rec
        rec.update(status="kept", line=dumps(out.example), rows=training_rows(out.example),
                   fingerprint=_fingerprint(out.example), split=script.split,
                   chain_id=script.chain.chain_id,
                   summary=example_summary(out.example, env.hub.registry) | turn_summary(out.example, self.linker))
        rec["timings"]["export"] = time.perf_counter() - t1
        return rec

    async def chunk(self, kind: str, start: int, stop: int) -> list[dict[str, Any]]:
        """Records for indices [start, stop) of one kind, in index order."""
        if self.cfg.teacher == "programmatic" or self.cfg.concurrency <= 1:
            return [await self.example(kind, i) for i in range(start, stop)]
        sem = asyncio.Semaphore(self.cfg.concurrency)

        async def guarded(i: int) -> dict[str, Any]:
            async with sem:
                return await self.example(kind, i)

        return list(await asyncio.gather(*(guarded(i) for i in range(start, stop))))


def _make_teacher(cfg: SynthConfig, links: StateLinks | None = None) -> Teacher:
    if cfg.teacher == "programmatic":
        from prove.synth.programmatic import ProgrammaticTeacher

        return ProgrammaticTeacher(slip_rate=cfg.slip_rate, lookup_rate=cfg.lookup_rate, links=links)
    if cfg.teacher == "openai":
        from prove.synth.openai_teacher import OpenAITeacher

        if not cfg.base_url or not cfg.model:
            raise ValueError("the openai teacher needs base_url and model")
        return OpenAITeacher(cfg.base_url, cfg.model, api_key=cfg.api_key,
                             max_tokens=cfg.max_tokens, temperature=cfg.temperature, seed=cfg.seed,
                             chat_template_kwargs=cfg.chat_template_kwargs)
    raise ValueError(f"unknown teacher {cfg.teacher!r}; use 'programmatic' or 'openai'")


def _fingerprint(example: Mapping[str, Any]) -> str:
    users = [m["content"] for m in example["messages"] if m["role"] == "user"]
    return sha256_text(dumps([example["servers"], users, example["turns"]]))


_PROCESS_WORKER: Worker | None = None
"""The `Worker` of a pool process, built by `_init_process`. A multiprocessing initializer can hand
a process its state only through a module global, and building it once per process (not per task)
is the point; an in-process run never touches it: it builds a `Worker` and passes it along."""


def _init_process(cfg: SynthConfig, graph_rows: list[tuple], chains: list[dict[str, Any]]) -> None:
    global _PROCESS_WORKER
    _PROCESS_WORKER = Worker.build(cfg, graph_rows, chains)


def generate_range(task: tuple[str, int, int]) -> list[dict[str, Any]]:
    """Records for indices [start, stop) of one kind, in a pool process set up by `_init_process`."""
    if _PROCESS_WORKER is None:
        raise RuntimeError("generate_range runs in a process pool started with _init_process")
    kind, start, stop = task
    return asyncio.run(_PROCESS_WORKER.chunk(kind, start, stop))


# -- the driver -------------------------------------------------------------------------------
def synthesize(cfg: SynthConfig, out_dir: str | Path | None = None,
               progress: Callable[[str], None] | None = None) -> SynthResult:
    """Generate, validate and (with `out_dir`) write the data set; see the module docstring.
    Inside a running event loop (a notebook), use `await asynthesize(...)` instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(asynthesize(cfg, out_dir, progress))
    raise RuntimeError("synthesize() inside a running event loop: use `await asynthesize(...)`")


async def asynthesize(cfg: SynthConfig, out_dir: str | Path | None = None,
                      progress: Callable[[str], None] | None = None) -> SynthResult:
    """`synthesize` for async callers (notebooks): the same work and the same bytes."""
    from prove.env.registry import load_registry

    wall0 = time.perf_counter()
    say = progress or (lambda _msg: None)
    registry = load_registry()
    if cfg.servers:
        registry = registry.subset(cfg.servers)
    # prove.graph builds its graph with asyncio.run: give it a thread of its own
    graph, chains = await asyncio.to_thread(graph_chains, cfg.n_chains, cfg.seed, registry=registry,
                                            servers=cfg.servers, source=cfg.chain_source,
                                            graph_file=cfg.graph_file)
    say(f"graph: {len(graph.edges)} edges; {len(chains)} chains")
    # before any attempt: a kind no selected server can produce stops here, with what to do
    require_feasible(cfg.sizes, kind_feasibility(chains, registry, cfg.servers), say)
    init = (cfg, graph.to_rows(), [c.to_dict() for c in chains])
    pool: Pool | None = None
    if cfg.workers > 1:
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        pool = mp.get_context(method).Pool(cfg.workers, initializer=_init_process, initargs=init)
    runner = pool if pool is not None else Worker.build(*init)
    records: dict[str, list[dict[str, Any]]] = {}
    try:
        for kind in KINDS:
            target = int(cfg.sizes.get(kind, 0))
            records[kind] = await _generate_kind(kind, target, cfg, runner, say) if target > 0 else []
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    timings = Counter()
    for recs in records.values():
        for r in recs:
            for stage, t in r["timings"].items():
                timings[stage] += t
    kept_recs, funnel = {}, {}
    for kind in KINDS:
        kept_recs[kind], funnel[kind] = _select(records.get(kind, []), int(cfg.sizes.get(kind, 0)))
    t_exp = time.perf_counter()
    files: dict[str, str] = {}
    lines = [r["line"] for kind in KINDS for r in kept_recs[kind]]
    summaries = [r["summary"] for kind in KINDS for r in kept_recs[kind]]
    rows = {"train": [], "val": []}
    for kind in KINDS:
        for r in kept_recs[kind]:
            rows[r["split"]].extend(r["rows"])
    card = dataset_card(summaries, funnel, cfg.data_fields() | {"n_chains_sampled": len(chains)},
                        {k: len(v) for k, v in rows.items()})
    card["quality"] = quality_report(summaries)
    card["quality_reference"] = bfcl_reference()
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_jsonl(lines, out / "examples.jsonl")
        rejected = [dumps({k: r[k] for k in ("kind", "index", "chain_id", "stage", "reason",
                                              "detail", "transitions")})
                    for kind in KINDS for r in records.get(kind, [])
                    if r["status"] == "rejected" and r["index"] <= funnel[kind]["last_index"]]
        write_jsonl(rejected, out / "rejected.jsonl")
        for split, split_rows in rows.items():
            write_parquet(split_rows, out / f"{split}.parquet")
        (out / "card.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
        (out / "card.md").write_text(card_markdown(card))
        funnel_rows = ["kind,stage,count"] + [
            f"{kind},{stage},{funnel[kind][stage]}" for kind in KINDS
            for stage in ("attempted", "generated", "replay_valid", "kept")] + [
            f"{kind},rejected:{reason},{n}" for kind in KINDS
            for reason, n in funnel[kind]["rejected"].items()]
        (out / "funnel.csv").write_text("\n".join(funnel_rows) + "\n")
        for name in ("examples.jsonl", "rejected.jsonl", "train.parquet", "val.parquet",
                     "card.json", "card.md", "funnel.csv"):
            files[name] = sha256_file(out / name)
        (out / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for n, h in sorted(files.items())))
    timings["export"] += time.perf_counter() - t_exp
    timings["wall"] = time.perf_counter() - wall0
    say(f"done in {timings['wall']:.1f}s")
    return SynthResult({k: len(v) for k, v in kept_recs.items()}, funnel, files, dict(timings),
                       len(chains), card, Path(out_dir) if out_dir is not None else None)


async def _generate_kind(kind: str, target: int, cfg: SynthConfig, runner: Worker | Pool,
                         say: Callable[[str], None]) -> list[dict[str, Any]]:
    """Records of `kind` in index order until `target` distinct ones are kept; `runner` is this
    process's `Worker` or a process pool whose processes each built one."""
    records: list[dict[str, Any]] = []
    kept = 0
    start = 0
    fingerprints: set[str] = set()
    need = math.ceil(target * cfg.overshoot)
    cap = cfg.max_attempts if cfg.max_attempts is not None else max(2000, 100 * target)
    while kept < target:
        if len(records) >= cap:
            reasons = Counter(str(r.get("reason")) for r in records if r["status"] != "kept")
            main = ", ".join(f"{why} ({n})" for why, n in reasons.most_common(3)) or "none"
            servers = ", ".join(cfg.servers) if cfg.servers else "every server"
            raise SynthesisStalled(
                f"{kind}: {kept} of {target} kept after {len(records)} attempts on {servers} "
                f"(teacher {cfg.teacher}{' ' + cfg.model if cfg.model else ''}); main rejections: "
                f"{main}. Ask for fewer {kind} examples, use another teacher or servers, or raise "
                "SynthConfig.max_attempts")
        stop = min(start + max(need, cfg.chunk_size), cap)
        tasks = [(kind, a, min(a + cfg.chunk_size, stop)) for a in range(start, stop, cfg.chunk_size)]
        if isinstance(runner, Worker):
            chunks = [await runner.chunk(*task) for task in tasks]
        else:
            chunks = list(runner.imap(generate_range, tasks))
        for chunk in chunks:
            for r in chunk:
                records.append(r)
                if r["status"] == "kept" and r["fingerprint"] not in fingerprints:
                    fingerprints.add(r["fingerprint"])
                    kept += 1
        rate = max(kept / max(len(records), 1), 0.05)
        say(f"{kind}: {kept}/{target} kept after {len(records)} attempts")
        start = stop
        need = math.ceil((target - kept) / rate * 1.1) + 8
    return records


def _select(records: Sequence[dict[str, Any]], target: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The first `target` distinct kept records in index order, and the funnel up to the last."""
    kept, seen = [], set()
    reasons: Counter = Counter()
    attempted = generated = valid = 0
    last = -1
    for r in sorted(records, key=lambda r: r["index"]):
        if len(kept) >= target:
            break
        attempted += 1
        last = r["index"]
        if r["status"] == "rejected":
            reasons[r["reason"]] += 1
            generated += r["stage"] == "validation"
            valid += r["stage"] == "validation" and r["reason"] != "replay_mismatch"
            continue
        generated += 1
        valid += 1
        if r["fingerprint"] in seen:
            reasons["duplicate"] += 1
            continue
        seen.add(r["fingerprint"])
        kept.append(r)
    funnel = {"attempted": attempted, "generated": generated, "replay_valid": valid,
              "kept": len(kept), "rejected": dict(sorted(reasons.items())), "last_index": last}
    return kept, funnel
