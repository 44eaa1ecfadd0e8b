"""Which kinds of example the selected servers can produce, read from declarations before any attempt.

    report = kind_feasibility(chains, registry, servers)   # kind -> server -> why not (None: it can)
    require_feasible(sizes, report, say)                    # raises SynthesisInfeasible

What a kind needs of a chain (the chain pool draws a server, then one of the chains that start on
it; see ``prove.synth.perturb.build_script`` and ``prove.synth.planner``): a multi-turn example
splits its chain into two or more user turns, so the chain needs two or more calls; a
clarification withholds one required parameter of the chain's first call, one the user supplies
(an id, number, date, enum value or text; not paging, not a yes/no flag: the planner fills those
itself or asks nothing about them), so the first tool must declare one; an abstention needs a
chain for the conversation around its off-topic request. A server no chain starts on produces
no kind. All of it is read from the tools' schemas and the chains, nothing is run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from prove.env.registry import Registry
from prove.env.tool import ToolSpec
from prove.graph.chains import Chain
from prove.graph.features import PAGING
from prove.synth.records import KINDS
from prove.synth.sampling import schema_enum

__all__ = ["NEEDS", "SynthesisInfeasible", "kind_feasibility", "require_feasible",
           "withholdable"]

NEEDS: dict[str, str] = {
    "multi_turn": "a tool chain of two or more calls (one user turn each)",
    "clarification": "a tool chain whose first tool requires a parameter the user supplies (an "
                     "id, number, date, enum value or text), which the user leaves out until asked",
    "abstention": "a tool chain (the conversation the off-topic request is part of)",
}
"""What one example of each kind needs of the chain it is built on."""

Report = dict[str, dict[str, str | None]]  # kind -> server -> why it cannot (None: it can)


class SynthesisInfeasible(ValueError):
    """No selected server can produce a kind that was asked for; ``kinds`` maps each such kind to
    its servers' reasons. Raised before any example is attempted."""

    def __init__(self, message: str, kinds: Mapping[str, Mapping[str, str]]) -> None:
        super().__init__(message)
        self.kinds = {k: dict(v) for k, v in kinds.items()}


def _is_flag(schema: Mapping[str, Any]) -> bool:
    """A yes/no parameter (boolean, through anyOf-null and array items, without an enum)."""
    if schema_enum(dict(schema)):
        return False
    options = [s for s in schema.get("anyOf", ()) if isinstance(s, dict) and s.get("type") != "null"]
    base = options[0] if options else schema
    if base.get("type") == "array" and isinstance(base.get("items"), dict):
        base = base["items"]
    return base.get("type") == "boolean"


def withholdable(spec: ToolSpec) -> list[str]:
    """The required parameters of ``spec`` that a user supplies and a clarification can withhold:
    every required one but paging parameters and yes/no flags."""
    props = spec.input_schema.get("properties", {})
    return [p for p in spec.required if p not in PAGING and not _is_flag(props.get(p, {}))]


def _names(tools: Iterable[str], limit: int = 4) -> str:
    tools = sorted(set(tools))
    shown = ", ".join(tools[:limit])
    return shown + (f" and {len(tools) - limit} more" if len(tools) > limit else "")


def _reasons(chains: Sequence[Chain], registry: Registry) -> dict[str, str | None]:
    """Why these chains (all starting on one server) cannot make each kind; None where they can."""
    if not chains:
        return {kind: "no tool chain starts on it (the tool graph links none of its tools)"
                for kind in KINDS}
    out: dict[str, str | None] = {"abstention": None}
    if any(len(c) >= 2 for c in chains):
        out["multi_turn"] = None
    else:
        out["multi_turn"] = "its chains hold one call each (" + _names(c.tools[0] for c in chains) + ")"
    firsts = {c.tools[0] for c in chains}
    if any(withholdable(registry.tool(t)) for t in firsts):
        out["clarification"] = None
    else:
        out["clarification"] = (f"nothing the user supplies to withhold in {_names(firsts)}, the "
                                "tools its chains start with (no required parameter but paging "
                                "or yes/no flags)")
    return {kind: out[kind] for kind in KINDS}


def kind_feasibility(chains: Sequence[Chain], registry: Registry,
                     servers: Sequence[str] | None = None) -> Report:
    """For each kind and each server (``servers``, else every server of ``registry``), why no
    example of the kind can be built on the chains that start on that server, or None when one
    can."""
    names = list(servers) if servers else sorted(registry.servers)
    by_server: dict[str, list[Chain]] = {s: [] for s in names}
    for chain in chains:
        by_server.setdefault(chain.servers[0], []).append(chain)
    per_server = {s: _reasons(by_server[s], registry) for s in names}
    return {kind: {s: per_server[s][kind] for s in names} for kind in KINDS}


def require_feasible(sizes: Mapping[str, int], report: Report,
                     say: Callable[[str], None] | None = None) -> None:
    """Raise ``SynthesisInfeasible`` when a kind asked for (size > 0) has no server that can
    produce it, naming the kind, each server's reason and what to do; with ``say``, report the
    servers that cannot produce a kind asked for when others can (those examples come from the
    others)."""
    blocked: dict[str, dict[str, str]] = {}
    for kind in KINDS:
        if int(sizes.get(kind, 0)) <= 0:
            continue
        reasons = report.get(kind, {})
        cannot = {s: why for s, why in reasons.items() if why is not None}
        if not cannot:
            continue
        if len(cannot) == len(reasons):
            blocked[kind] = cannot
        elif say is not None:
            can = [s for s, why in reasons.items() if why is None]
            detail = "; ".join(f"{s}: {why}" for s, why in cannot.items())
            say(f"{kind}: {_names(cannot, 8)} cannot produce it ({detail}); "
                f"its examples come from {_names(can, 8)}")
    if not blocked:
        return
    lines = []
    for kind, cannot in blocked.items():
        servers = ", ".join(cannot)
        detail = "; ".join(f"{s}: {why}" for s, why in cannot.items())
        lines.append(f"{kind} ({int(sizes[kind])} asked for): no server of {servers} can produce "
                     f"it. A {kind} example needs {NEEDS[kind]}; {detail}.")
    kinds = ", ".join(blocked)
    zero = ", ".join(f"{k!r}: 0" for k in blocked)
    raise SynthesisInfeasible(
        "cannot synthesize " + kinds + ": " + " ".join(lines) + " Ask for none of it (SynthConfig."
        f"sizes {{{zero}}}), or add servers that can (SynthConfig.servers).", blocked)
