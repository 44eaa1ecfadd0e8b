"""Contamination audit: PROVE's tools and a dataset's user turns against BFCL multi-turn's and τ²-bench's tools and tasks.

    python -m prove.eval.contamination                                   # PROVE's tools vs the benchmarks
    python -m prove.eval.contamination --dataset results/synth           # + n-gram overlap of its user turns
    python -m prove.eval.contamination --dataset results/synth --write-card --csv results/contamination.csv

Prints one table row per benchmark (BFCL multi-turn; τ²-bench airline, retail, telecom) and the named pairs
behind each count, so a gain on a benchmark cannot come from having trained on its tools. Benchmarks are
read through their own packages: BFCL's entries and function docs with `bfcl_eval`'s loader
(`prove.eval.bfcl.load_tasks`, all four multi-turn categories), τ²'s tools from each domain's toolkit
classes (`ToolKitBase.get_tools()`, agent and user tools) and its tasks from the domain's `get_tasks()`.
Without τ²-bench installed the table says so in a row of its own and the BFCL half still runs.

The measures, each with one threshold (module constants):
- **exact name**: a benchmark tool has the name of a PROVE tool;
- **near name** (not exact): the names' normalised tokens (camelCase and `_` split, lower-cased, a final
  "s" dropped from words over three letters) are the same multiset, or the normalised names' Levenshtein
  similarity (1 − distance / longer length) is at least `NEAR_NAME` (0.85);
- **description similarity**: TF-IDF cosine of word unigrams and bigrams (words normalised as names are; idf fitted on PROVE's and that
  benchmark's descriptions together; BFCL's "This tool belongs to … Tool description:" preamble removed);
  per benchmark tool its best PROVE match, reported as max and mean; pairs at or over `DESCRIPTION_SIM` (0.5);
- **parameter set**: a benchmark tool and a PROVE tool take exactly the same set of parameter names, of at
  least `MIN_PARAMS` (2) names;
- **user-turn n-grams** (with `--dataset`): the share of the dataset's user turns that share any word
  `NGRAM`-gram (8) with the benchmark's questions (BFCL) or task instructions (τ²: persona, reason for
  call, known/unknown info, task instructions), and the most shared n-grams.

`--write-card` adds the audit to the dataset's card after synthesis: `contamination` in card.json, a
section at the end of card.md, and their two lines in SHA256SUMS; examples.jsonl and the parquet files are
only read. Everything is deterministic (sorted inputs, no sampling, no model).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import importlib
import importlib.metadata
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "NEAR_NAME",
    "DESCRIPTION_SIM",
    "MIN_PARAMS",
    "NGRAM",
    "BenchmarkTool",
    "BenchmarkData",
    "Pair",
    "NgramOverlap",
    "BenchmarkAudit",
    "ContaminationReport",
    "prove_tools",
    "bfcl_benchmark",
    "tau2_benchmarks",
    "load_benchmarks",
    "dataset_user_turns",
    "ngram_overlap",
    "name_tokens",
    "name_similarity",
    "compare",
    "audit",
    "write_card",
    "main",
]

NEAR_NAME = 0.85
"""Normalised Levenshtein similarity at or over which two different tool names count as near."""
DESCRIPTION_SIM = 0.5
"""TF-IDF cosine (word 1- and 2-grams) at or over which a description pair is listed."""
MIN_PARAMS = 2
"""A parameter-set match needs at least this many parameter names (one shared `query` is not a copy)."""
NGRAM = 8
"""Word n-gram length for user turns against benchmark questions and instructions."""
TOP_NGRAMS = 5
"""How many of the most shared n-grams a report keeps per benchmark."""
CARD_SECTION = "## Contamination audit"
TAU2_DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_BFCL_PREAMBLE = re.compile(r"^This tool belongs to .*?Tool description:\s*", re.S)


# --------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class BenchmarkTool:
    """One tool as the audit compares it: name, description, parameter names, and where it comes from."""

    name: str
    description: str
    params: tuple[str, ...]
    group: str = ""

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any], group: str = "") -> BenchmarkTool:
        """From an OpenAI function schema (`{"type": "function", "function": {...}}`) or its inner dict."""
        fn = schema.get("function", schema)
        props = (fn.get("parameters") or {}).get("properties") or {}
        return cls(str(fn["name"]), str(fn.get("description") or ""), tuple(sorted(props)), group)


@dataclass(frozen=True)
class BenchmarkData:
    """A benchmark's tools and the texts its users say (questions / task instructions)."""

    name: str
    tools: tuple[BenchmarkTool, ...]
    texts: tuple[str, ...]
    available: bool = True
    note: str = ""


