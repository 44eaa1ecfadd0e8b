"""Checks a GRPO run must pass before any GPU work: attention the machine can run, a tool-aware
template, turn boundaries the rollout keeps.

    from prove.train.preflight import preflight
    preflight(overrides, cfg.model, family=cfg.family)   # raises ValueError saying what to change

``verl_overrides`` is what VERL will be given: a mapping of dotted override keys (``TrainConfig.
verl``, a leading ``+`` allowed), a list of ``key=value`` strings, or the composed config
(``prove.train.compose.check_grpo``). A key that is absent has VERL 0.9.1's default.

Attention. VERL loads the actor and reference with ``actor_rollout_ref.model.override_config.
attn_implementation`` (default ``flash_attention_2``, ``verl/workers/config/model.py``). With
``use_remove_padding`` (VERL's default, and the paper config's) the micro-batch is packed into one
row with ``attention_mask=None`` and position ids that restart at every sequence:

* ``flash_attention_2``/``_3`` run packed rows through flash-attn's varlen kernel (VERL patches
  ``_flash_attention_forward``); they need CUDA and the ``flash_attn`` (``flash_attn_interface``)
  package, which the ``gpu`` extra does not install (flash-attn builds against the installed torch
  and CUDA: ``pip install flash-attn==2.8.3 --no-build-isolation``, as VERL's install docs do).
* ``sdpa`` and ``eager`` are correct on packed rows only because transformers builds a
  block-diagonal causal mask from the restarting position ids (``masking_utils.
  find_packed_sequence_indices``, used when there is no attention mask and no KV cache: VERL's
  FSDP engine calls the model with ``use_cache=False``); a transformers without it would let
  packed sequences attend to each other, so it is checked (``tests/train/test_train_preflight.py``
  compares packed and separate logits). They cost an O(tokens²) mask per micro-batch; Ulysses
  sequence parallelism needs flash attention.

The documented choice for the paper profile: ``+actor_rollout_ref.model.override_config.
attn_implementation=sdpa`` unless flash-attn is installed on the GPU machine (the ``gpu`` extra
cannot install it: pip would build it in isolation, without torch, and its build fetches a
prebuilt binary from outside the package registry).

Template. The policy learns the call format its chat template teaches, and VERL's ``hermes`` parser
reads ``<tool_call>{"name", "arguments"}</tool_call>``: a tiny conversation with one offered tool
and one call is rendered through the tokenizer's template (``actor_rollout_ref.model.
custom_chat_template`` if set, ``data.apply_chat_template_kwargs`` applied) and must show the
tool's schema and the call, in hermes form when the format is ``hermes``.

Turn boundaries (:func:`check_turn_boundaries`, per model family). VERL 0.9.1's agent loop never
re-renders a rollout: it keeps the first prompt's tokens, appends what the model generated up to
its stop token, and appends each tool turn as the increment its continuous-token builder computes
(chosen by the model's ``model_type``: Qwen's inserts the ``\n`` ChatML writes after
``<|im_end|>``; every family VERL has no builder for gets a generic one that inserts nothing).
The check builds a system+tools, user, tool call, tool result, answer conversation that way and
compares it with the template's rendering of the same conversation; a difference (Granite's,
Gemma's and SmolLM2's newline after the end-of-turn token under the generic builder) stops the
run naming the family, the boundary and the fix (``prove.train.chat_template.token_builder``). The
one tolerated difference is Qwen3's: the template drops an empty ``<think></think>`` block of an
earlier turn that the rollout keeps (VERL trains on the rollout's tokens, so training is
consistent). ``tests/train/test_train_boundaries.py`` runs it for every family of
``prove.llm.families`` on fixture templates that mirror the published ones.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["preflight", "check_attention", "check_chat_template", "check_turn_boundaries", "setting",
           "ATTN_KEY", "BOUNDARY_CONVERSATION", "FAMILY_MODEL_TYPES", "rollout_token_builder", "check_call_format"]

ATTN_KEY = "actor_rollout_ref.model.override_config.attn_implementation"
RMPAD_KEY = "actor_rollout_ref.model.use_remove_padding"
SP_KEY = "actor_rollout_ref.actor.ulysses_sequence_parallel_size"
TEMPLATE_KEY = "actor_rollout_ref.model.custom_chat_template"
FORMAT_KEY = "actor_rollout_ref.rollout.multi_turn.format"
ROLLOUT_KEY = "actor_rollout_ref.rollout.name"
TEMPLATE_KWARGS_KEY = "data.apply_chat_template_kwargs"
DEFAULTS: dict[str, Any] = {  # VERL 0.9.1's defaults for the keys read here
    ATTN_KEY: "flash_attention_2", RMPAD_KEY: True, SP_KEY: 1, TEMPLATE_KEY: None,
    FORMAT_KEY: "hermes", ROLLOUT_KEY: "vllm", TEMPLATE_KWARGS_KEY: {},
}
FLASH = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}
PACKED_OK = ("sdpa", "eager")
GPU_ROLLOUTS = ("vllm", "sglang", "trtllm")

_PROBE_TOOL = {"type": "function", "function": {
    "name": "prove_preflight_probe", "description": "Look up the probe record for preflight_marker_7f3.",
    "parameters": {"type": "object", "properties": {
        "record_id": {"type": "string", "description": "Probe record id."}}, "required": ["record_id"]}}}
_PROBE_ARGS = {"record_id": "REC-4242"}


def _parse(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none", "~"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text.strip().strip("'\"")


def setting(verl_overrides: Any, key: str) -> Any:
    """One setting of ``verl_overrides`` (mapping, ``key=value`` list, or composed config), or
    VERL's default when it is not there."""
    if isinstance(verl_overrides, Mapping) and not hasattr(verl_overrides, "_get_node"):
        for k in (key, "+" + key, "++" + key):
            if k in verl_overrides:
                return verl_overrides[k]
        node: Any = verl_overrides
        for part in key.split("."):  # a nested dict
            if not isinstance(node, Mapping) or part not in node:
                return DEFAULTS.get(key)
            node = node[part]
        return node
    if isinstance(verl_overrides, Sequence) and not isinstance(verl_overrides, str):
        found = DEFAULTS.get(key)
        for item in verl_overrides:
            k, sep, v = str(item).partition("=")
            if sep and k.lstrip("+") == key:
                found = _parse(v)
            elif sep and k.lstrip("+").startswith(key + ".") and isinstance(found, Mapping):
                found = {**found, k.lstrip("+")[len(key) + 1:]: _parse(v)}  # one key of a dict
        return found
    from omegaconf import OmegaConf

    value = OmegaConf.select(verl_overrides, key, default=DEFAULTS.get(key))
    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_attention(verl_overrides: Any, *, has_gpu: bool) -> str:
    """The attention implementation the actor will load with; ValueError if this machine cannot
    run it or it would let packed sequences attend across each other."""
    impl = setting(verl_overrides, ATTN_KEY) or DEFAULTS[ATTN_KEY]
    rmpad = bool(setting(verl_overrides, RMPAD_KEY))
    sp = int(setting(verl_overrides, SP_KEY) or 1)
    fix = f"set +{ATTN_KEY}=sdpa (VERL's schema has no such key, so it is added with '+')"
    if impl in FLASH:
        if not has_gpu:
            raise ValueError(f"{ATTN_KEY}={impl} needs a CUDA GPU and this machine has none; {fix}")
        if not _importable(FLASH[impl]):
            raise ValueError(
                f"{ATTN_KEY}={impl} needs the {FLASH[impl]!r} package, which is not installed (the gpu "
                f"extra does not install it): pip install flash-attn==2.8.3 --no-build-isolation "
                f"(VERL's install docs), or {fix}")
        return impl
    if impl not in PACKED_OK:
        raise ValueError(f"{ATTN_KEY}={impl!r} is not one VERL's FSDP actor can run packed rows with; "
                         f"use one of {sorted([*FLASH, *PACKED_OK])}")
    if sp > 1:
        raise ValueError(f"{SP_KEY}={sp} (Ulysses) needs flash attention, but {ATTN_KEY}={impl}; "
                         f"set {SP_KEY}=1 or install flash-attn and use flash_attention_2")
    if rmpad:
        import transformers.masking_utils as masking

        if not hasattr(masking, "find_packed_sequence_indices"):
            raise ValueError(
                f"{RMPAD_KEY}=true packs sequences into one row, and this transformers "
                f"({getattr(__import__('transformers'), '__version__', '?')}) cannot keep packed "
                f"sequences apart under {impl}: set {RMPAD_KEY}=false or use flash_attention_2")
    return impl


