"""Turn boundaries per model family (prove.train.preflight.check_turn_boundaries): VERL's rollout
tokens of a tool-calling conversation equal the family's chat template's rendering of it.

The families' templates are test fixtures written to mirror each family's published template
(tests/train/fixtures/chat_templates/README.md), rendered with SmolLM2's tokenizer as the vocabulary
plus the family's marker tokens; no hub access is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from train_helpers import need_verl

from prove.llm.families import FAMILIES

TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"
HERMES_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
# family: (template file (None: the project's own SmolLM2 template), special tokens, added tokens,
#          eos (where generation stops), Hugging Face model_type of the family's models)
SPECS: dict[str, tuple[str | None, list[str], list[str], str, str]] = {
    "qwen3": ("qwen3.jinja", [], [*HERMES_TOKENS, "<think>", "</think>"], "<|im_end|>", "qwen3"),
    "qwen2.5": ("qwen2.5.jinja", [], HERMES_TOKENS, "<|im_end|>", "qwen2"),
    "granite": ("granite4.jinja", ["<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"],
                HERMES_TOKENS, "<|end_of_text|>", "granite"),
    "gemma": ("gemma.jinja", ["<start_of_turn>", "<end_of_turn>"], HERMES_TOKENS, "<end_of_turn>", "gemma3"),
    "smollm2": (None, [], [], "<|im_end|>", "llama"),
}
# VERL 0.9.1 has a boundary-aware builder for Qwen's model types only; the others fall back to its
# generic builder, which drops the newline the template writes after the end-of-turn token.
VERL_KEEPS = {"qwen3", "qwen2.5"}


def family_tokenizer(family: str) -> Any:
    """SmolLM2's tokenizer with ``family``'s marker tokens, eos and chat template (a fixture)."""
    from transformers import AutoTokenizer

    from prove.llm.weights import llm_extra_available
    from prove.train.chat_template import HERMES_CHATML_TEMPLATE, load_tokenizer, tokenizer_dir

    ok, why = llm_extra_available()
    if not ok:
        pytest.skip(f"SmolLM2 tokenizer unavailable: {why}")
    load_tokenizer()  # reads the GGUF once into tokenizer_dir()
    template, specials, added, eos, _ = SPECS[family]
    tok = AutoTokenizer.from_pretrained(tokenizer_dir())
    if specials:
        tok.add_special_tokens({"additional_special_tokens": specials})
    if added:
        tok.add_tokens(added)
    tok.eos_token = eos
    tok.chat_template = (TEMPLATES / template).read_text() if template else HERMES_CHATML_TEMPLATE
    return tok


def _overrides(family: str, thinking: bool = False) -> dict[str, Any]:
    from prove.llm.families import chat_template_kwargs

    return {"data.apply_chat_template_kwargs": chat_template_kwargs(family, thinking)}


def test_every_family_has_a_template_fixture() -> None:
    assert set(SPECS) == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(SPECS))
def test_verl_builders_keep_qwen_boundaries_and_drop_the_newline_of_the_others(family: str) -> None:
    """VERL's own choice (what ran before prove.train.agent_loop installed token_builder): it picks
    its builder by model_type. Qwen's builder inserts the newline
    after <|im_end|>; Granite, Gemma and SmolLM2 get the generic one and the check stops them,
    naming the family, the boundary and the fix."""
    need_verl()
    from verl.utils.tokenizer.continuous_token_wiring import create_continuous_token_builder

    from prove.train.preflight import check_turn_boundaries

    tok = family_tokenizer(family)
    model_type = SPECS[family][4]
    kwargs = _overrides(family)["data.apply_chat_template_kwargs"]
    verl_own = create_continuous_token_builder(tok, hf_model_type=model_type, chat_template_kwargs=kwargs)
    if family in VERL_KEEPS:
        check_turn_boundaries(tok, _overrides(family), family=family, hf_model_type=model_type,
                              builder=verl_own)
        return
    with pytest.raises(ValueError) as err:
        check_turn_boundaries(tok, _overrides(family), family=family, hf_model_type=model_type,
                              builder=verl_own)
    message = str(err.value)
    assert f"model family {family!r}" in message and "ContinuousTokenBuilder" in message
    assert "between assistant turn 1 and the tool turn after it" in message
    assert f"{SPECS[family][3]}\\n" in message.split("where the template renders")[1]  # eos, then \n
    assert "prove.train.chat_template.token_builder" in message


@pytest.mark.parametrize("family", sorted(SPECS))
def test_prove_token_builder_keeps_every_familys_boundaries(family: str) -> None:
    need_verl()
    from prove.train.chat_template import token_builder
    from prove.train.preflight import check_turn_boundaries

    tok = family_tokenizer(family)
    kwargs = _overrides(family)["data.apply_chat_template_kwargs"]
    builder = token_builder(tok, SPECS[family][4], kwargs)
    notes = check_turn_boundaries(tok, _overrides(family), family=family, builder=builder)
    assert bool(notes) == (family == "qwen3")  # only Qwen3 drops something when it re-renders


@pytest.mark.parametrize("thinking", [False, True])
def test_qwen3_drops_the_empty_think_block_of_an_earlier_turn_and_that_is_tolerated(thinking: bool) -> None:
    """The audit's concern: Qwen3's template drops earlier <think> blocks. The rollout keeps the
    empty block its generation prompt (thinking off) or the model (thinking on) wrote; the template
    re-renders that earlier turn without it. VERL trains on the rollout's own tokens, so training
    is consistent; the check reports it and passes. Anything else that differs fails."""
    need_verl()
    from prove.train.preflight import check_turn_boundaries

    tok = family_tokenizer("qwen3")
    rendered = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                       add_generation_prompt=True, enable_thinking=thinking)
    assert rendered.endswith("<think>\n\n</think>\n\n") != thinking
    notes = check_turn_boundaries(tok, _overrides("qwen3", thinking), family="qwen3", hf_model_type="qwen3")
    assert len(notes) == 1 and "empty <think></think> block" in notes[0] and "tolerated" in notes[0]


def test_the_preflight_runs_the_boundary_check_for_the_configs_family(monkeypatch: pytest.MonkeyPatch) -> None:
    """preflight(family=...) stops a Granite run on VERL's generic builder, and passes once the
    agent loop installs prove's builder (``prove.train.agent_loop.token_builder``)."""
    need_verl()
    import prove.train.agent_loop as loop
    from prove.train.chat_template import token_builder
    from prove.train.preflight import ATTN_KEY, preflight

    tok = family_tokenizer("granite")
    overrides = {"actor_rollout_ref.rollout.name": "hf", "+" + ATTN_KEY: "sdpa", **_overrides("granite")}
    if getattr(loop, "token_builder", None) is None:
        with pytest.raises(ValueError, match="model family 'granite'.*turn boundary between assistant turn 1"):
            preflight(overrides, tok, has_gpu=False, family="granite")
    monkeypatch.setattr(loop, "token_builder", token_builder, raising=False)
    preflight(overrides, tok, has_gpu=False, family="granite")


def test_the_rollouts_tool_parser_must_read_the_familys_call_format() -> None:
    from prove.train.preflight import FORMAT_KEY, check_call_format

    for family in SPECS:  # every family in the table writes hermes calls; the configs parse hermes
        assert check_call_format({}, family) == "hermes"
    with pytest.raises(ValueError, match="model family 'granite' writes hermes tool calls but .*format=gpt-oss"):
        check_call_format({FORMAT_KEY: "gpt-oss"}, "granite")
