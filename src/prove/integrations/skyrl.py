"""PROVE as a SkyRL-Gym environment: ``ProveTextEnv`` (a ``BaseTextEnv``), its registration, its dataset.

    from prove.integrations.skyrl import register_prove, skyrl_dataset
    skyrl_dataset(read_rows("results/synth/train.parquet"), "data/skyrl/train.parquet", tokenizer)
    register_prove("http://127.0.0.1:8765", reward="prove")     # in SkyRL's entrypoint, before training
    # then SkyRL's trainer with data.train_data=['data/skyrl/train.parquet'] environment.env_class=prove

    python -m prove.integrations.skyrl --rows results/synth/train.parquet --out data/skyrl/train.parquet \
        [--tokenizer <the policy's HF folder>]     # the dataset (default tokenizer: SmolLM2's hermes one)

One environment per trajectory, as SkyRL's generator makes them (``skyrl_gym.make(env_class,
env_config=..., extras=<the dataset row's other columns>)``): ``__init__`` reads the PROVE row from
the extras (``prove.integrations.turn.TurnRow``) and gives the trajectory its own episode id, so the
episode opens at the row's seed with its earlier turns' calls replayed on the first call, apart from
every other trajectory of that row. ``step`` reads the model's ``<tool_call>`` blocks with the
reward's own parser (``prove.calls.parse_tool_calls``), runs them in order in the episode
(``Turn.call``) and returns the results as ``tool`` messages; a turn without a call ends the
episode, and so does ``max_turns`` (SkyRL's ``generator.max_turns``): the calls of the turn that
reaches it are logged as failed and not run, as PROVE's VERL and TRL rollouts log them. The reward
comes once, when the episode ends: ``Turn.score`` (``prove.reward.score_turn`` on the call log and
the state verdict) under the configured reward (``"prove"`` or any ablation of
``prove.reward.ABLATIONS``). A trajectory SkyRL stops first (prompt plus response past
``generator.max_input_length``) never reaches that step and gets 0 from SkyRL, and
``generator.zero_reward_on_non_stop`` zeroes a response cut at ``max_generate_length``; the
adapter still scores every episode when SkyRL asks for its metrics, so ``env_metrics`` carries
``prove/score`` (and each component) for those too.

SkyRL renders prompts with ``tokenizer.apply_chat_template(messages)`` and no ``tools``, so
``skyrl_dataset`` writes each row's offered tools into its system message the way the policy's own
template writes them, and checks that the rendering is the one the template gives with
``tools=``; SkyRL's prompt-length filter (``data.max_prompt_length``) then counts them too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from prove.integrations.turn import Turn, TurnRow, new_episode_id, run_sync
from prove.reward import get_config, parse_tool_calls
from prove.rows import RL_SCHEMA, decode_messages, encode_message, openai_messages
from prove.train.session import failed_entry

__all__ = ["ENV_ID", "ProveTextEnv", "register_prove", "skyrl_dataset", "skyrl_rows", "check_dataset"]

ENV_ID = "prove"
"""The id ``register_prove`` gives the environment (a dataset's ``env_class``)."""

_NOT_AN_OBJECT = "null"
"""What a call whose arguments are no JSON object is run with: the reward's parser keeps no raw text
for such a block, and ``Turn.call`` refuses (and logs as failed) arguments that are no object."""



def _episode_id(row: TurnRow) -> str:
    """An id no other trajectory of this process, host or row shares (a counter: no clock, no uuid)."""
    return new_episode_id(f"skyrl-{row.id}")


class ProveTextEnv(BaseTextEnv):
    """One trajectory of one PROVE row (see the module doc). ``extras``: the dataset row's columns
    other than ``prompt`` and ``env_class`` (``skyrl_rows`` writes them); ``env_urls``: the ``prove
    serve`` URL(s); ``reward``: an ablation name or a ``RewardConfig`` (both bound by ``register_prove``).
    ``env_config`` (what SkyRL passes: its ``skyrl_gym`` config's field named after the env class, a
    mapping, empty unless a config adds one) overrides ``env_urls`` and ``reward`` where it sets them."""

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None,
                 env_urls: str | Sequence[str] | None = None, reward: Any = "prove",
                 episode_id: str | None = None, timeout: float = 30.0) -> None:
        super().__init__()
        config = dict(env_config or {})
        extras = dict(extras or {})
        env_urls = config.get("env_urls", env_urls)
        if not env_urls:
            raise ValueError("ProveTextEnv needs the URL of a running `prove serve`: register it with "
                             "prove.integrations.skyrl.register_prove(env_urls=...)")
        self.reward = get_config(config.get("reward", reward))
        self.row = TurnRow.from_row({"prompt": [], **extras})
        self.max_turns = int(extras.get("max_turns") or 1)
        self.turn = Turn(self.row, env_urls, episode_id=episode_id or _episode_id(self.row), timeout=timeout)
        self.scored: dict[str, float | int] | None = None
        self.effect = ""
        self.done = False

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if self.done:
            raise RuntimeError(f"episode {self.turn.episode_id} has ended; SkyRL makes a new env per trajectory")
        self.turns += 1
        calls = parse_tool_calls(action)
        last = self.turns >= self.max_turns
        observations = []
        for call in calls:
            if last:  # as PROVE's rollouts log a turn that ended on a limit: not run, failed
                self.turn.log.append(failed_entry(call.name, call.arguments if call.well_formed else _NOT_AN_OBJECT,
                                                  f"not run: the rollout reached max_turns={self.max_turns}"))
                continue
            arguments = call.arguments if call.well_formed else _NOT_AN_OBJECT
            text = run_sync(self.turn.call(call.name, arguments))
            observations.append({"role": "tool", "name": call.name, "content": text})
        self.done = last or not calls
        reward = float(self._score()["score"]) if self.done else 0.0
        metadata = {"episode_id": self.turn.episode_id, "calls": len(calls)}
        return BaseTextEnvStepOutput(observations=[] if self.done else observations, reward=reward,
                                     done=self.done, metadata=metadata)

    def _score(self) -> dict[str, float | int]:
        if self.scored is None:
            async def read() -> tuple[str, dict[str, float | int]]:
                effect = await self.turn.effect()
                return effect, await self.turn.score(self.reward, effect)

            self.effect, self.scored = run_sync(read())
        return self.scored

    def get_metrics(self) -> dict[str, Any]:
        """PROVE's score and components of this episode (``prove/<key>``, averaged by SkyRL), and its
        episode id, effect hash and call log (dropped by SkyRL's averaging; read from ``env_metrics``)."""
        scored = self._score()
        metrics: dict[str, Any] = {f"prove/{k}": float(v) for k, v in scored.items()}
        metrics.update({"prove/ended": float(self.done), "prove/episode_id": self.turn.episode_id,
                        "prove/effect": self.effect, "prove/log": [dict(e) for e in self.turn.log]})
        return metrics

    def close(self) -> None:
        run_sync(self.turn.close())


