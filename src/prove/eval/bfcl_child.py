"""The BFCL child process: reads a `ChildConfig` JSON file, applies the shim's patches, runs bfcl's own CLI.

    python -m prove.eval.bfcl_child --config logs/<label>.generate.json generate --model prove/<label> ...
    python -m prove.eval.bfcl_child --config logs/<label>.evaluate.json evaluate --model prove/<label> ...

`prove.eval.bfcl.BFCL` writes the file (`write_config`) and starts this module once per step. Every
setting is in the file; only the endpoint's API key travels in bfcl's own environment variables
(REMOTE_OPENAI_API_KEY, OPENAI_API_KEY), so no secret is written to disk. `read_config` validates the
file and names the bad field and what is valid.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from prove.eval.bfcl_shim import apply_patches, check_bfcl_version

__all__ = [
    "HANDLERS",
    "CHAT_HANDLERS",
    "NO_THINK_SUFFIX",
    "ChildConfigError",
    "ChildModel",
    "ChildConfig",
    "CappedClient",
    "handler_class",
    "write_config",
    "read_config",
    "main",
]

HANDLERS: dict[str, str] = {
    # /v1/completions with the handler's own prompt format (the leaderboard's path for local models)
    "QwenFCHandler": "bfcl_eval.model_handler.local_inference.qwen_fc:QwenFCHandler",
    "QwenHandler": "bfcl_eval.model_handler.local_inference.qwen:QwenHandler",
    "Granite4FCHandler": "bfcl_eval.model_handler.local_inference.granite_4:Granite4FCHandler",
    "Granite3FCHandler": "bfcl_eval.model_handler.local_inference.granite_3:Granite3FCHandler",
    # /v1/chat/completions with `tools` (vLLM's tool parser decodes the calls)
    "OpenAICompletionsHandler": "bfcl_eval.model_handler.api_inference.openai_completion:OpenAICompletionsHandler",
}
"""Handler names accepted in `ModelSpec.handler` (or give any "module:Class")."""

CHAT_HANDLERS = frozenset({"OpenAICompletionsHandler"})

NO_THINK_SUFFIX = "<think>\n\n</think>\n\n"
"""What Qwen3's own chat template appends after the assistant header when ``enable_thinking`` is
false; bfcl's completions-route handlers format the prompt themselves and never add it."""


# --------------------------------------------------------------------------- the config file


class ChildConfigError(ValueError):
    """A BFCL child config file or value that is not valid; the message names the field and what is valid."""


def _positive_int_or_none(v: Any) -> bool:
    return v is None or (type(v) is int and v > 0)


