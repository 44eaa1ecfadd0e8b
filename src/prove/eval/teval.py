"""T-Eval v2 (instruct, plan, reason, retrieve, understand, review) against an endpoint, scored by T-Eval's own evaluators.

    python -m prove.eval.teval score <predictions dir> [--embedding-model PATH]

Data is not on PyPI and is not downloaded here: get the v2 files once, from the HF dataset
`lovesnowbest/T-Eval` (folder data/) or the T-Eval README's Google-Drive archive (full, or the 1/5
`*_v2_subset.json` that the repo's test_all_en.sh runs), and pass their folder as `data_dir`.
Expected names: instruct_v2.json, plan_json_v2.json, plan_str_v2.json, reason_str_v2.json,
retrieve_str_v2.json, understand_str_v2.json, reason_retrieve_understand_json_v2.json,
review_str_v2.json (suffix `_subset` before `.json` for the subset, `_zh` for Chinese).

Inference follows T-Eval's test.py: each sample's `origin_prompt` chat goes to the model greedily,
the reply goes through `split_special_tokens`, and is stored as `prediction` in a copy of the data
file (T-Eval's own output format). Scoring runs T-Eval's own evaluator classes as shipped on PyPI
inside the `opencompass` wheel (`pip install --no-deps opencompass==0.5.4 mmengine-lite`; imported by
`prove.eval.teval_evaluators` without opencompass's heavy package __init__), constructed with
test.py's arguments, and combines them as teval/utils/convert_results.py does: overall = mean of
the six abilities x 100. opencompass's copy predates two T-Eval v2 changes, handled around the
official classes (details in `prove.eval.teval_evaluators`): the plan match threshold is passed
as v2's 0.8, and `args` (understand ability) is v2's exact match computed on the official class's
parsed samples, with opencompass's v1 cosine kept as `args_v1_cosine`.

Plan and Reason compare sentences with an embedding model: T-Eval uses sentence-transformers
`all-mpnet-base-v2` for EN (`thenlper/gte-large-zh` for ZH); pass a local copy's path as
`embedding_model` to reproduce its numbers (nothing is downloaded at run time).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint, write_json, write_table

__all__ = [
    "ABILITIES",
    "RUNS",
    "EN_EMBEDDING_MODEL",
    "ZH_EMBEDDING_MODEL",
    "TEvalRun",
    "TEvalConfig",
    "TEval",
    "split_special_tokens",
    "gold_prediction",
    "evaluate_file",
    "combine",
    "teval_available",
    "write_predictions",
    "bag_of_words_model",
    "sample_texts",
    "SAMPLE_DATA_DIR",
]

SAMPLE_DATA_DIR = Path(__file__).resolve().parents[3] / "data" / "eval" / "teval"
"""Hand-written samples in T-Eval's format (tests and the smoke profile), in this checkout."""

ABILITIES: tuple[str, ...] = ("instruct", "plan", "reason", "retrieve", "understand", "review")
EN_EMBEDDING_MODEL = "all-mpnet-base-v2"
ZH_EMBEDDING_MODEL = "thenlper/gte-large-zh"


@dataclass(frozen=True)
class TEvalRun:
    """One of the eight test.py invocations of test_all_en.sh."""

    stem: str
    eval: str
    prompt_type: str

    @property
    def key(self) -> str:
        """The result key test.py writes (`<eval>_<prompt_type>`), read by convert_results.py."""
        return f"{self.eval}_{self.prompt_type}"


RUNS: tuple[TEvalRun, ...] = (
    TEvalRun("instruct_v2", "instruct", "json"),  # holds both json- and string-format samples
    TEvalRun("review_str_v2", "review", "str"),
    TEvalRun("plan_json_v2", "plan", "json"),
    TEvalRun("plan_str_v2", "plan", "str"),
    TEvalRun("reason_str_v2", "reason", "str"),
    TEvalRun("retrieve_str_v2", "retrieve", "str"),
    TEvalRun("understand_str_v2", "understand", "str"),
    TEvalRun("reason_retrieve_understand_json_v2", "rru", "json"),
)

_EVALUATOR = {"instruct": "InstructEvaluator", "plan": "PlanningEvaluator", "review": "ReviewEvaluator",
              "reason": "ReasonRetrieveUnderstandEvaluator", "retrieve": "ReasonRetrieveUnderstandEvaluator",
              "understand": "ReasonRetrieveUnderstandEvaluator", "rru": "ReasonRetrieveUnderstandEvaluator"}
