"""How users of each app ask for things: hand-written intents, questions, off-tool requests, free text.

    intents = load_intents("hotels")          # data/intents/hotels.yaml
    intents.requests("write_hotel_review")    # ["I just got back from {reservation_id} and ...", ...]

One YAML file per server, written the way a person using that app talks (what they want, not
what the function does). For each tool:

- ``ask``: several user requests; ``{param}`` marks where the user mentions an argument's value
  (the renderer writes the value, a name for it, or "the one from before"). Every required
  parameter appears in every request; an optional one appears only where the request sets it.
- ``clarify``: per required parameter, how the assistant asks for that value when it is missing.
- ``text``: per free-text parameter, values that fit the field and the app (a hotel review reads
  like a hotel review).
- ``flags``: per boolean parameter a request mentions, how the user says it, [when true, when
  false] ("Store it {secret}." with ``secret: ["as a secret", "as a plain variable"]``), so a
  flag never reads as a question and its answer ("Unread only? yes"); a switch (``SWITCHES``:
  `on`, `enabled`, ...) reads "on"/"off" and needs none.

Per server, ``off_tool``: requests a user of that app would plausibly make that no tool serves;
``motives``: reasons a user of that app gives for what they ask, each with the tools whose requests
it fits (``{say: "I want to make sure the car is locked for the night.", fits: [lock_vehicle, ...]}``),
said now and then by a chatty persona with a turn whose every request it fits (``motives_for``).
`check_intents` states the rules (placeholders name real parameters, no run of five or more words
copied from the tool's description, enough variety); tests/synth/test_intents.py runs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml

from prove.env.registry import Registry, ServerSpec
from prove.profiles import repo_root

__all__ = ["Intents", "ToolIntents", "load_intents", "check_intents", "INTENTS_DIR", "copied_run",
           "placeholders", "MIN_REQUESTS", "MIN_OFF_TOOL", "MIN_TEXTS", "COPY_RUN", "intents_of",
           "tool_intents", "word_runs", "PLACEHOLDER", "MIN_MOTIVES", "SWITCHES"]

INTENTS_DIR = repo_root() / "data" / "intents"
MIN_REQUESTS = 4
MIN_OFF_TOOL = 8
MIN_TEXTS = 4
MIN_MOTIVES = 4
COPY_RUN = 5
"""A request may not repeat this many consecutive words of its tool's description."""

PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
"""A `{param}` mention in a written request."""
_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class ToolIntents:
    """What one tool's users say: requests, clarifying questions by parameter, free-text values."""

    ask: tuple[str, ...]
    clarify: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    text: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    flags: Mapping[str, tuple[str, str]] = field(default_factory=dict)


SWITCHES = frozenset({"on", "enabled", "enable", "active", "power", "muted", "locked"})
"""Boolean parameters that read "on"/"off" in a request ("Valet mode {enabled}")."""


@dataclass(frozen=True)
class Intents:
    """One server's intents file."""

    server: str
    tools: Mapping[str, ToolIntents]
    off_tool: tuple[str, ...]
    path: Path
    motives: tuple[str, ...] = ()
    fits: Mapping[str, frozenset[str]] = field(default_factory=dict)  # motive -> the tools it fits

    def requests(self, tool: str) -> tuple[str, ...]:
        return self.tools[tool].ask if tool in self.tools else ()

    def motives_for(self, tools: Iterable[str]) -> tuple[str, ...]:
        """The motives declared to fit every one of `tools` (a turn's requests), in file order."""
        wanted = set(tools)
        return tuple(m for m in self.motives if wanted and wanted <= self.fits.get(m, frozenset()))


def placeholders(text: str) -> list[str]:
    """The parameters a request mentions, in order."""
    return PLACEHOLDER.findall(text)


def _words(text: str) -> list[str]:
    return _WORD.findall(PLACEHOLDER.sub(" ", text.lower()))


@lru_cache(maxsize=4096)
def word_runs(source: str, n: int = COPY_RUN) -> frozenset[tuple[str, ...]]:
    """Every run of `n` consecutive words of `source` (memoised, bounded: descriptions repeat)."""
    have = _words(source)
    return frozenset(tuple(have[i:i + n]) for i in range(len(have) - n + 1))