def _text(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _text_or_none(v: Any) -> bool:
    return v is None or _text(v)


_Rules = Mapping[str, tuple[Callable[[Any], bool], str]]

_MODEL_RULES: _Rules = {
    "registry": (lambda v: isinstance(v, str) and re.fullmatch(r"prove/[^_/\s]+", v) is not None,
                 "'prove/<label>' (a label without '_', '/' or spaces)"),
    "model_name": (_text, "a non-empty string (the model id the endpoint serves)"),
    "handler": (lambda v: isinstance(v, str) and (v in HANDLERS or re.fullmatch(r"[\w.]+:\w+", v) is not None),
                f"one of {sorted(HANDLERS)} or 'module:Class'"),
    "is_fc_model": (lambda v: type(v) is bool, "true or false"),
    "max_new_tokens": (_positive_int_or_none, "a positive integer or null (bfcl's own cap)"),
    "no_think": (lambda v: type(v) is bool, "true or false"),
}

_CONFIG_RULES: _Rules = {
    "project_dir": (_text, "a non-empty path (bfcl's BFCL_PROJECT_ROOT)"),
    "models": (lambda v: isinstance(v, tuple) and bool(v) and all(isinstance(m, ChildModel) for m in v),
               "a non-empty list of model objects"),
    "base_url": (lambda v: v is None or (isinstance(v, str) and re.match(r"https?://\S+$", v) is not None),
                 "an http(s):// URL or null (evaluate needs no endpoint)"),
    "tokenizer_path": (_text_or_none, "a non-empty path or null (the hub id)"),
    "max_steps_per_turn": (_positive_int_or_none, "a positive integer or null (bfcl's own 20)"),
}


def _validate(obj: Any, rules: _Rules) -> None:
    for name, (ok, valid) in rules.items():
        value = getattr(obj, name)
        if not ok(value):
            raise ChildConfigError(f"{name} = {value!r} is not valid; expected {valid}")


@dataclass(frozen=True)
class ChildModel:
    """One model to register into bfcl's `MODEL_CONFIG_MAPPING`."""

    registry: str
    """bfcl's model key, `prove/<label>`; result and score folders are named after it."""
    model_name: str
    """The model id the endpoint serves (what each request asks for)."""
    handler: str
    """A `HANDLERS` name or any "module:Class" bfcl handler."""
    is_fc_model: bool
    max_new_tokens: int | None = None
    """Cap on tokens per model step; None keeps bfcl's own."""
    no_think: bool = False
    """Append Qwen3's empty think block to completions-route prompts (thinking off)."""

    def __post_init__(self) -> None:
        _validate(self, _MODEL_RULES)


@dataclass(frozen=True)
class ChildConfig:
    """Everything the BFCL child needs, except the endpoint's API key (bfcl's env variables carry it)."""

    project_dir: str
    """bfcl's project root (result/ and score/); exported as BFCL_PROJECT_ROOT before bfcl is imported."""
    models: tuple[ChildModel, ...]
    base_url: str | None = None
    """The served endpoint (ends in /v1), exported as REMOTE_OPENAI_BASE_URL and OPENAI_BASE_URL; None
    for `evaluate`."""
    tokenizer_path: str | None = None
    """Local tokenizer directory for the completions route, exported as REMOTE_OPENAI_TOKENIZER_PATH."""
    max_steps_per_turn: int | None = None
    """Force-terminate a turn after this many steps; None keeps bfcl's 20."""

    def __post_init__(self) -> None:
        _validate(self, _CONFIG_RULES)

    def bfcl_environ(self) -> dict[str, str]:
        """bfcl's own environment variables for these settings (bfcl reads them at import or handler init)."""
        env = {"BFCL_PROJECT_ROOT": self.project_dir}
        if self.base_url is not None:
            # completions route (OSSHandler): REMOTE_OPENAI_*; chat route (OpenAICompletionsHandler): OPENAI_*
            env.update(REMOTE_OPENAI_BASE_URL=self.base_url, OPENAI_BASE_URL=self.base_url)
        if self.tokenizer_path is not None:
            env["REMOTE_OPENAI_TOKENIZER_PATH"] = self.tokenizer_path
        return env


def _checked_fields(data: Any, cls: type, where: str) -> dict[str, Any]:
    """`data` as keyword arguments of dataclass `cls`: an object with no unknown and no missing field."""
    if not isinstance(data, dict):
        raise ChildConfigError(f"{where or 'the file'} must be a JSON object with fields "
                               f"{[f.name for f in fields(cls)]}, not {type(data).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ChildConfigError(f"unknown field(s) {[where + k for k in unknown]}; valid fields: {names}")
    missing = [f.name for f in fields(cls)
               if f.name not in data and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise ChildConfigError(f"missing field(s) {[where + k for k in missing]}; required: "
                               f"{[f.name for f in fields(cls) if f.default is MISSING]}")
    return data


def config_from_dict(data: Any) -> ChildConfig:
    """Build a `ChildConfig` from parsed JSON; `ChildConfigError` names the first bad field."""
    kwargs = dict(_checked_fields(data, ChildConfig, ""))
    raw_models = kwargs.get("models")
    if not isinstance(raw_models, list) or not raw_models:
        raise ChildConfigError(f"models = {raw_models!r} is not valid; expected {_CONFIG_RULES['models'][1]}")
    models = []
    for i, raw in enumerate(raw_models):
        where = f"models[{i}]."
        try:
            models.append(ChildModel(**_checked_fields(raw, ChildModel, where)))
        except ChildConfigError as exc:
            message = str(exc)
            raise ChildConfigError(message if where in message else where + message) from None
    kwargs["models"] = tuple(models)
    return ChildConfig(**kwargs)


def write_config(config: ChildConfig, path: str | Path) -> Path:
    """Write `config` as JSON to `path` (parents created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(config), indent=2) + "\n")
    return path


def read_config(path: str | Path) -> ChildConfig:
    """Read and validate a config file written by `write_config`; `ChildConfigError` says what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ChildConfigError(f"{path}: no such BFCL child config file") from None
    except json.JSONDecodeError as exc:
        raise ChildConfigError(f"{path}: not valid JSON ({exc})") from None
    try:
        return config_from_dict(data)
    except ChildConfigError as exc:
        raise ChildConfigError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------- handler classes


class _CappedCompletions:
    def __init__(self, inner: Any, cap: int) -> None:
        self._inner, self._cap = inner, cap

    def create(self, **kwargs: Any) -> Any:
        kwargs["max_tokens"] = min(int(kwargs.get("max_tokens") or self._cap), self._cap)
        return self._inner.create(**kwargs)


class CappedClient:
    """Wraps an `openai.OpenAI` client so every request asks for at most `cap` new tokens."""

    def __init__(self, client: Any, cap: int) -> None:
        self._client = client
        self.completions = _CappedCompletions(client.completions, cap)
        self.chat = type("Chat", (), {"completions": _CappedCompletions(client.chat.completions, cap)})()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def handler_class(name: str, cap: int | None, no_think: bool = False) -> type:
    """bfcl's handler class `name` (a `HANDLERS` key or "module:Class"), subclassed for a token cap and no-think."""
    module, _, attr = HANDLERS.get(name, name).partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if no_think and name not in CHAT_HANDLERS:  # the profile's thinking mode: off
        # bfcl's handlers enforce @override (overrides.EnforceOverrides)
        from typing_extensions import override

        base = cls

        class NoThink(base):  # type: ignore[misc, valid-type]
            @override
            def _format_prompt(self, messages: Any, function: Any) -> str:
                prompt = super()._format_prompt(messages, function)
                return prompt if prompt.endswith(NO_THINK_SUFFIX) else prompt + NO_THINK_SUFFIX

        NoThink.__name__ = f"NoThink{cls.__name__}"
        cls = NoThink
    if cap is None:
        return cls

    class Capped(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.client = CappedClient(self.client, cap)

    Capped.__name__ = f"Capped{cls.__name__}"
    return Capped


def _model_config(model: ChildModel) -> Any:
    from bfcl_eval.constants.model_config import ModelConfig

    return ModelConfig(model_name=model.model_name, display_name=model.registry, url="", org="PROVE", license="",
                       model_handler=handler_class(model.handler, model.max_new_tokens, model.no_think),
                       is_fc_model=model.is_fc_model, underscore_to_dot=model.handler in CHAT_HANDLERS)


# --------------------------------------------------------------------------- entry point

USAGE = "usage: python -m prove.eval.bfcl_child --config CONFIG.json {generate,evaluate} [bfcl options...]"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 3 or argv[0] != "--config":
        print(USAGE, file=sys.stderr)
        return 2
    config = read_config(argv[1])
    check_bfcl_version()  # before bfcl is imported at all
    os.environ.update(config.bfcl_environ())  # bfcl reads its project root when first imported
    apply_patches({m.registry: _model_config(m) for m in config.models}, config.max_steps_per_turn)
    from bfcl_eval.__main__ import cli

    cli(argv[2:], prog_name="bfcl", standalone_mode=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