_ROLES = {"system": "system", "user": "user", "assistant": "assistant", "environment": "system",
          "function": "system"}
"""origin_prompt role -> chat role, as lagent's GPTAPI meta template maps them."""


def teval_available() -> tuple[bool, str]:
    """(True, "") when T-Eval's evaluators import (opencompass, mmengine-lite, sentence-transformers)."""
    from prove.eval.teval_evaluators import evaluators_available

    return evaluators_available()


def split_special_tokens(text: str) -> str:
    """T-Eval test.py's post-processing of every model reply (verbatim logic)."""
    for marker in ("<eoa>", "<TOKENS_UNUSED_1>", "<|im_end|>", "\nuser", "\nassistant", "\nUSER", "[INST]",
                   "<|user|>"):
        text = text.split(marker)[0]
    text = text.strip()
    if text.startswith("```json"):
        text = text[len("```json"):]
    return text.strip("`").strip()


@dataclass
class TEvalConfig:
    """One T-Eval run of one served model."""

    label: str
    data_dir: Path | None = None
    subset: bool = False
    language: str = "en"
    runs: tuple[str, ...] = tuple(r.key for r in RUNS)
    max_samples: int | None = None
    """Per file; None = all (test.py's --test_num -1)."""
    max_tokens: int = 512
    """lagent's default max_new_tokens for T-Eval's runs."""
    workers: int = 8
    embedding_model: str = EN_EMBEDDING_MODEL
    results_dir: Path = Path("results/teval")

    def __post_init__(self) -> None:
        if self.language not in ("en", "zh"):
            raise ValueError("language is 'en' or 'zh'")
        unknown = set(self.runs) - {r.key for r in RUNS}
        if unknown:
            raise ValueError(f"unknown T-Eval runs {sorted(unknown)}; choose from {[r.key for r in RUNS]}")
        self.results_dir = Path(self.results_dir)
        if self.data_dir is not None:
            self.data_dir = Path(self.data_dir)

    def data_file(self, run: TEvalRun) -> Path:
        if self.data_dir is None:
            raise FileNotFoundError("T-Eval data_dir is not set. " + _DATA_HINT)
        name = run.stem + ("_subset" if self.subset else "") + ("_zh" if self.language == "zh" else "")
        path = self.data_dir / f"{name}.json"
        if not path.is_file():
            raise FileNotFoundError(f"missing T-Eval file {path}. " + _DATA_HINT)
        return path

    def selected(self) -> list[TEvalRun]:
        return [r for r in RUNS if r.key in self.runs]


_DATA_HINT = ("T-Eval v2 data is not on PyPI: download data/ of the HF dataset lovesnowbest/T-Eval (or the "
              "archive linked in open-compass/T-Eval's README) and pass its folder as data_dir.")


# --------------------------------------------------------------------------- gold answers (self-check)


def gold_prediction(sample: dict[str, Any], run: TEvalRun) -> str:
    """The reply each evaluator parses back into `sample`'s ground truth (used to self-check scoring)."""
    gt = sample["ground_truth"]
    if isinstance(gt, str):
        gt = json.loads(gt)
    if run.eval == "instruct":
        tpl = sample["template"]
        if sample["meta_data"]["response_format"] == "json":
            return json.dumps({tpl["thought"]: gt.get("thought", ""), tpl["action"]: gt["action"],
                               tpl["args"]: gt["args"]})
        return (tpl["thought_start"] + gt.get("thought", "") + tpl["thought_end"] + tpl["action_start"]
                + gt["action"] + tpl["action_end"] + tpl["args_start"] + repr(gt["args"]) + tpl["args_end"])
    if run.eval == "plan":
        if run.prompt_type == "json":
            return json.dumps(gt)
        return "\n".join(f"{step['name']}({step['args']})" for step in gt)
    if run.eval == "review":
        return f"Answer: {gt['answer']}"
    if run.eval == "rru":
        return json.dumps({"thought": gt["thought"], "name": gt["name"], "args": gt["args"]})
    if run.eval == "reason":
        return gt["thought"]
    if run.eval == "retrieve":
        return gt["name"]
    if run.eval == "understand":
        return str(gt["args"])
    raise ValueError(run.eval)