def _tokenizer(tokenizer_or_model_path: Any) -> Any:
    if hasattr(tokenizer_or_model_path, "apply_chat_template"):
        return tokenizer_or_model_path
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(tokenizer_or_model_path), trust_remote_code=True)
    except (OSError, ValueError) as exc:
        where = "local folder" if Path(str(tokenizer_or_model_path)).exists() else "model id"
        raise ValueError(f"cannot load the tokenizer of {where} {tokenizer_or_model_path!r} to check its "
                         f"chat template: {exc}") from exc


def check_chat_template(tokenizer_or_model_path: Any, verl_overrides: Any = None) -> str:
    """Render one offered tool and one call through the model's chat template; ValueError unless
    both appear (in hermes form under ``multi_turn.format=hermes``). Returns the rendering."""
    tok = _tokenizer(tokenizer_or_model_path)
    template = setting(verl_overrides or {}, TEMPLATE_KEY)
    kwargs = dict(setting(verl_overrides or {}, TEMPLATE_KWARGS_KEY) or {})
    fmt = setting(verl_overrides or {}, FORMAT_KEY) or "hermes"
    call = {"name": _PROBE_TOOL["function"]["name"], "arguments": _PROBE_ARGS}
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Look up record REC-4242."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_0", "type": "function", "function": call}]},
        {"role": "tool", "tool_call_id": "call_0", "name": call["name"], "content": '{"found": true}'},
    ]
    name = getattr(tok, "name_or_path", "") or str(tokenizer_or_model_path)
    fix = (f"give the model a tool-aware template: set {TEMPLATE_KEY} to one (e.g. prove.train."
           "chat_template.HERMES_CHATML_TEMPLATE for ChatML models) or use the model's instruct "
           "tokenizer")
    try:
        text = tok.apply_chat_template(messages, tools=[_PROBE_TOOL], tokenize=False,
                                       chat_template=template, **kwargs)
    except Exception as exc:  # a template that cannot render tools at all raises inside jinja
        raise ValueError(f"the chat template of {name!r} fails on a conversation with tools and a "
                         f"tool call ({type(exc).__name__}: {exc}); {fix}") from exc
    if not isinstance(text, str):
        raise ValueError(f"the chat template of {name!r} did not render text; {fix}")
    missing = []
    if "preflight_marker_7f3" not in text:
        missing.append("the offered tool's schema (its description)")
    if '"record_id"' not in text or "Probe record id." not in text:
        missing.append("the offered tool's parameters")
    if "REC-4242" not in text.split("Look up record REC-4242.", 1)[-1]:
        missing.append("the assistant's tool call arguments")
    if text.count(call["name"]) < 2:
        missing.append("the assistant's tool call name")
    if fmt == "hermes" and not ("<tool_call>" in text and "</tool_call>" in text):
        missing.append("<tool_call>...</tool_call> around the call (multi_turn.format=hermes parses that)")
    if missing:
        raise ValueError(f"the chat template of {name!r} does not render {', '.join(missing)}: the "
                         f"policy would never see the tools or learn the call format; {fix}")
    return text