@dataclass(frozen=True)
class Pair:
    """A PROVE tool and a benchmark tool that match by `kind` (exact, near, description, parameters)."""

    kind: str
    prove_tool: str
    benchmark_tool: str
    score: float
    detail: str = ""

    def __str__(self) -> str:
        more = f"; {self.detail}" if self.detail else ""
        return f"{self.kind}: {self.prove_tool} ~ {self.benchmark_tool} ({self.score:.2f}{more})"


@dataclass(frozen=True)
class NgramOverlap:
    """How many user turns share a word n-gram with a benchmark's texts, and the most shared n-grams."""

    n: int
    user_turns: int
    shared_turns: int
    top: tuple[tuple[str, int], ...] = ()

    @property
    def share(self) -> float:
        return self.shared_turns / self.user_turns if self.user_turns else 0.0


@dataclass(frozen=True)
class BenchmarkAudit:
    """The audit of PROVE's tools (and optionally a dataset's user turns) against one benchmark."""

    benchmark: str
    available: bool
    note: str
    n_tools: int
    n_texts: int
    exact: tuple[Pair, ...] = ()
    near: tuple[Pair, ...] = ()
    description: tuple[Pair, ...] = ()
    description_max: float = 0.0
    description_mean: float = 0.0
    parameters: tuple[Pair, ...] = ()
    ngrams: NgramOverlap | None = None
    closest: Pair | None = None
    """The most similar description pair, whatever its score (what `description_max` is of)."""

    @property
    def pairs(self) -> tuple[Pair, ...]:
        return self.exact + self.near + self.description + self.parameters


