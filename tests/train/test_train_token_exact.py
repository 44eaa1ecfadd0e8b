"""Token-exact rollouts: the ids a trainer scores are the ids the policy generated, byte for byte,
with the tool results' ids (and the template's turn scaffolding) between them masked out — in TRL's
engine and in VERL's agent loop, over a two-turn rollout (a live tool call, its result, an answer),
with SmolLM2's template and with a Qwen3-like one that drops earlier turns' ``<think>`` blocks.

    .venv/bin/python -m pytest tests/train/test_train_token_exact.py -q

What is scripted, and only that: the policy's *sampling*. A 135M model does not write a tool call
reliably, so the generation step returns prepared token ids — TRL: the trained model's ``generate``
(``rollout.name: hf``) or the colocated engine's ``generate`` (``rollout.name: vllm``; the real engine's
ids and weight sync are tested in ``test_train_trl_vllm.py``); VERL: the LLM server client's
``generate`` (what vLLM answers). The ids
are a non-canonical tokenisation of their text (decode → encode gives other ids), as sampled ids
often are, so an engine that re-tokenises text, or re-renders the conversation, scores other tokens
and fails here. Everything else is the engines' own code: TRL's ``GRPOTrainer.
_generate_and_score_completions`` with PROVE's ``rollout_func`` and tensors as the loss reads them;
VERL's ``AgentLoopWorker`` with ``ProveAgentLoop``, its continuous-token builder and postprocessing
into the padded batch the actor scores; calls to a live ``prove serve`` in both.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from train_helpers import lookup_call, lookup_rows, need_verl, run

from prove.env.launch import EnvServer
from prove.train.chat_template import HERMES_CHATML_TEMPLATE

_ASSISTANT = "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
_THINK_DROPPING_ASSISTANT = (
    "{%- set content = message.content or '' %}{%- set reasoning = '' %}"
    "{%- if message.reasoning_content is string %}{%- set reasoning = message.reasoning_content %}"
    "{%- elif '</think>' in content %}"
    "{%- set reasoning = content.split('</think>')[0].split('<think>')[-1].strip('\\n') %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}"
    "{%- endif %}"
    "{%- if loop.index0 == ns.last_assistant and reasoning %}"
    "{{- '\\n<think>\\n' + reasoning + '\\n</think>\\n\\n' + content }}"
    "{%- elif content %}{{- '\\n' + content }}{%- endif %}"
)
assert HERMES_CHATML_TEMPLATE.count(_ASSISTANT) == 1
THINK_DROPPING_TEMPLATE = (
    "{%- set ns = namespace(last_assistant=-1) %}"
    "{%- for m in messages %}{%- if m.role == 'assistant' %}{%- set ns.last_assistant = loop.index0 %}"
    "{%- endif %}{%- endfor %}"
    + HERMES_CHATML_TEMPLATE.replace(_ASSISTANT, _THINK_DROPPING_ASSISTANT)
)
"""SmolLM2's hermes template, but an assistant turn keeps its ``<think>`` block (from
``reasoning_content`` or its content) only when it is the conversation's last assistant turn:
Qwen3's behaviour made stricter (Qwen3 drops the blocks of turns before the last user query, and
empty ones of every turn but the last), so re-rendering a finished rollout changes its first turn."""

TEMPLATES = {"smollm2": (HERMES_CHATML_TEMPLATE, "llama"), "qwen3-like": (THINK_DROPPING_TEMPLATE, "qwen3")}
"""Template under test → the model type VERL's worker reads from the model folder (which picks the
continuous-token builder: SmolLM2 is a llama, PROVE's separator builder; qwen3, VERL's Qwen one)."""


def _ids(encoded: Any) -> list[int]:
    return list(encoded["input_ids"] if isinstance(encoded, Mapping) else encoded)


def _tokenizer(template: str) -> Any:
    from prove.train.chat_template import load_tokenizer

    tok = load_tokenizer()
    tok.chat_template = template
    return tok


def odd_ids(tok: Any, text: str) -> list[int]:
    """``text`` as the policy's sampled ids: each line tokenised as two halves split mid-line (so
    the ids decode to ``text`` but are not what encoding ``text`` gives), then ``<|im_end|>``."""
    pieces = []
    for line in text.split("\n"):
        pieces += [line[: len(line) // 2], line[len(line) // 2:], "\n"]
    ids = [t for piece in pieces[:-1] if piece for t in tok.encode(piece, add_special_tokens=False)]
    assert tok.decode(ids) == text and tok.encode(text, add_special_tokens=False) != ids
    return ids + [tok.convert_tokens_to_ids("<|im_end|>")]


def scripted_turns(tok: Any, call: Mapping[str, Any]) -> list[list[int]]:
    """Two assistant turns, each with a ``<think>`` block: a tool call, then an answer."""
    block = "<tool_call>\n" + json.dumps({"name": call["name"], "arguments": call["arguments"]}) + "\n</tool_call>"
    return [odd_ids(tok, f"<think>\nI should look this up with {call['name']}.\n</think>\n\n{block}"),
            odd_ids(tok, "<think>\nThe tool answered; now I reply.\n</think>\n\nHere is what I found.")]


def _schemas(tools: Any) -> list[dict[str, Any]] | None:
    from prove.train.schema import row_schemas

    return row_schemas(tools) or None


def prompt_ids(tok: Any, messages: list[dict[str, Any]], tools: Any) -> list[int]:
    """The row's prompt as the template renders it, with the row's offered tools."""
    return _ids(tok.apply_chat_template(messages, tools=_schemas(tools), add_generation_prompt=True, tokenize=True))


def tool_turn_ids(tok: Any, tool_text: str) -> list[int]:
    """What both templates put after an assistant turn that stopped at ``<|im_end|>`` to show one
    tool result and open the next assistant turn, spelled out: the turn separator, the tool turn,
    the next assistant header."""
    return tok.encode("\n<|im_start|>user\n<tool_response>\n" + tool_text + "\n</tool_response><|im_end|>\n"
                      "<|im_start|>assistant\n", add_special_tokens=False)


def check_trained(tok: Any, prompt: list[int], response: list[int], mask: list[int], served: list[list[int]],
                  expected_prompt: list[int], turns: list[list[int]]) -> str:
    """The trained sequence is ``expected_prompt`` + turn 1 + the tool turn + turn 2, the mask 1
    exactly on the generated ids, and the policy was served exactly those tokens; returns the tool
    result's text."""
    gen1, gen2 = turns
    assert prompt == expected_prompt, "the prompt the trainer scores is the rendered row prompt"
    assert response[: len(gen1)] == gen1 and response[len(response) - len(gen2):] == gen2, \
        "the trainer scores the generated ids themselves, not a re-tokenisation of their text"
    between = response[len(gen1): len(response) - len(gen2)]
    found = re.search(r"<tool_response>\n(.*)\n</tool_response>", tok.decode(between), re.DOTALL)
    assert found, tok.decode(between)
    assert between == tool_turn_ids(tok, found.group(1)), "between the turns: the tool turn only"
    assert mask == [1] * len(gen1) + [0] * len(between) + [1] * len(gen2)
    assert served == [expected_prompt, expected_prompt + gen1 + between], \
        "each turn is generated from exactly the tokens the trainer scores before it"
    return found.group(1)