FAMILY_MODEL_TYPES: dict[str, str] = {
    "qwen3": "qwen3", "qwen2.5": "qwen2", "granite": "granite", "gemma": "gemma3", "smollm2": "llama"}
"""The Hugging Face ``model_type`` of each family's models (VERL picks its continuous-token builder
by it), used when the model's own ``config.json`` cannot be read."""

_BOUNDARY_CALL = {"name": _PROBE_TOOL["function"]["name"], "arguments": _PROBE_ARGS}
BOUNDARY_CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Look up record REC-4242, then tell me what you found."},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function", "function": _BOUNDARY_CALL}]},
    {"role": "tool", "tool_call_id": "call_0", "name": _BOUNDARY_CALL["name"],
     "content": '{"record_id": "REC-4242", "found": true}'},
    {"role": "assistant", "content": "Record REC-4242 exists."},
]
"""The conversation a rollout of one tool call builds: system with tools, user, an assistant turn
with a call, its tool result, a final assistant answer."""


def _model_type(tokenizer_or_model_path: Any, family: str | None) -> str | None:
    path = getattr(tokenizer_or_model_path, "name_or_path", None) or tokenizer_or_model_path
    config = Path(str(path)) / "config.json"
    if config.is_file():
        found = json.loads(config.read_text()).get("model_type")
        if isinstance(found, str):
            return found
    if not hasattr(tokenizer_or_model_path, "apply_chat_template"):
        try:  # a hub id on the GPU machine: its config is in the cache the trainer reads
            from transformers import AutoConfig

            return str(AutoConfig.from_pretrained(str(path), trust_remote_code=True).model_type)
        except (OSError, ValueError):
            pass
    return FAMILY_MODEL_TYPES.get(family or "")