def copied_run(text: str, source: str | frozenset[tuple[str, ...]], n: int = COPY_RUN) -> str | None:
    """The first run of `n` consecutive words of `text` that also occurs in `source` (a text, or
    the `word_runs` of one or more texts), or None."""
    grams = word_runs(source, n) if isinstance(source, str) else source
    words = _words(text)
    for i in range(len(words) - n + 1):
        if tuple(words[i:i + n]) in grams:
            return " ".join(words[i:i + n])
    return None


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


@cache
def load_intents(server: str, directory: str | None = None) -> Intents:
    """Read data/intents/<server>.yaml (or `directory`/<server>.yaml)."""
    path = Path(directory) if directory else INTENTS_DIR
    path = path / f"{server}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no intents for server '{server}': {path} is missing")
    data = yaml.safe_load(path.read_text()) or {}
    unknown = set(data) - {"tools", "off_tool", "motives"}
    if unknown:
        raise ValueError(f"{path}: unknown top-level keys {sorted(unknown)}; valid: motives, off_tool, tools")
    tools: dict[str, ToolIntents] = {}
    for name, entry in (data.get("tools") or {}).items():
        if not isinstance(entry, dict) or set(entry) - {"ask", "clarify", "text", "flags"}:
            raise ValueError(f"{path}: tools.{name} must be a mapping with keys ask, clarify, text, flags")
        flags = {}
        for p, v in (entry.get("flags") or {}).items():
            said = _strings(v, f"{path}: tools.{name}.flags.{p}")
            if len(said) != 2:
                raise ValueError(f"{path}: tools.{name}.flags.{p} must be two phrases, [when true, when false]")
            flags[p] = (said[0], said[1])
        tools[name] = ToolIntents(
            ask=_strings(entry.get("ask"), f"{path}: tools.{name}.ask"),
            clarify={p: _strings(v, f"{path}: tools.{name}.clarify.{p}")
                     for p, v in (entry.get("clarify") or {}).items()},
            text={p: _strings(v, f"{path}: tools.{name}.text.{p}")
                  for p, v in (entry.get("text") or {}).items()},
            flags=flags,
        )
    motives, fits = _motives(data.get("motives"), f"{path}: motives")
    return Intents(server, tools, _strings(data.get("off_tool"), f"{path}: off_tool"), path, motives, fits)


def _motives(value: Any, where: str) -> tuple[tuple[str, ...], dict[str, frozenset[str]]]:
    """The motives of a file, each ``{say: "<sentence>", fits: [<tool>, ...]}``: the reason and the
    requests it fits (a reason is given only with a request it is declared for)."""
    if value is None:
        return (), {}
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list of {{say: <sentence>, fits: [<tool>, ...]}}")
    texts, fits = [], {}
    for n, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) != {"say", "fits"}:
            raise ValueError(f"{where}[{n}] must be a mapping with keys say (the reason) and fits (the "
                             f"tools whose requests it fits), not {entry!r}")
        say = _strings([entry["say"]], f"{where}[{n}].say")[0]
        texts.append(say)
        fits[say] = frozenset(_strings(entry["fits"], f"{where}[{n}].fits"))
    return tuple(texts), fits


def intents_of(server: str) -> Intents | None:
    """The server's intents, or None when it has no file yet (synthesis then uses the tool's own
    phrasings)."""
    try:
        return load_intents(server)
    except FileNotFoundError:
        return None


def tool_intents(server: str, tool: str) -> ToolIntents | None:
    """One tool's intents, or None."""
    found = intents_of(server)
    return found.tools.get(tool) if found is not None else None


def _free_text(schema: Mapping[str, Any]) -> bool:
    from prove.env.types import declared_entity, declared_format

    if declared_entity(schema) or declared_format(schema) or "enum" in schema:
        return False
    options = [o for o in schema.get("anyOf", ()) if o.get("type") != "null"] or [schema]
    return any(o.get("type") == "string" and "enum" not in o and "pattern" not in o for o in options)