def register_prove(env_urls: str | Sequence[str], reward: Any = "prove", env_id: str = ENV_ID,
                   timeout: float = 30.0) -> str:
    """Register ``ProveTextEnv`` with skyrl_gym under ``env_id`` (bound to these servers and this
    reward; registering the id again replaces it). Returns the id. Call it where SkyRL's generator
    runs (SkyRL's entrypoint), as SkyRL's docs register a custom environment."""
    import skyrl_gym
    from skyrl_gym.envs.registration import registry

    get_config(reward)  # an unknown ablation fails here, not in the first trajectory
    urls = [env_urls] if isinstance(env_urls, str) else list(env_urls)
    registry.pop(env_id, None)
    skyrl_gym.register(id=env_id, entry_point=f"{__name__}:ProveTextEnv",
                       kwargs={"env_urls": urls, "reward": reward, "timeout": timeout})
    return env_id


def _system_with_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tokenizer: Any) -> list[dict]:
    """``messages`` with the offered tools written into the system message as ``tokenizer``'s chat
    template writes them when given ``tools=``: the text the template inserts is taken from the two
    renderings, and the result is checked to render exactly as the original does with the tools."""
    if not messages or messages[0].get("role") != "system":
        raise ValueError("a PROVE row's prompt opens with its system message; this one opens with "
                         f"{messages[0].get('role') if messages else 'nothing'!r}")
    with_tools = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    without = tokenizer.apply_chat_template(messages, tokenize=False)
    system = messages[0].get("content") or ""
    anchor = without.find(system) + len(system)
    if not tools or without.find(system) < 0 or with_tools[:anchor] != without[:anchor]:
        inserted = None
    else:
        inserted = with_tools[anchor:len(with_tools) - (len(without) - anchor)]
    out = [{**messages[0], "content": system + (inserted or "")}, *messages[1:]]
    if inserted is None or tokenizer.apply_chat_template(out, tokenize=False) != with_tools:
        raise ValueError("the tokenizer's chat template does not write the offered tools into the system "
                         "message (SkyRL renders prompts without `tools=`); use a template that does, "
                         "such as prove.train.chat_template.HERMES_CHATML_TEMPLATE")
    return out