@dataclass(frozen=True)
class ContaminationReport:
    """The whole audit: one `BenchmarkAudit` per benchmark, the thresholds, what was compared."""

    n_prove_tools: int
    audits: tuple[BenchmarkAudit, ...]
    dataset: str | None = None
    thresholds: dict[str, float] = field(default_factory=lambda: {
        "near_name": NEAR_NAME, "description_sim": DESCRIPTION_SIM, "min_params": MIN_PARAMS, "ngram": NGRAM})
    versions: dict[str, str] = field(default_factory=dict)

    def as_rows(self) -> list[dict[str, Any]]:
        """One flat row per benchmark (the CSV and the notebook's table)."""
        rows = []
        for a in self.audits:
            ng = a.ngrams
            rows.append({
                "benchmark": a.benchmark,
                "available": a.available,
                "benchmark_tools": a.n_tools,
                "prove_tools": self.n_prove_tools,
                "exact_names": len(a.exact),
                "near_names": len(a.near),
                "name_pairs": "; ".join(f"{p.prove_tool}={p.benchmark_tool}" for p in a.exact + a.near),
                "description_max": round(a.description_max, 3),
                "description_mean": round(a.description_mean, 3),
                f"description_pairs_ge_{DESCRIPTION_SIM}": len(a.description),
                "parameter_set_matches": len(a.parameters),
                "benchmark_texts": a.n_texts,
                f"user_turns_sharing_{NGRAM}gram": None if ng is None else ng.shared_turns,
                "user_turns": None if ng is None else ng.user_turns,
                "ngram_share": None if ng is None else round(ng.share, 4),
                "note": a.note,
            })
        return rows

    def as_table(self) -> str:
        """A markdown table, one row per benchmark, then every named pair and the top shared n-grams."""
        head = (f"| benchmark | tools | exact names | near names | description cos max / mean | "
                f"desc. ≥ {DESCRIPTION_SIM} | same param set (≥{MIN_PARAMS}) | "
                f"user turns sharing a {NGRAM}-gram |")
        lines = [head, "|" + "---|" * 8]
        for a in self.audits:
            if not a.available:
                lines.append(f"| {a.benchmark} | — | — | — | — | — | — | {a.note} |")
                continue
            ng = "—" if a.ngrams is None else (f"{a.ngrams.shared_turns}/{a.ngrams.user_turns} "
                                               f"({100 * a.ngrams.share:.2f}%)")
            lines.append(f"| {a.benchmark} | {a.n_tools} | {len(a.exact)} | {len(a.near)} | "
                         f"{a.description_max:.2f} / {a.description_mean:.2f} | {len(a.description)} | "
                         f"{len(a.parameters)} | {ng} |")
        lines += ["", f"PROVE: {self.n_prove_tools} tools"
                  + (f"; dataset: {self.dataset}" if self.dataset else "; no dataset given (no n-gram overlap)")
                  + ". Thresholds: " + ", ".join(f"{k} {v}" for k, v in self.thresholds.items()) + "."]
        for a in self.audits:
            pairs = a.pairs + ((a.closest,) if a.closest is not None and not a.description else ())
            if pairs:
                lines += ["", f"{a.benchmark} pairs:"] + [f"- {p}" for p in pairs]
            if a.ngrams is not None and a.ngrams.top:
                lines += ["", f"{a.benchmark} most shared {NGRAM}-grams (user turns):"]
                lines += [f"- \"{g}\" ({n})" for g, n in a.ngrams.top]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the card's `contamination`)."""
        out = asdict(self)
        for a, d in zip(self.audits, out["audits"], strict=True):
            if a.ngrams is not None:
                d["ngrams"]["share"] = round(a.ngrams.share, 6)
            d["description_max"] = round(a.description_max, 6)
            d["description_mean"] = round(a.description_mean, 6)
            for kind in ("exact", "near", "description", "parameters"):
                d[kind] = [{**p, "score": round(p["score"], 6)} for p in d[kind]]
            if d["closest"] is not None:
                d["closest"]["score"] = round(d["closest"]["score"], 6)
        return json.loads(json.dumps(out))

    def write_csv(self, path: str | Path) -> Path:
        rows = self.as_rows()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["benchmark"])
            writer.writeheader()
            writer.writerows(rows)
        return path


# --------------------------------------------------------------------------- loading


def prove_tools() -> list[BenchmarkTool]:
    """PROVE's registry tools (all servers), in the shape the audit compares."""
    from prove.env import load_registry

    return [BenchmarkTool.from_schema(spec.openai_schema(), spec.server)
            for spec in load_registry().tools.values()]


def _bfcl_description(text: str) -> str:
    return _BFCL_PREAMBLE.sub("", text)


def bfcl_benchmark() -> BenchmarkData:
    """BFCL v4 multi-turn (800 entries): every function doc its entries offer (missed functions
    included) and every user turn of every entry, read with bfcl-eval's own loader."""
    from prove.eval.bfcl import CATEGORIES, bfcl_available, load_tasks

    name = "BFCL multi-turn"
    ok, why = bfcl_available()
    if not ok:
        return BenchmarkData(name, (), (), available=False, note=why)
    docs: dict[str, BenchmarkTool] = {}
    texts: list[str] = []
    for entry in load_tasks(CATEGORIES):
        missed = [d for ds in (entry.get("missed_function") or {}).values() for d in ds]
        for doc in [*entry.get("function", ()), *missed]:
            tool = BenchmarkTool.from_schema(doc)
            docs.setdefault(tool.name, BenchmarkTool(tool.name, _bfcl_description(tool.description),
                                                     tool.params, _bfcl_group(tool.description)))
        texts += [str(m.get("content") or "") for turn in entry["question"] for m in turn
                  if m.get("role") == "user"]
    return BenchmarkData(name, tuple(docs[k] for k in sorted(docs)), _distinct(texts))


def _distinct(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({t.strip() for t in texts if _WORD.search(t.lower())}))