@pytest.fixture(scope="module")
def lookup_row(synth_rows: list[dict]) -> dict[str, Any]:
    """A multi-turn row whose turn starts with a read that succeeds in the row's episode."""
    return lookup_rows(synth_rows)[0]


def test_the_check_catches_re_tokenising_and_re_rendering(lookup_row: dict[str, Any]) -> None:
    """Why the engine tests below can fail. Re-tokenising: the scripted ids are not what their text
    encodes to (``odd_ids`` asserts it). Re-rendering the finished rollout (what an engine that
    re-applies the chat template each turn trains on): with SmolLM2's template it gives the text's
    canonical ids, turn by turn; with the Qwen3-like one it also drops turn 1's ``<think>`` block,
    so even canonical ids drift."""
    from prove.rows import decode_messages

    messages = decode_messages(lookup_row["prompt"])
    tools = lookup_row["extra_info"]["tools"]
    for name, (template, _) in TEMPLATES.items():
        tok = _tokenizer(template)
        texts = [tok.decode(gen[:-1]) for gen in scripted_turns(tok, lookup_call(lookup_row))]
        canonical = [tok.encode(text, add_special_tokens=False) + [tok.eos_token_id] for text in texts]
        exact = prompt_ids(tok, messages, tools) + canonical[0] + tool_turn_ids(tok, '{"x":1}') + canonical[1]
        rendered = _ids(tok.apply_chat_template(
            [*messages, {"role": "assistant", "content": texts[0]}, {"role": "tool", "content": '{"x":1}'},
             {"role": "assistant", "content": texts[1]}], tools=_schemas(tools), tokenize=True))
        if name == "smollm2":
            assert rendered[: len(exact)] == exact
        else:
            assert rendered[: len(exact)] != exact
            assert tok.decode(rendered).count("<think>") == 1 and "I should look this up" not in tok.decode(rendered)


