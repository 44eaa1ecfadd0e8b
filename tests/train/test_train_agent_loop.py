"""ProveAgentLoop's call log through VERL's own loop and hermes parser: every <tool_call> block the
model writes is charged (malformed, beyond max_parallel_calls, cut by a limit), and no prompt is cut
silently. Live servers on loopback; a scripted policy stands in for vLLM."""

from __future__ import annotations

from typing import Any

import pytest
from train_helpers import lookup_call, lookup_rows, row_of, run

GARBLED = '<tool_call>\n{"name": "transfer_funds", "arguments": {"amount": 5,}\n</tool_call>'


def _cfg(verl_cfg: Any, **data: Any) -> Any:
    from omegaconf import OmegaConf, open_dict

    cfg = OmegaConf.create(OmegaConf.to_container(verl_cfg, resolve=False))
    with open_dict(cfg):
        for key, value in data.items():
            cfg.data[key] = value
    return cfg


def test_a_garbled_call_on_an_abstention_turn_is_charged(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    """VERL's hermes parser drops the block (a log line only); before, the log stayed empty and
    the turn scored 1.0 like a correct refusal."""
    from prove.train.rollout import run_rollouts, score_with_verl

    row = row_of(synth_rows, "abstention")
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [[GARBLED, "Done."]]))
    [entry] = out.extra_fields["tool_calls"]
    assert entry["ok"] is False and "malformed <tool_call>" in entry["error"]
    assert entry["arguments"].startswith('\n{"name": "transfer_funds"')
    [score] = run(score_with_verl(verl_cfg, tokenizer, [row], [out]))
    assert score["reward_score"] == 0.0 and score["n_pred"] == 1


def test_malformed_and_cut_off_blocks_keep_their_place_among_real_calls(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import _call_text, run_rollouts

    row = lookup_rows(synth_rows)[0]
    lookup = lookup_call(row)  # a read with required arguments: without them it fails
    name = lookup["name"]
    good = _call_text(lookup)
    no_args = f'<tool_call>\n{{"name": "{name}"}}\n</tool_call>'
    turn = "\n".join([good, GARBLED, no_args, good, f'<tool_call>\n{{"name": "{name[:5]}'])
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [[turn, "Done."]]))
    log = out.extra_fields["tool_calls"]
    assert [e["ok"] for e in log] == [True, False, False, True, False]
    assert [e["name"] for e in log] == [name, "", name, name, ""]
    assert "cut off before </tool_call>" in log[4]["error"]


def test_calls_beyond_max_parallel_calls_are_logged_as_failed(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import _call_text, run_rollouts

    limit = verl_cfg.actor_rollout_ref.rollout.multi_turn.max_parallel_calls
    row = lookup_rows(synth_rows)[0]
    lookup = lookup_call(row)
    turn = "\n".join(_call_text(lookup) for _ in range(limit + 2))
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [[turn, "Done."]]))
    log = out.extra_fields["tool_calls"]
    assert len(log) == limit + 2
    assert all(e["ok"] for e in log[:limit]) and not any(e["ok"] for e in log[limit:])
    assert f"max_parallel_calls={limit}" in log[-1]["error"]
    assert log[-1]["arguments"] == lookup["arguments"]
    assert tokenizer.decode(out.response_ids).count("<tool_response>") == limit


def test_calls_of_a_turn_that_hits_max_assistant_turns_are_charged(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    """VERL stops before parsing the last turn's calls; they ran nowhere and were logged nowhere."""
    from omegaconf import open_dict

    from prove.train.rollout import _call_text, padding_calls, run_rollouts

    cfg = _cfg(verl_cfg)
    with open_dict(cfg):
        cfg.actor_rollout_ref.rollout.multi_turn.max_assistant_turns = 1
    row = row_of(synth_rows, "abstention")
    call = _call_text(padding_calls(row)[0])  # a call the row's episode would answer
    [out] = run(run_rollouts(cfg, tokenizer, verl_tools, [row], [[call]]))
    [entry] = out.extra_fields["tool_calls"]
    assert not entry["ok"] and "max_assistant_turns=1" in entry["error"]


def test_an_over_long_prompt_fails_under_truncation_error_instead_of_losing_its_tools(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import make_agent_loop, run_rollouts

    row = row_of(synth_rows, "multi_turn", 1)
    short = _cfg(verl_cfg, max_prompt_length=64, truncation="error")
    [out] = run(run_rollouts(short, tokenizer, verl_tools, [row], [["Done."]]))
    assert isinstance(out, ValueError) and "data.truncation='error'" in str(out)
    assert "filter_overlong_prompts" in str(out)
    loop = make_agent_loop(_cfg(verl_cfg, max_prompt_length=64, truncation="right"), tokenizer,
                           verl_tools, llm=None)
    assert loop._cap_text_prompt_length(list(range(100))) == list(range(64))


def test_dataset_counts_over_long_rows_and_drops_or_refuses_them(
    verl_cfg: Any, tokenizer: Any, rl_parquet: Any, synth_rows: list[dict]
) -> None:
    from prove.train.dataset import ProveRLDataset, prompt_length

    lengths = sorted(prompt_length(tokenizer, r) for r in synth_rows)
    limit = lengths[len(lengths) // 2]
    over = sum(n > limit for n in lengths)
    kept = ProveRLDataset(str(rl_parquet), tokenizer, _cfg(verl_cfg, max_prompt_length=limit).data)
    assert len(kept) == len(synth_rows) - over and over > 0
    assert kept.prompt_stats == {"rows": len(synth_rows), "over_limit": over, "max_prompt_length": limit,
                                 "longest": lengths[-1], "dropped": over}
    strict = _cfg(verl_cfg, max_prompt_length=limit, filter_overlong_prompts=False, truncation="error")
    with pytest.raises(ValueError, match=f"{over} of {len(synth_rows)} prompts are longer"):
        ProveRLDataset(str(rl_parquet), tokenizer, strict.data)
