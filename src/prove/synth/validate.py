"""Replay validation and filters: replay ground truth on a fresh episode (results, state hash and
each turn's effect on the records), error rate, provenance.

    reason = check_example(example, hub)      # None when kept, else "offered_tools", "abstention_served",
                                              # "two_people", "replay_mismatch", "error_rate", "provenance",
                                              # "unstated_person"
    report = replay_example(example, Hub())    # from a JSONL line alone, on a fresh server

Everything is recomputed from the example itself (messages, turns, seed, servers), so a forged or
corrupted example is judged on what it contains, not on what its generator claimed; the error rate
and provenance checks are `prove.synth.evidence`'s, the same ones generation recorded, and an
abstention whose request an offered tool serves is `prove.synth.abstain`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prove.env.effects import effect_hash
from prove.env.hub import Hub
from prove.env.registry import Registry
from prove.synth.abstain import AbstentionCheck
from prove.synth.evidence import (
    call_stats,
    ground_truth_calls,
    provenance,
    successful_tool_messages,
)
from prove.synth.quality import two_people

__all__ = ["ReplayReport", "replay_example", "check_example", "offered_problems", "MAX_ERROR_RATE"]

MAX_ERROR_RATE = 0.30
"""Keep a conversation only if fewer than 30% of its calls failed (the paper's filter)."""


@dataclass
class ReplayReport:
    ok: bool
    state_hash: str = ""
    reason: str = ""
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    turn_effects: list[str] = field(default_factory=list)  # effect hash after each turn


def replay_example(example: Mapping[str, Any], hub: Hub, episode: str | None = None) -> ReplayReport:
    """Replay every ground-truth call on a fresh episode of the example's seed; compare each
    result with the conversation's tool message, the final state hash and each turn's effect
    (prove.env.effects, cumulative) with the recorded ones."""
    episode = episode or f"{example['id']}/replay"
    hub.close(episode)
    hub.open(episode, int(example["seed"]))
    mismatches: list[dict[str, Any]] = []
    try:
        expected = [r for _, r in successful_tool_messages(example)]
        gt = ground_truth_calls(example)
        if len(expected) != len(gt):
            return ReplayReport(False, "", "call_count", [{"gt": len(gt), "messages": len(expected)}])
        turn_effects: list[str] = []  # the effect on the records after each turn (cumulative)
        pairs = list(zip(gt, expected, strict=True))
        for k in range(len(example.get("turns", ()))):
            for (_, i, call), want in (p for p in pairs if p[0][0] == k):
                got = hub.call(call["name"], call.get("arguments", {}), episode_id=episode)
                if not got["ok"]:
                    mismatches.append({"turn": k, "call": i, "error": str(got["error"])[:200]})
                elif got["result"] != want:
                    mismatches.append({"turn": k, "call": i, "error": "result differs"})
            turn_effects.append(effect_hash(hub.effect(episode, example["servers"])))
        state_hash = hub.state_hash(episode, example["servers"])
    finally:
        hub.close(episode)
    replay = example.get("replay") or {}
    recorded = replay.get("state_hash")
    if mismatches:
        return ReplayReport(False, state_hash, "result_mismatch", mismatches)
    if state_hash != recorded:
        return ReplayReport(False, state_hash, "hash_mismatch", [{"recorded": recorded, "replayed": state_hash}])
    if "turn_effects" in replay and replay["turn_effects"] != turn_effects:
        return ReplayReport(False, state_hash, "effect_mismatch",
                            [{"recorded": replay["turn_effects"], "replayed": turn_effects}])
    return ReplayReport(True, state_hash, turn_effects=turn_effects)


def offered_problems(example: Mapping[str, Any], registry: Registry) -> list[str]:
    """How the offered tools differ from the example's servers' tools plus its recorded
    distractors (each once); [] when they are exactly that."""
    offered = [t["function"]["name"] for t in example.get("tools", ())]
    recorded = {n for p in example.get("perturbations", ()) if p.get("type") == "distractor_tools"
                for n in p.get("tools", ())}
    servers = set(example.get("servers", ()))
    should = {t.name for s in servers for t in registry.server(s).tools} | recorded
    problems = [f"offered twice: {n}" for n in sorted({n for n in offered if offered.count(n) > 1})]
    extra = sorted(set(offered) - should)
    if extra:
        others = sorted({registry.tool(n).server for n in extra if n in registry.tools})
        problems.append(f"offered but neither of servers {sorted(servers)} nor a recorded "
                        f"distractor: {', '.join(extra[:5])} (servers {', '.join(others)})")
    missing = sorted(should - set(offered))
    if missing:
        problems.append(f"not offered: {', '.join(missing[:5])}")
    return problems


def check_example(example: Mapping[str, Any], hub: Hub, max_error_rate: float = MAX_ERROR_RATE,
                  ) -> tuple[str | None, str]:
    """(rejection reason or None, detail): the offered tools, an abstention a tool serves, one
    person per conversation ("two_people": the calls act as two users, or the user states an id
    other than the one they act as), replay,
    then error rate, then provenance ("unstated_person": a person's id from a result no record the
    user named holds; "provenance": any other value from nowhere the user saw)."""
    offered = offered_problems(example, hub.registry)
    if offered:
        return "offered_tools", "; ".join(offered)[:300]
    served = AbstentionCheck.load().example(example)
    if served is not None:
        return "abstention_served", served[:300]
    two = two_people(example, hub.registry)
    if two is not None:
        return "two_people", two
    report = replay_example(example, hub)
    if not report.ok:
        return "replay_mismatch", f"{report.reason}: {report.mismatches[:2]}"
    n_calls, n_errors = call_stats(example)
    if n_calls and n_errors / n_calls >= max_error_rate:
        return "error_rate", f"{n_errors}/{n_calls} calls failed"
    _, missing = provenance(example, hub.registry)
    if missing:
        reason = "unstated_person" if missing[0].get("person") else "provenance"
        return reason, json.dumps(missing[0], sort_keys=True, default=str)[:300]
    return None, ""