def rollout_token_builder(tokenizer: Any, hf_model_type: str | None, kwargs: dict[str, Any]) -> Any:
    """The continuous-token builder VERL's agent loop will use: ``prove.train.agent_loop``'s
    ``token_builder`` when the loop installs one (``prove.train.chat_template.token_builder``),
    else VERL 0.9.1's own choice by model type."""
    import prove.train.agent_loop as loop

    make = getattr(loop, "token_builder", None)
    if make is None:
        from verl.utils.tokenizer.continuous_token_wiring import create_continuous_token_builder

        return create_continuous_token_builder(tokenizer, hf_model_type=hf_model_type,
                                               chat_template_kwargs=kwargs)
    return make(tokenizer, hf_model_type, kwargs)


def check_turn_boundaries(tokenizer_or_model_path: Any, verl_overrides: Any = None, *,
                          family: str | None = None, hf_model_type: str | None = None,
                          builder: Any = None) -> list[str]:
    """Build :data:`BOUNDARY_CONVERSATION` the way VERL's agent loop does (the first prompt, then
    per turn: the tokens the model generates up to its stop token, the tool turn's increment from
    the continuous-token builder) and compare it with the chat template's rendering of the whole
    conversation. ValueError naming the family, the boundary that broke and the fix; returns notes
    on differences that are the template's own and harmless to training.

    The one tolerated difference: an empty reasoning block (a family's ``think_tags`` around
    nothing, Qwen3's ``<think>\n\n</think>\n\n``) that the rollout keeps (the generation prompt
    wrote it in non-thinking mode) and the template drops when it re-renders an earlier turn. The
    policy is trained on the tokens it generated from, so training is consistent; evaluation
    re-renders and serves earlier turns without it, as Qwen3 itself is served."""
    from verl.utils.tokenizer import normalize_token_ids

    from prove.llm.families import family as family_of

    tok = _tokenizer(tokenizer_or_model_path)
    overrides = verl_overrides or {}
    template = setting(overrides, TEMPLATE_KEY)
    if template:
        import copy

        tok = copy.copy(tok)
        tok.chat_template = template
    kwargs = dict(setting(overrides, TEMPLATE_KWARGS_KEY) or {})
    name = family or "?"
    model_type = hf_model_type or _model_type(tokenizer_or_model_path, family)
    builder = builder or rollout_token_builder(tok, model_type, kwargs)
    tools = [_PROBE_TOOL]

    def render(messages: list[dict[str, Any]], gen: bool) -> str:
        return tok.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=gen,
                                       **kwargs)

    def broke(boundary: str, detail: str, fix: str) -> ValueError:
        return ValueError(f"model family {name!r} (model_type {model_type!r}, rollout builder "
                          f"{type(builder).__name__}): the turn boundary {boundary} does not hold: "
                          f"{detail}. Fix: {fix}")

    conv = BOUNDARY_CONVERSATION
    runtime = list(builder.build_initial_tokens(conv[:2], tools=tools))
    spans = [("of the first prompt (system with tools, user, generation prompt)", len(runtime))]
    history = list(conv[:2])
    turn = 0
    for message in conv[2:]:
        if message["role"] == "assistant":  # what the model writes: the template's turn, to eos
            turn += 1
            prompt, full = render(history, True), render([*history, message], False)
            if not full.startswith(prompt):
                raise broke(f"at the generation prompt of assistant turn {turn}",
                            "the template renders that turn differently from the prompt it is "
                            "generated after", f"leave {TEMPLATE_KEY} unset (the model's own template)")
            text = full[len(prompt):]
            if tok.eos_token not in text:
                raise broke(f"at the end of assistant turn {turn}",
                            f"the template does not end the turn with the eos token {tok.eos_token!r}, "
                            "where generation stops", "give the tokenizer the eos token its template "
                            "ends an assistant turn with")
            text = text[:text.index(tok.eos_token) + len(tok.eos_token)]
            generated = normalize_token_ids(tok.encode(text, add_special_tokens=False))
            runtime = list(builder.merge_assistant_tokens(runtime, generated).token_ids)
            spans.append((f"of assistant turn {turn} (its tokens up to the stop token "
                          f"{tok.eos_token!r})", len(runtime)))
        else:
            runtime = list(builder.merge_context_tokens(history, [*history, message], runtime,
                                                        tools=tools).token_ids)
            spans.append((f"between assistant turn {turn} and the {message['role']} turn after it "
                          "(the tool turn's increment and the next generation prompt)", len(runtime)))
        history.append(message)

    # Compared as text: a different split of the same text into tokens is the tokenizer's (VERL
    # trains on the tokens the rollout generated from), a different text is a broken boundary.
    got, want = tok.decode(runtime), render(conv, False)
    ends = [(label, len(tok.decode(runtime[:end]))) for label, end in spans]
    tags = family_of(family).think_tags if family in _families() else None
    empty = f"{tags[0]}\n\n{tags[1]}\n\n" if tags else None
    notes: list[str] = []
    i = j = 0
    while i < len(got):
        if j < len(want) and got[i] == want[j]:
            i, j = i + 1, j + 1
        elif empty and (k := _block_start(got, empty, i)) is not None:  # it began a few chars back
            notes.append(f"the rollout keeps an empty {tags[0]}{tags[1]} block (character {k}) that the "
                         "template drops when it re-renders that earlier turn; tolerated")
            i, j = k + len(empty), j - (i - k)
        else:
            boundary = next((label for label, end in ends if i < end), ends[-1][0])
            raise broke(boundary, f"the rollout has {got[max(0, i - 30):i + 30]!r} where the template "
                                  f"renders {want[max(0, j - 30):j + 30]!r} (the policy would be trained "
                                  "on turn boundaries it is never served with)",
                        "build rollouts with prove.train.chat_template.token_builder (install it in "
                        "prove.train.agent_loop: it writes the template's separator after the "
                        "end-of-turn token, as VERL's Qwen builder does), or set "
                        f"{TEMPLATE_KEY} to a template whose turns join without a separator")
    if want[j:].strip():
        raise broke("at the end of the conversation", f"the template renders {want[j:]!r} after the "
                    "last turn, which the rollout never has", f"leave {TEMPLATE_KEY} unset")
    return notes