def _bfcl_group(description: str) -> str:
    m = re.match(r"This tool belongs to (?:the )?(\S+)", description)
    return m.group(1).rstrip(",") if m else ""


@contextlib.contextmanager
def _quiet_tau2() -> Iterator[None]:
    """τ²'s data folder set (τ² reads TAU2_DATA_DIR at import) and its loguru messages off meanwhile."""
    from loguru import logger

    from prove.eval.tau2 import tau2_data_dir

    data = tau2_data_dir()
    if data is not None:
        os.environ.setdefault("TAU2_DATA_DIR", str(data))
    logger.disable("tau2")
    try:
        yield
    finally:
        logger.enable("tau2")


def _scenario_texts(task: Any) -> list[str]:
    """What τ²'s user simulator is told: persona and each part of the instructions, as separate texts."""
    scenario = task.user_scenario
    texts = [scenario.persona] if scenario.persona else []
    ins = scenario.instructions
    if isinstance(ins, str):
        texts.append(ins)
    else:
        texts += [t for t in (ins.reason_for_call, ins.known_info, ins.unknown_info, ins.task_instructions) if t]
    return texts


def tau2_benchmarks(domains: Sequence[str] = TAU2_DOMAINS) -> list[BenchmarkData]:
    """τ²-bench per domain: the tools of every toolkit class its environment module uses (agent and,
    for telecom, user tools) and the text of its tasks' user scenarios. Not installed: one row saying so."""
    from prove.eval.tau2 import tau2_available

    ok, why = tau2_available()
    if not ok:
        return [BenchmarkData("τ²-bench", (), (), available=False, note=f"τ² not installed: {why}")]
    with _quiet_tau2():
        return [_tau2_domain(domain) for domain in domains]


def _tau2_domain(domain: str) -> BenchmarkData:
    """One τ² domain through its environment module (no litellm import: its runner is not needed)."""
    base = importlib.import_module("tau2.environment.toolkit").ToolKitBase
    env = importlib.import_module(f"tau2.domains.{domain}.environment")
    kits = sorted((v for v in vars(env).values() if isinstance(v, type) and issubclass(v, base) and v is not base),
                  key=lambda k: k.__name__)
    if not kits:
        raise RuntimeError(f"τ² domain {domain!r}: no ToolKitBase subclass in {env.__name__}; "
                           "τ²-bench's layout changed (PROVE pins v0.2.0)")
    tools = [BenchmarkTool.from_schema(tool.openai_schema, kit.__name__)
             for kit in kits for tool in kit(None).get_tools().values()]
    texts = [t for task in env.get_tasks() for t in _scenario_texts(task)]
    return BenchmarkData(f"τ² {domain}", tuple(sorted(tools, key=lambda t: (t.name, t.group))), _distinct(texts))


def load_benchmarks(tau2_domains: Sequence[str] = TAU2_DOMAINS) -> list[BenchmarkData]:
    return [bfcl_benchmark(), *tau2_benchmarks(tau2_domains)]