# -- TRL ---------------------------------------------------------------------------------------------

def _tiny_model_dir(tok: Any, out: Path) -> Path:
    """A one-layer random llama with ``tok`` (its template included) and the policy folder's stop
    tokens: TRL's trainer needs a real model to score; its sampling is scripted below."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                         max_position_embeddings=16384, tie_word_embeddings=True,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    LlamaForCausalLM(config).save_pretrained(out)
    tok.save_pretrained(out)
    gen = {"eos_token_id": [tok.eos_token_id, tok.convert_tokens_to_ids("<|im_start|>")],
           "pad_token_id": tok.pad_token_id}
    (out / "generation_config.json").write_text(json.dumps(gen))
    return out


class ScriptedGenerator:
    """Stands in for ``ColocatedVLLM``, the sampling only: each ``generate`` returns the next prepared
    turn for every context (as vLLM returns ids: the new tokens, cut at the budget) and records the
    contexts it was served."""

    def __init__(self, turns: list[list[int]], served: list[list[list[int]]]) -> None:
        self.turns, self.served = turns, served
        self.closed = False

    def generate(self, contexts: Any, budgets: Any, eos: Any, *, temperature: float,
                 top_p: float) -> tuple[list[list[int]], list[list[float]]]:
        self.served.append([list(c) for c in contexts])
        turn = self.turns[len(self.served) - 1]
        gens = [list(turn[:budget]) for budget in budgets]
        return gens, [[0.0] * len(g) for g in gens]

    def sync(self, model: Any, step: int) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("engine", ["hf", "vllm"])
@pytest.mark.parametrize("template", list(TEMPLATES))
def test_trl_trains_on_exactly_the_generated_ids_and_masks_the_tool_turn(
        template: str, engine: str, lookup_row: dict[str, Any], live_env: EnvServer, tmp_path: Path) -> None:
    """Through ``make_trainer``'s ``ProveGRPOTrainer``: ``_generate_and_score_completions`` runs
    ``ProveRollout`` (two rollouts of the row) and pads ``prompt_ids``/``completion_ids``, their
    masks and ``tool_mask`` (the rollout's ``env_mask``) as the GRPO loss reads them (loss mask:
    ``completion_mask * tool_mask``). ``engine``: what samples, the policy's ``generate`` (hf) or the
    colocated engine (vllm, scripted in place of the real one, which the trainer is built without)."""
    pytest.importorskip("trl", reason="the train extra (trl) is not installed")
    need_verl()  # the rollout parses blocks with the agent loop's hermes rule
    import torch

    from prove.rows import decode_messages, write_rows
    from prove.train.config import load_train_config
    from prove.train.trl_engine import make_trainer

    tok = _tokenizer(TEMPLATES[template][0])
    turns = scripted_turns(tok, lookup_call(lookup_row))
    cfg = load_train_config("smollm2-135m")
    parquet = write_rows([lookup_row], tmp_path / "rl_train.parquet")
    cfg = dataclasses.replace(
        cfg, data=dataclasses.replace(cfg.data, rl_train=str(parquet)),
        verl={**cfg.verl, "data.train_batch_size": 1, "actor_rollout_ref.rollout.n": 2,
              "actor_rollout_ref.actor.ppo_mini_batch_size": 1, "actor_rollout_ref.actor.use_kl_loss": False,
              "data.max_response_length": 4096, "actor_rollout_ref.rollout.multi_turn.max_assistant_turns": 3,
              "actor_rollout_ref.rollout.name": "hf"})
    trainer = make_trainer(_tiny_model_dir(tok, tmp_path / "model"), cfg, cfg.variant("default"), [live_env.url],
                           tmp_path / "ckpt", "token-exact", steps=1, report_to=[])
    served: list[list[list[int]]] = []

    def generate(input_ids: Any, attention_mask: Any, **_: Any) -> Any:
        """The policy's sampling, scripted: turn k of every rollout in the batch."""
        served.append([row[mask.bool()].tolist() for row, mask in zip(input_ids, attention_mask, strict=True)])
        new = torch.tensor([turns[len(served) - 1]] * input_ids.shape[0])
        return torch.cat([input_ids, new], dim=1)

    trainer.model.generate = generate
    generator = None
    if engine == "vllm":
        generator = trainer.prove_rollout.generator = ScriptedGenerator(turns, served)
    try:
        rows = [trainer.train_dataset[0]] * 2
        out = trainer._generate_and_score_completions(rows)  # what GRPOTrainer's loss then reads
    finally:
        trainer.prove_rollout.close()
    expected_prompt = prompt_ids(tok, decode_messages(lookup_row["prompt"]), lookup_row["extra_info"]["tools"])
    for b in range(2):
        prompt = out["prompt_ids"][b][out["prompt_mask"][b].bool()].tolist()
        keep = out["completion_mask"][b].bool()
        response = out["completion_ids"][b][keep].tolist()
        loss_mask = (out["completion_mask"][b] * out["tool_mask"][b])[keep].tolist()
        result = check_trained(tok, prompt, response, loss_mask, [s[b] for s in served], expected_prompt, turns)
        assert not result.startswith("Error"), f"the lookup ran live: {result}"
    assert len(served) == 2, "the rollout ends after the answer"
    # the loss's forward pass: the two rollouts share their prompt, which PROVE's trainer computes once
    from trl import GRPOTrainer

    ids = torch.cat([out["prompt_ids"], out["completion_ids"]], dim=1)
    mask = torch.cat([out["prompt_mask"], out["completion_mask"]], dim=1)
    keep = out["completion_ids"].size(1)
    ours, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, keep)
    trls, _, _ = GRPOTrainer._get_per_token_logps_and_entropies(trainer, trainer.model, ids, mask, keep)
    scored = out["completion_mask"].bool()
    assert torch.allclose(ours[scored], trls[scored], atol=1e-4), "the shared-prompt pass scores as TRL's"
    if generator is not None:
        assert generator.closed, "closing the rollout closes its engine"


