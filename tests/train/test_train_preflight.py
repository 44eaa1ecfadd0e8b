"""prove.train.preflight: stops before GPU work on attention the machine cannot run and on chat
templates that hide tools; and the documented sdpa choice keeps packed sequences apart."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from prove.train.preflight import ATTN_KEY, RMPAD_KEY, check_attention, preflight, setting

CPU_ROLLOUT = {"actor_rollout_ref.rollout.name": "hf"}  # anything but a GPU engine
SDPA = {**CPU_ROLLOUT, "+" + ATTN_KEY: "sdpa"}


def test_flash_attention_without_cuda_or_flash_attn_stops_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"needs a CUDA GPU.*attn_implementation=sdpa"):
        check_attention({}, has_gpu=False)  # VERL's default is flash_attention_2
    try:
        import flash_attn  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="pip install flash-attn==2.8.3 --no-build-isolation"):
            check_attention([f"{ATTN_KEY}=flash_attention_2"], has_gpu=True)
    with pytest.raises(ValueError, match="not one VERL's FSDP actor"):
        check_attention({ATTN_KEY: "flash_attention_9"}, has_gpu=True)
    with pytest.raises(ValueError, match="Ulysses"):
        check_attention({**SDPA, "actor_rollout_ref.actor.ulysses_sequence_parallel_size": 2}, has_gpu=True)
    assert check_attention(SDPA, has_gpu=False) == "sdpa"


def test_a_gpu_rollout_engine_on_a_machine_without_gpu_stops(tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="rollout.name=vllm needs a GPU"):
        preflight({"+" + ATTN_KEY: "sdpa"}, tokenizer, has_gpu=False, vllm_cpu=False)
    # vLLM's CPU build runs VERL's vLLM rollout without a GPU; no other GPU engine is admitted
    preflight({"+" + ATTN_KEY: "sdpa"}, tokenizer, has_gpu=False, vllm_cpu=True)
    with pytest.raises(ValueError, match="rollout.name=sglang needs a GPU"):
        preflight({"+" + ATTN_KEY: "sdpa", "actor_rollout_ref.rollout.name": "sglang"}, tokenizer,
                  has_gpu=False, vllm_cpu=True)


def test_settings_read_from_overrides_lists_and_composed_configs() -> None:
    from train_helpers import need_verl

    need_verl()
    from prove.train.compose import compose

    assert setting([f"+{ATTN_KEY}=sdpa", f"{RMPAD_KEY}=false"], RMPAD_KEY) is False
    assert setting({}, ATTN_KEY) == "flash_attention_2"
    composed = compose([f"+{ATTN_KEY}=eager"])  # VERL's schema has no such key: added with '+'
    assert setting(composed, ATTN_KEY) == "eager" and setting(composed, RMPAD_KEY) is True


def test_template_that_ignores_tools_stops_and_the_hermes_template_passes(
        tokenizer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from train_helpers import need_verl

    need_verl()
    import prove.train.agent_loop as loop
    from prove.train.chat_template import HERMES_CHATML_TEMPLATE, token_builder

    # the rollout builds SmolLM2's turns with prove's builder (tests/train/test_train_boundaries.py)
    monkeypatch.setattr(loop, "token_builder", token_builder, raising=False)
    preflight(SDPA, tokenizer, has_gpu=False, family="smollm2")  # the CPU tokenizer's hermes template
    plain = copy.deepcopy(tokenizer)
    plain.chat_template = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
                           "<|im_end|>\n{% endfor %}")
    with pytest.raises(ValueError, match="does not render the offered tool's schema.*custom_chat_template"):
        preflight(SDPA, plain, has_gpu=False)
    # VERL applies actor_rollout_ref.model.custom_chat_template over the tokenizer's: so does the check.
    preflight({**SDPA, "actor_rollout_ref.model.custom_chat_template": HERMES_CHATML_TEMPLATE}, plain,
              has_gpu=False, family="smollm2")


def test_sdpa_keeps_packed_sequences_apart_as_use_remove_padding_packs_them() -> None:
    """VERL's remove-padding path feeds (1, total_tokens) with attention_mask=None, position ids
    restarting per sequence and use_cache=False (FSDPEngine); under sdpa each sequence must see
    only itself."""
    torch = pytest.importorskip("torch")
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                         attn_implementation="sdpa")
    model = Qwen3ForCausalLM(config).eval()
    a, b = torch.randint(0, 97, (1, 7)), torch.randint(0, 97, (1, 5))
    with torch.no_grad():
        alone = [model(input_ids=x, position_ids=torch.arange(x.shape[1])[None]).logits for x in (a, b)]
        packed = model(input_ids=torch.cat([a, b], 1), attention_mask=None, use_cache=False,
                       position_ids=torch.cat([torch.arange(7), torch.arange(5)])[None]).logits
    assert torch.allclose(packed[:, :7], alone[0], atol=1e-5)
    assert torch.allclose(packed[:, 7:], alone[1], atol=1e-5)  # no attention into sequence a