def dataset_user_turns(dataset: str | Path) -> list[str]:
    """Every user turn of a dataset (a folder with examples.jsonl, or the file itself)."""
    path = Path(dataset)
    if path.is_dir():
        path = path / "examples.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no examples.jsonl at {path}; pass the dataset folder synthesis wrote "
                                "(e.g. results/synth)")
    turns = []
    with path.open() as fh:
        for line in fh:
            if line.strip():
                turns += [str(m.get("content") or "") for m in json.loads(line)["messages"]
                          if m.get("role") == "user"]
    return turns


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("bfcl-eval", "tau2"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


# --------------------------------------------------------------------------- measures


def name_tokens(name: str) -> tuple[str, ...]:
    """Lower-case words of a tool name (camelCase and any non-alphanumeric split), a plural "s" dropped."""
    return tuple(_singular(w) for w in _WORD.findall(_CAMEL.sub(r"\1_\2", name).lower()))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def name_similarity(a: str, b: str) -> float:
    """1.0 when the names' token multisets agree, else 1 − Levenshtein / longer length of the
    normalised names (tokens joined by `_`)."""
    ta, tb = name_tokens(a), name_tokens(b)
    if sorted(ta) == sorted(tb):
        return 1.0
    na, nb = "_".join(ta), "_".join(tb)
    longer = max(len(na), len(nb))
    if not longer or abs(len(na) - len(nb)) > (1 - NEAR_NAME) * longer:
        return 0.0  # cannot reach the threshold: skip the quadratic distance
    return 1 - _levenshtein(na, nb) / longer


def _terms(text: str) -> list[str]:
    words = [_singular(w) for w in _WORD.findall(text.lower())]
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


def _tfidf(docs: Sequence[str]) -> list[dict[str, float]]:
    """L2-normalised TF-IDF vectors (smoothed idf: ln((1 + N) / (1 + df)) + 1)."""
    counts = [Counter(_terms(d)) for d in docs]
    df = Counter(t for c in counts for t in c)
    n = len(docs)
    vectors = []
    for c in counts:
        v = {t: tf * (math.log((1 + n) / (1 + df[t])) + 1) for t, tf in c.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        vectors.append({t: x / norm for t, x in v.items()})
    return vectors


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(t, 0.0) for t, x in a.items())


def _ngrams(text: str, n: int) -> set[str]:
    words = _WORD.findall(text.lower())
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def ngram_overlap(user_turns: Sequence[str], texts: Iterable[str], n: int = NGRAM) -> NgramOverlap:
    """Share of `user_turns` that share any word n-gram with `texts`; the n-grams shared by most turns."""
    bench: set[str] = set().union(*(_ngrams(t, n) for t in texts))
    shared: Counter[str] = Counter()
    hit = 0
    for turn in user_turns:
        common = _ngrams(turn, n) & bench
        hit += bool(common)
        shared.update(common)
    top = tuple(sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_NGRAMS])
    return NgramOverlap(n, len(user_turns), hit, top)


def compare(prove: Sequence[BenchmarkTool], bench: BenchmarkData,
            user_turns: Sequence[str] | None = None) -> BenchmarkAudit:
    """Every measure of PROVE's tools (and user turns, if given) against one benchmark."""
    if not bench.available:
        return BenchmarkAudit(bench.name, False, bench.note, 0, 0)
    vectors = _tfidf([t.description for t in prove] + [t.description for t in bench.tools])
    pv, bv = vectors[:len(prove)], vectors[len(prove):]

    def detail(i: int, j: int) -> str:  # what else a name pair shares: description and parameters
        shared = set(prove[i].params) & set(bench.tools[j].params)
        union = set(prove[i].params) | set(bench.tools[j].params)
        return f"description cos {_cosine(pv[i], bv[j]):.2f}, parameters {len(shared)}/{len(union)} shared"

    index = {t.name: i for i, t in enumerate(prove)}
    exact = tuple(Pair("exact", b.name, b.name, 1.0, detail(index[b.name], j))
                  for j, b in enumerate(bench.tools) if b.name in index)
    near = tuple(Pair("near", p.name, b.name, s, detail(i, j)) for j, b in enumerate(bench.tools)
                 for i, p in enumerate(prove)
                 if p.name != b.name and (s := name_similarity(p.name, b.name)) >= NEAR_NAME)
    best: list[float] = []
    described = []
    scores_by_tool = []
    for b, vb in zip(bench.tools, bv, strict=True):
        scores = [_cosine(vb, vp) for vp in pv]
        scores_by_tool.append(scores)
        best.append(max(scores, default=0.0))
        described += [Pair("description", p.name, b.name, s) for p, s in zip(prove, scores, strict=True)
                      if s >= DESCRIPTION_SIM]
    params = tuple(Pair("parameters", p.name, b.name, 1.0, "parameters " + ", ".join(b.params))
                   for b in bench.tools for p in prove
                   if len(b.params) >= MIN_PARAMS and set(b.params) == set(p.params))
    closest = max(((s, i, j) for j, row in enumerate(scores_by_tool) for i, s in enumerate(row)),
                  key=lambda t: (t[0], -t[2], -t[1]), default=None)

    def order(p: Pair) -> tuple[float, str, str]:
        return -p.score, p.benchmark_tool, p.prove_tool

    return BenchmarkAudit(
        bench.name, True, bench.note, len(bench.tools), len(bench.texts), exact,
        tuple(sorted(near, key=order)), tuple(sorted(described, key=order)),
        max(best, default=0.0), sum(best) / len(best) if best else 0.0,
        tuple(sorted(params, key=order)),
        None if user_turns is None else ngram_overlap(user_turns, bench.texts),
        None if closest is None else Pair("closest description", prove[closest[1]].name,
                                          bench.tools[closest[2]].name, closest[0]))