def write_predictions(cfg: TEvalConfig, out_dir: str | Path, predict: Any) -> Path:
    """Write T-Eval prediction files with `predict(sample, run) -> str` as the model (no endpoint)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for run in cfg.selected():
        data = json.loads(cfg.data_file(run).read_text())
        preds = {sid: {**sample, "prediction": predict(sample, run)} for sid, sample in data.items()}
        (out_dir / f"{run.key}.json").write_text(json.dumps(preds, ensure_ascii=False, indent=1))
    return out_dir


def bag_of_words_model(texts: Sequence[str], out_dir: str | Path) -> Path:
    """A sentence-transformers model whose cosine is the bag-of-words cosine over `texts`' words.

    One-hot word embeddings, mean pooled: identical texts score 1, texts without a shared token 0.
    For tests and the CPU smoke run only; it does not reproduce T-Eval's numbers.
    """
    import numpy as np
    from sentence_transformers import SentenceTransformer
    try:
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import StaticEmbedding
    from tokenizers import Tokenizer, models, pre_tokenizers

    pre = pre_tokenizers.Whitespace()
    vocab = {"[UNK]": 0}
    for text in texts:
        for word, _ in pre.pre_tokenize_str(text):
            vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre
    weights = np.eye(len(vocab), dtype=np.float32)
    model = SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_weights=weights)], device="cpu")
    out_dir = Path(out_dir)
    model.save(str(out_dir))
    return out_dir


def sample_texts(cfg: TEvalConfig, extra: Sequence[str] = ()) -> list[str]:
    """Every string in the selected data files (to build a vocabulary over)."""
    texts = list(extra)

    def walk(x: Any) -> None:
        if isinstance(x, str):
            texts.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                texts.append(str(k))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        else:
            texts.append(str(x))

    for run in cfg.selected():
        data = json.loads(cfg.data_file(run).read_text())
        walk(data)
        for sample in data.values():
            texts.append(gold_prediction(sample, run))
    return texts


# --------------------------------------------------------------------------- scoring


def evaluate_file(predictions: str | Path, run: TEvalRun, embedding_model: str = EN_EMBEDDING_MODEL) -> dict[str, float]:
    """T-Eval's evaluator for `run` on a predictions file, constructed as test.py does, with v2's definitions.

    The class comes from the installed opencompass wheel; the two places where its copy still has
    T-Eval v1 behaviour are set back to v2 here (see `prove.eval.teval_evaluators`).
    """
    from prove.eval.teval_evaluators import PLAN_MATCH_THRESHOLD, evaluator_class, v2_args

    name = _EVALUATOR[run.eval]
    kwargs: dict[str, Any] = {"default_prompt_type": run.prompt_type, "eval_type": run.eval,
                              "bert_score_model": embedding_model}
    if name == "PlanningEvaluator":
        kwargs["match_threshold"] = PLAN_MATCH_THRESHOLD
    evaluator = evaluator_class(name)(str(predictions), **kwargs)
    result = {k: float(v) for k, v in dict(evaluator.evaluate()).items()}
    if "args" in result:  # understand_str / rru_json: opencompass reports v1's cosine; v2 is exact match
        samples = [item["response_data_sample"] for item in evaluator.dataset]
        result["args_v1_cosine"] = result["args"]
        result["args"] = sum(v2_args(s.pred, s.gt) for s in samples) / len(samples) if samples else 0.0
    return result


def combine(results: dict[str, dict[str, float]]) -> dict[str, float]:
    """teval/utils/convert_results.py: the six ability scores and their mean, each x 100.

    An ability whose inputs are missing from `results` is left out (and so is `overall`).
    """
    parts = {
        "instruct": [("instruct_json", "json_format_metric", "json_args_em_metric"),
                     ("instruct_json", "string_format_metric", "string_args_em_metric")],
        "plan": [("plan_str", "f1_score"), ("plan_json", "f1_score")],
        "reason": [("reason_str", "thought"), ("rru_json", "thought")],
        "retrieve": [("retrieve_str", "name"), ("rru_json", "name")],
        "understand": [("understand_str", "args"), ("rru_json", "args")],
        "review": [("review_str", "review_quality"), ("review_str", "review_quality")],
    }
    out: dict[str, float] = {}
    for ability, items in parts.items():
        values = []
        for key, *metrics in items:
            if key not in results or any(m not in results[key] for m in metrics):
                break
            values.append(sum(results[key][m] for m in metrics) / len(metrics))
        else:
            out[ability] = 100 * sum(values) / len(values)
    if all(a in out for a in ABILITIES):
        out["overall"] = sum(out[a] for a in ABILITIES) / len(ABILITIES)
    return out


# --------------------------------------------------------------------------- adapter


class TEval:
    """T-Eval adapter: load_tasks / run / score for one `TEvalConfig`."""

    name = "teval"

    def __init__(self, cfg: TEvalConfig) -> None:
        self.cfg = cfg

    @property
    def out_dir(self) -> Path:
        return self.cfg.results_dir / self.cfg.label

    def load_tasks(self) -> list[dict[str, Any]]:
        """Every selected sample as {"run": key, "id": ..., **sample}."""
        out = []
        for run in self.cfg.selected():
            data = json.loads(self.cfg.data_file(run).read_text())
            for i, (sid, sample) in enumerate(data.items()):
                if self.cfg.max_samples is not None and i >= self.cfg.max_samples:
                    break
                out.append({"run": run.key, "id": sid, **sample})
        return out

    def _ask(self, client: Any, endpoint: Endpoint, prompt: Any) -> str:
        messages = json.loads(prompt) if isinstance(prompt, str) else prompt
        chat = [{"role": _ROLES.get(m["role"], "user"), "content": m["content"]} for m in messages]
        reply = client.chat.completions.create(model=endpoint.model, messages=chat, temperature=0.0,
                                               max_tokens=self.cfg.max_tokens)
        return split_special_tokens(reply.choices[0].message.content or "")

    def run(self, endpoint: Endpoint) -> Path:
        """Ask the model every selected sample; writes <results_dir>/<label>/<key>.json (T-Eval format)."""
        from openai import OpenAI

        client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for run in self.cfg.selected():
            data = json.loads(self.cfg.data_file(run).read_text())
            ids = list(data)[: self.cfg.max_samples] if self.cfg.max_samples is not None else list(data)
            with ThreadPoolExecutor(self.cfg.workers) as pool:
                prompts = [data[sid]["origin_prompt"] for sid in ids]
                replies = pool.map(lambda prompt: self._ask(client, endpoint, prompt), prompts)
                preds = {sid: {**data[sid], "prediction": reply} for sid, reply in zip(ids, replies, strict=True)}
            (self.out_dir / f"{run.key}.json").write_text(json.dumps(preds, ensure_ascii=False, indent=1))
        return self.out_dir

    def score(self, run: Path | None = None) -> dict[str, Any]:
        """{"label", "files": {key: T-Eval metrics}, "abilities": {ability: 0..100, overall}}."""
        from prove.eval.teval_evaluators import opencompass_version

        run = Path(run or self.out_dir)
        files = {}
        for r in self.cfg.selected():
            path = run / f"{r.key}.json"
            if path.is_file():
                files[r.key] = evaluate_file(path, r, self.cfg.embedding_model)
        return {"label": self.cfg.label, "files": files, "abilities": combine(files),
                "embedding_model": self.cfg.embedding_model,
                "evaluators": f"T-Eval v2 via opencompass {opencompass_version()}"}


def write_results(scores: Sequence[dict[str, Any]], results_dir: str | Path) -> dict[str, Path]:
    """teval.csv (label x ability, 0..100) and teval.json (with every T-Eval metric)."""
    rows = [{"label": s["label"], "ability": a, "score": v} for s in scores for a, v in s["abilities"].items()]
    results_dir = Path(results_dir)
    return {"csv": write_table(rows, results_dir / "teval.csv", ["label", "ability", "score"]),
            "json": write_json(list(scores), results_dir / "teval.json")}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] != "score":
        print(__doc__)
        return 2
    model = argv[argv.index("--embedding-model") + 1] if "--embedding-model" in argv else EN_EMBEDDING_MODEL
    cfg = TEvalConfig(label=Path(argv[1]).name, embedding_model=model, results_dir=Path(argv[1]).parent)
    print(json.dumps(TEval(cfg).score(Path(argv[1])), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