def check_call_format(verl_overrides: Any, family: str) -> str:
    """The rollout's tool parser (``multi_turn.format``) must read the call format the family's
    template teaches (``prove.llm.families``: ``tool_call_parser``); ValueError otherwise."""
    from prove.llm.families import family as family_of

    fmt = setting(verl_overrides, FORMAT_KEY) or DEFAULTS[FORMAT_KEY]
    want = family_of(family).tool_call_parser
    if fmt != want:
        raise ValueError(f"model family {family!r} writes {want} tool calls but {FORMAT_KEY}={fmt}: "
                         f"VERL's parser would find no calls; set {FORMAT_KEY}={want}")
    return fmt


def _block_start(text: str, block: str, at: int) -> int | None:
    """Where ``block`` starts in ``text`` when it covers position ``at`` (None: it does not)."""
    for k in range(max(0, at - len(block) + 1), at + 1):
        if text.startswith(block, k):
            return k
    return None


def _families() -> tuple[str, ...]:
    from prove.llm.families import FAMILIES

    return tuple(FAMILIES)


def preflight(verl_overrides: Any, tokenizer_or_model_path: Any, *, has_gpu: bool | None = None,
              family: str | None = None, vllm_cpu: bool | None = None) -> None:
    """Stop before any GPU work with what to change (ValueError): the attention implementation
    this machine cannot run (or one that mixes packed sequences), a GPU rollout engine on a
    machine without a GPU (vllm is admitted there when vLLM's CPU build is installed;
    ``vllm_cpu=None`` asks :func:`prove.train.vllm_cpu.vllm_distribution`), a tool parser that does
    not read ``family``'s call format, a chat template that does not render tools and tool calls,
    turn boundaries the rollout would not keep for ``family`` (:func:`check_turn_boundaries`).
    ``has_gpu=None`` asks torch."""
    if has_gpu is None:
        import torch

        has_gpu = bool(torch.cuda.is_available())
    rollout = setting(verl_overrides, ROLLOUT_KEY)
    if vllm_cpu is None:
        from prove.train.vllm_cpu import vllm_distribution

        vllm_cpu = (vllm_distribution() or ("",))[0] == "vllm-cpu"
    if rollout in GPU_ROLLOUTS and not has_gpu and not (rollout == "vllm" and vllm_cpu):
        raise ValueError(f"{ROLLOUT_KEY}={rollout} needs a GPU and this machine has none (nor, for "
                         "vllm, vLLM's CPU build, vllm-cpu, which ./run_all.sh installs on a CPU "
                         "machine); run the CPU profile (its rollout stands in for vLLM) or move to "
                         "a GPU machine")
    check_attention(verl_overrides, has_gpu=has_gpu)
    if family is not None:
        check_call_format(verl_overrides, family)
    tok = _tokenizer(tokenizer_or_model_path)
    check_chat_template(tok, verl_overrides)
    check_turn_boundaries(tok, verl_overrides, family=family,
                          hf_model_type=_model_type(tokenizer_or_model_path, family))