def check_intents(server: ServerSpec, intents: Intents, registry: Registry | None = None) -> list[str]:
    """Every way the file breaks the rules, as readable lines (empty when it keeps them)."""
    problems: list[str] = []
    where = f"{intents.path.name}"
    names = {t.name for t in server.tools}
    for extra in sorted(set(intents.tools) - names):
        problems.append(f"{where}: '{extra}' is not a tool of {server.name}")
    for t in server.tools:
        entry = intents.tools.get(t.name)
        if entry is None:
            problems.append(f"{where}: no intents for tool {t.name}")
            continue
        if len(set(entry.ask)) < MIN_REQUESTS:
            problems.append(f"{where}: {t.name} needs at least {MIN_REQUESTS} different requests")
        starts = {" ".join(_words(a)[:2]) for a in entry.ask}
        if len(entry.ask) >= MIN_REQUESTS and len(starts) < min(3, len(entry.ask)):
            problems.append(f"{where}: {t.name}: vary how requests start (only {sorted(starts)})")
        for ask in entry.ask:
            used = placeholders(ask)
            for p in used:
                if p not in t.params:
                    problems.append(f"{where}: {t.name}: '{{{p}}}' is not a parameter "
                                    f"(valid: {', '.join(t.params) or 'none'}) in: {ask}")
            for p in t.required:
                if p not in used:
                    problems.append(f"{where}: {t.name}: required '{{{p}}}' missing from: {ask}")
            if len(used) != len(set(used)):
                problems.append(f"{where}: {t.name}: a parameter is mentioned twice in: {ask}")
            run = copied_run(ask, t.description)
            if run:
                problems.append(f"{where}: {t.name}: copies '{run}' from the description: {ask}")
        props = t.input_schema.get("properties", {})
        for p in t.required:
            if p in props and p not in entry.clarify:
                problems.append(f"{where}: {t.name}: no clarify questions for required '{p}'")
        for p in entry.flags:
            if p not in props or not _boolean(props[p]):
                problems.append(f"{where}: {t.name}: flags names '{p}', which is not a boolean parameter")
        for ask in entry.ask:
            for p in placeholders(ask):
                if p in props and _boolean(props[p]) and p not in entry.flags and p not in SWITCHES \
                        and not p.endswith("_only"):
                    problems.append(f"{where}: {t.name}: boolean '{{{p}}}' needs flags (how a person says "
                                    f"it when true and when false) in: {ask}")
        for p, qs in entry.clarify.items():
            if p not in t.params:
                problems.append(f"{where}: {t.name}: clarify names unknown parameter '{p}'")
            for q in qs:
                if "?" not in q or placeholders(q):
                    problems.append(f"{where}: {t.name}: a clarify question asks in words, with a "
                                    f"'?' and no placeholder: {q}")
        for p, schema in props.items():
            if _free_text(schema) and any(p in placeholders(a) for a in entry.ask):
                if len(set(entry.text.get(p, ()))) < MIN_TEXTS:
                    problems.append(f"{where}: {t.name}: free-text '{p}' needs at least {MIN_TEXTS} "
                                    "values under text")
        for p in entry.text:
            if p not in t.params:
                problems.append(f"{where}: {t.name}: text names unknown parameter '{p}'")
    if len(set(intents.off_tool)) < MIN_OFF_TOOL:
        problems.append(f"{where}: off_tool needs at least {MIN_OFF_TOOL} different requests")
    for text in intents.off_tool:
        if placeholders(text):
            problems.append(f"{where}: off_tool requests take no placeholders: {text}")
    if len(set(intents.motives)) < MIN_MOTIVES:
        problems.append(f"{where}: motives needs at least {MIN_MOTIVES} different reasons")
    for text in intents.motives:
        if placeholders(text) or not text.rstrip().endswith((".", "!")):
            problems.append(f"{where}: a motive is one plain sentence, no placeholders: {text}")
        for extra in sorted(intents.fits.get(text, frozenset()) - names):
            problems.append(f"{where}: motive '{text}' fits '{extra}', which is not a tool of {server.name}")
    return problems


def all_requests(intents: Sequence[Intents]) -> list[str]:
    """Every request of every tool (for the data-quality report)."""
    return [a for i in intents for t in i.tools.values() for a in t.ask]


def _boolean(schema: Mapping[str, Any]) -> bool:
    """A parameter's schema takes true/false (directly or as one of its `anyOf`)."""
    return schema.get("type") == "boolean" or any(
        isinstance(a, Mapping) and a.get("type") == "boolean" for a in schema.get("anyOf", ()))