def skyrl_rows(rows: Iterable[Mapping[str, Any]], tokenizer: Any, env_id: str = ENV_ID) -> list[dict[str, Any]]:
    """PROVE training rows (``prove.rows``) as SkyRL dataset rows: ``prompt`` (the row's messages, its
    offered tools written into the system message for ``tokenizer``'s template), ``env_class`` and the
    PROVE row's other columns, which SkyRL hands the environment as its extras."""
    out = []
    for raw in rows:
        row = TurnRow.from_row(raw)
        messages = _system_with_tools(openai_messages(raw["prompt"]), list(row.tools), tokenizer)
        out.append({**{k: v for k, v in raw.items() if k != "prompt"},
                    "prompt": [encode_message(m) for m in messages], "env_class": env_id})
    return out


def skyrl_dataset(rows: Iterable[Mapping[str, Any]], path: str | Path, tokenizer: Any,
                  env_id: str = ENV_ID) -> Path:
    """``skyrl_rows`` written as the parquet file SkyRL's ``data.train_data`` / ``data.val_data`` read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = skyrl_rows(rows, tokenizer, env_id)
    if not out:
        raise ValueError("no rows to write")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(out, schema=RL_SCHEMA.append(pa.field("env_class", pa.string()))), path)
    return path


def check_dataset(data: str | Path | Iterable[Mapping[str, Any]], env_id: str = ENV_ID,
                  registered: bool = True) -> int:
    """Check a SkyRL dataset built from PROVE rows (a parquet path or its rows); returns its row count.
    Raises ``ValueError`` naming the first bad row and what is wrong: a column SkyRL or the environment
    needs is missing, ``env_class`` is not ``env_id`` or (when ``registered``) not registered, the
    PROVE row cannot be read, or the system message does not carry the offered tools."""
    from skyrl_gym.envs.registration import registry

    from prove.rows import read_rows

    rows = read_rows(data) if isinstance(data, (str, Path)) else list(data)
    if not rows:
        raise ValueError("the dataset has no rows")
    if registered and env_id not in registry:
        raise ValueError(f"env_class {env_id!r} is not registered with skyrl_gym; call "
                         "prove.integrations.skyrl.register_prove(env_urls) first")
    for i, raw in enumerate(rows):
        where = f"row {i}"
        missing = [c for c in ("prompt", "env_class", "reward_model", "extra_info") if c not in raw]
        if missing:
            raise ValueError(f"{where}: missing column(s) {missing}; build the dataset with "
                             "prove.integrations.skyrl.skyrl_dataset(rows, path, tokenizer)")
        if raw["env_class"] != env_id:
            raise ValueError(f"{where}: env_class is {raw['env_class']!r}; PROVE rows use {env_id!r}")
        try:
            row = TurnRow.from_row(raw)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        where = f"row {i} ({row.id})"
        messages = decode_messages(raw["prompt"])
        if not messages or messages[0].get("role") != "system" or messages[-1].get("role") != "user":
            raise ValueError(f"{where}: the prompt must open with the system message and end with the user "
                             f"turn; roles are {[m.get('role') for m in messages]}")
        system = messages[0].get("content") or ""
        absent = [n for n in row.tool_names if json.dumps(n) not in system]
        if absent:
            raise ValueError(f"{where}: the system message does not offer {absent[:5]} ({len(absent)} of "
                             f"{len(row.tool_names)} tools); SkyRL renders no tools= of its own, so "
                             "skyrl_dataset writes them there")
    return len(rows)


def main(argv: Sequence[str] | None = None) -> Path:
    """``python -m prove.integrations.skyrl``: PROVE training rows → a checked SkyRL dataset."""
    import argparse

    from prove.rows import read_rows

    ap = argparse.ArgumentParser(prog="python -m prove.integrations.skyrl", description=main.__doc__)
    ap.add_argument("--rows", required=True, help="PROVE training rows (synthesis' train.parquet or val.parquet)")
    ap.add_argument("--out", required=True, help="the SkyRL dataset to write (parquet)")
    ap.add_argument("--tokenizer", default=None,
                    help="the policy's tokenizer (an HF folder or hub id) whose chat template writes the tools; "
                         "default: SmolLM2-135M's hermes template (prove.train.chat_template)")
    args = ap.parse_args(argv)
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    else:
        from prove.train.chat_template import load_tokenizer

        tokenizer = load_tokenizer()
    path = skyrl_dataset(read_rows(args.rows), args.out, tokenizer)
    print(f"{check_dataset(path, registered=False)} rows -> {path} (env_class {ENV_ID!r})")
    return path


if __name__ == "__main__":
    main()
