"""Abstentions checked against the offered tools: a request a tool serves is no abstention.

    check = AbstentionCheck.load()                       # data/synth/abstention.yaml
    served = check.served("Empty the trash.", example["tools"])   # [] when no offered tool serves it
    reason = check.example(example)                      # None, or why the abstention is wrong

A request is served by an offered tool when, after synonyms (a user's verb for the tool's:
"forward" -> "send", "empty" -> "delete"), its content words hold the tool's act (the first word
of its name, unless a mere read: get, list, ...) and its object (the last word): "Forward that
message to my sister" beside ``send_chat_message``; or when it holds every word of a near-miss the
data file lists for that tool: "Empty the trash" beside ``delete_email``, whose description says
deleting a message in Trash removes it for good. Run on every abstention by the pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from prove.graph.features import singular
from prove.profiles import repo_root

__all__ = ["AbstentionCheck", "Served", "DATA_FILE", "content_words", "GENERIC_ACTS", "abstention_problems"]

DATA_FILE = repo_root() / "data" / "synth" / "abstention.yaml"
GENERIC_ACTS = frozenset({"get", "list", "search", "find", "view", "show", "check", "lookup", "read",
                          "browse", "count", "summarize", "summarise", "preview", "quote"})
"""Acts of reads: a request that names one of these and a thing asks about the thing in a way
(its history, a chart, a diff) that a read of it may not serve, so a read is judged by near-misses only."""

STOPWORDS = frozenset("""
a an the this that these those it its it's i i'm me my mine we our you your he she they them their
to of in on at by for with from into onto about as and or but if then so than too very just also
is are was were be been being am do does did done have has had can could would should will shall
may might must what what's which who whom whose when where why how all any every each some no not
please thanks thank one ones up out over again there here now yet still get got let make want need
like go going gonna know see tell give take put new old next last first same other another
""".split())
"""Words that say nothing about which tool is meant."""

_WORD = re.compile(r"[a-z][a-z0-9'\-]*")


@dataclass(frozen=True)
class Served:
    """An offered tool that serves a request, and why."""

    tool: str
    why: str


def content_words(text: str, synonyms: Mapping[str, str] | None = None) -> list[str]:
    """A text's words that can name a tool's act or object, in order: lower-cased, singular, not
    in ``STOPWORDS``, each mapped through `synonyms`."""
    out = []
    for w in _WORD.findall(text.lower().replace("_", " ")):
        w = w.strip("'-")
        if w.endswith("'s"):
            w = w[:-2]
        if len(w) < 2 or w in STOPWORDS:
            continue
        w = singular(w)
        out.append((synonyms or {}).get(w, w))
    return out


@dataclass(frozen=True)
class AbstentionCheck:
    """Synonyms and near-misses (from the data file) and the rule of the module docstring."""

    synonyms: Mapping[str, str]
    near_misses: tuple[tuple[frozenset[str], str, str], ...]

    @classmethod
    def load(cls, path: str | Path | None = None) -> AbstentionCheck:
        """The check with `path`'s synonyms and near-misses (default ``DATA_FILE``)."""
        return _load(str(path or DATA_FILE))

    def _tool_name(self, schema: Mapping[str, Any]) -> tuple[str, list[str]]:
        """A tool's name and its words (singular): its act first, its object last."""
        name = str(schema.get("function", schema).get("name", ""))
        return name, [singular(w) for w in name.lower().split("_") if w]

    @staticmethod
    def _asks(named: Sequence[str], order: Sequence[str]) -> bool:
        """The request's words hold the tool's act (not a read) and, after it, its object, and one
        of the words between them in the name when it has any (``update_shipping_address`` needs
        "shipping": "change the email address" is another address)."""
        if len(named) < 2 or named[0] in GENERIC_ACTS or named[0] not in order or named[-1] not in order:
            return False
        act = order.index(named[0])
        if act >= len(order) - 1 - order[::-1].index(named[-1]):
            return False
        middle = named[1:-1]
        return not middle or any(w in order for w in middle)

    def served(self, request: str, tools: Iterable[Mapping[str, Any]]) -> list[Served]:
        """The offered tools (OpenAI schemas) that serve `request`, in the order offered."""
        order = content_words(request, self.synonyms)
        words = set(order)
        if not words:
            return []
        out = []
        for schema in tools:
            name, named = self._tool_name(schema)
            near = next((why for need, tool, why in self.near_misses if tool == name and need <= words), None)
            if near is not None:
                out.append(Served(name, f"near-miss: {near}"))
            elif self._asks(named, order):
                out.append(Served(name, f"the request asks to {named[0]} {' '.join(named[1:])}"))
        return out

    def example(self, example: Mapping[str, Any]) -> str | None:
        """Why an abstention example is wrong (an offered tool serves its request), or None; None
        for other kinds. The request is the last user turn (the turn the assistant declines)."""
        if example.get("kind") != "abstention":
            return None
        users = [str(m.get("content") or "") for m in example.get("messages", ()) if m.get("role") == "user"]
        if not users:
            return None
        found = self.served(users[-1], example.get("tools", ()))
        if not found:
            return None
        return f"{users[-1]!r} is served by " + "; ".join(f"{s.tool} ({s.why})" for s in found[:3])


@cache
def _load(path: str) -> AbstentionCheck:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: the abstention check's data file is missing (synonyms, near_misses)")
    data = yaml.safe_load(p.read_text()) or {}
    unknown = set(data) - {"synonyms", "near_misses"}
    if unknown:
        raise ValueError(f"{p}: unknown keys {sorted(unknown)}; valid: near_misses, synonyms")
    synonyms = {str(k).lower(): str(v).lower() for k, v in (data.get("synonyms") or {}).items()}
    near: list[tuple[frozenset[str], str, str]] = []
    for i, entry in enumerate(data.get("near_misses") or ()):
        if not isinstance(entry, Mapping) or not entry.get("words") or not entry.get("tool"):
            raise ValueError(f"{p}: near_misses[{i}] needs words (a list) and tool; got {entry!r}")
        words = frozenset(content_words(" ".join(map(str, entry["words"])), synonyms))
        if not words:
            raise ValueError(f"{p}: near_misses[{i}] has no content words: {entry['words']!r}")
        near.append((words, str(entry["tool"]), str(entry.get("why", ""))))
    return AbstentionCheck(synonyms, tuple(near))


def abstention_problems(examples: Sequence[Mapping[str, Any]], check: AbstentionCheck | None = None
                        ) -> list[tuple[str, str]]:
    """(example id, why) for every abstention an offered tool serves."""
    check = check or AbstentionCheck.load()
    return [(str(e.get("id")), why) for e in examples if (why := check.example(e)) is not None]
