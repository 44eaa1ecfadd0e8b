"""The paper's teacher-robustness comparison: the same slice synthesized with each teacher, side by side.

    from prove.synth.teachers import compare_teachers
    prof = load_profile("paper")
    table = await compare_teachers(cfg, prof.teacher, [prof.teacher.model, prof.teacher.compare_model],
                             prof.teacher.compare_examples, results / "synth_teachers",
                             thinking=prof.thinking)

Each teacher is served in turn by the profile's launcher (``prove.llm.teacher.teacher_endpoint``,
the same chat-template settings as 03's main run) and synthesizes ``n`` examples of each kind from
the same seed, chains and worlds; the table holds, per teacher, what was kept, what was rejected and
why, and the card's data-quality measures (``prove.synth.quality``). Only the teacher differs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from prove.profiles import TeacherSettings
from prove.synth.pipeline import SynthConfig, SynthesisStalled, asynthesize
from prove.synth.quality import flat_report

if TYPE_CHECKING:
    from prove.llm.endpoint import Endpoint

__all__ = ["compare_teachers"]


async def compare_teachers(cfg: SynthConfig, settings: TeacherSettings, models: Sequence[str], n: int,
                     out: str | Path, *, thinking: bool = False) -> pd.DataFrame:
    """One column per teacher (``models``, served one after the other): kept and rejected examples
    of an ``n``-per-kind slice, and its data-quality measures. Writes ``out/<i>/`` and
    ``out/teacher_comparison.csv``. A model named twice is served once and asked for both columns."""
    from prove.llm.teacher import teacher_endpoint

    if n < 1 or not models:
        raise ValueError(f"the comparison needs n >= 1 examples per kind and a teacher (got n={n}, "
                         f"models={list(models)})")
    out = Path(out)
    columns: dict[int, tuple[str, dict[str, object]]] = {}
    for model in dict.fromkeys(models):  # a model named twice (the rehearsal's stand-ins) is served once
        with teacher_endpoint(settings, model=model, thinking=thinking) as llm:
            for i in (i for i, m in enumerate(models) if m == model):
                columns[i] = (f"{i}: {model}", await _slice(cfg, settings, llm, n, out / str(i)))
    table = pd.DataFrame(dict(columns[i] for i in sorted(columns)))
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "teacher_comparison.csv")
    return table


async def _slice(cfg: SynthConfig, settings: TeacherSettings, llm: Endpoint, n: int, out: Path) -> dict[str, object]:
    """One teacher's column: what its ``n``-per-kind slice kept and rejected, and its quality measures."""
    import json

    run = dataclasses.replace(cfg, teacher="openai", base_url=llm.base_url, model=llm.model,
                              chat_template_kwargs=dict(llm.chat_template_kwargs or {}),
                              sizes={kind: n for kind in cfg.sizes},
                              max_attempts=cfg.max_attempts or settings.compare_max_attempts or max(16, 8 * n))
    try:
        result = await asynthesize(run, out)
    except SynthesisStalled as exc:  # a teacher that keeps nothing is a result, not a crash
        return {"kept": 0, "stalled": str(exc)}
    card = json.loads((out / "card.json").read_text())
    rejected = {f"rejected.{k}": v for kind in result.funnel.values()
                for k, v in (kind.get("rejected") or {}).items()}
    return {"kept": sum(result.kept.values()), "attempted": sum(k.get("attempted", 0) for k in result.funnel.values()),
            **rejected, **flat_report(card.get("quality"))}