def audit(dataset: str | Path | None = None, benchmarks: Sequence[BenchmarkData] | None = None,
          tools: Sequence[BenchmarkTool] | None = None) -> ContaminationReport:
    """PROVE's tools (default: the registry's) and `dataset`'s user turns against `benchmarks`
    (default: BFCL multi-turn and τ² airline, retail, telecom as installed)."""
    tools = list(tools) if tools is not None else prove_tools()
    benchmarks = list(benchmarks) if benchmarks is not None else load_benchmarks()
    turns = dataset_user_turns(dataset) if dataset is not None else None
    return ContaminationReport(len(tools), tuple(compare(tools, b, turns) for b in benchmarks),
                               str(dataset) if dataset is not None else None, versions=_versions())


# --------------------------------------------------------------------------- the dataset card


def write_card(dataset: str | Path, report: ContaminationReport) -> dict[str, str]:
    """Add `report` to a synthesised dataset's card: card.json `contamination`, a card.md section (replacing
    an earlier one), and the two files' lines in SHA256SUMS. The data files are not touched. Returns the
    new sha256 of card.json and card.md."""
    folder = Path(dataset)
    card_json, card_md = folder / "card.json", folder / "card.md"
    if not card_json.is_file():
        raise FileNotFoundError(f"no card.json in {folder}: write_card adds to a card synthesis wrote")
    card = json.loads(card_json.read_text())
    card["contamination"] = {k: v for k, v in report.to_dict().items() if k != "dataset"}
    card_json.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    md = card_md.read_text() if card_md.is_file() else ""
    md = md.split("\n" + CARD_SECTION)[0].rstrip("\n")
    table = replace(report, dataset="this dataset" if report.dataset else None).as_table()  # no machine path
    card_md.write_text(md + "\n\n" + CARD_SECTION + "\n\n" + _card_intro() + "\n\n" + table + "\n")
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (card_json, card_md)}
    sums = folder / "SHA256SUMS"
    if sums.is_file():
        entries = dict(reversed(line.split("  ", 1)) for line in sums.read_text().splitlines() if line.strip())
        entries.update(digests)
        sums.write_text("".join(f"{h}  {n}\n" for n, h in sorted(entries.items())))
    return digests


def _card_intro() -> str:
    return ("PROVE's tools against the benchmarks' tools (names, descriptions, parameter sets) and this "
            "dataset's user turns against their questions and task instructions "
            "(`python -m prove.eval.contamination`; measures and thresholds in its docstring).")


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prove.eval.contamination",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", help="a synthesised dataset folder (examples.jsonl): adds the n-gram "
                                          "overlap of its user turns")
    parser.add_argument("--tau2-domains", nargs="*", default=list(TAU2_DOMAINS), help="τ² domains to audit")
    parser.add_argument("--csv", help="also write the table's rows to this CSV")
    parser.add_argument("--write-card", action="store_true",
                        help="add the audit to the dataset's card.json / card.md (needs --dataset)")
    args = parser.parse_args(argv)
    if args.write_card and not args.dataset:
        parser.error("--write-card needs --dataset")
    report = audit(args.dataset, load_benchmarks(args.tau2_domains))
    print(report.as_table())
    if args.csv:
        print(f"wrote {report.write_csv(args.csv)}")
    if args.write_card:
        write_card(args.dataset, report)
        print(f"added the audit to {Path(args.dataset) / 'card.json'} and card.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