# -- VERL --------------------------------------------------------------------------------------------

class ScriptedServer:
    """Stands in for VERL's LLM server client, the sampling only: each ``generate`` returns the next
    prepared turn's token ids (as vLLM returns them) and records the prompt ids it was served."""

    def __init__(self, turns: list[list[int]]) -> None:
        self.turns = turns
        self.served: list[list[int]] = []

    async def generate(self, *, request_id: str, prompt_ids: list[int], sampling_params: dict,
                       **_: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        self.served.append(list(prompt_ids))
        ids = self.turns[len(self.served) - 1]
        return TokenOutput(token_ids=list(ids), log_probs=[0.0] * len(ids), stop_reason="completed")


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_verl_trains_on_exactly_the_generated_ids_and_masks_the_tool_turn(
        template: str, lookup_row: dict[str, Any], verl_cfg: Any, tmp_path: Path) -> None:
    """Through ``AgentLoopWorker._run_agent_loop``: ``ProveAgentLoop`` with the builder the model
    folder's type selects, then VERL's postprocessing into the padded ``input_ids`` /
    ``attention_mask`` / ``response_mask`` the actor computes log-probabilities on."""
    from prove.rows import decode_messages, write_rows
    from prove.train import rollout

    text_template, model_type = TEMPLATES[template]
    tok = _tokenizer(text_template)
    turns = scripted_turns(tok, lookup_call(lookup_row))
    cfg = rollout.with_policy(verl_cfg, rollout.policy_dir(tmp_path / "policy", tok, model_type))
    batch = rollout.rollout_batch(cfg, write_rows([lookup_row], tmp_path / "rows.parquet"), tok)
    server = ScriptedServer(turns)

    async def trajectories() -> list[Any]:  # VERL's workers bind the event loop they are built on
        return await rollout.run_trajectories(rollout.make_worker(cfg, server, reward=False), batch)

    [out] = run(trajectories())
    if isinstance(out, BaseException):
        raise out
    width = out.prompt_ids.shape[1]
    attention = out.attention_mask[0].bool()
    prompt = out.input_ids[0, :width][attention[:width]].tolist()
    response = out.input_ids[0, width:][attention[width:]].tolist()
    mask = out.response_mask[0][attention[width:]].tolist()
    expected_prompt = prompt_ids(tok, decode_messages(lookup_row["prompt"]), lookup_row["extra_info"]["tools"])
    check_trained(tok, prompt, response, mask, server.served, expected_prompt, turns)
    [entry] = out.extra_fields["tool_calls"]
    assert entry["ok"] is True and entry["name"] == lookup_call(lookup_row)["name"], entry
