"""SkyRL's own generator (``SkyRLGymGenerator``) on a PROVE dataset against a served policy; prints JSON.

    <skyrl side venv>/bin/python tests/integrations/skyrl_generator_driver.py --data skyrl.parquet \
        --env-url http://127.0.0.1:8765 --llm-url http://127.0.0.1:8000 --model <served name> --out out.json

Run by ``test_skyrl_generator.py`` in the side venv that holds ``skyrl`` (its transformers pin clashes
with the project's). Everything is SkyRL's: its ``PromptDataset`` (with its prompt-length filter),
``prepare_generator_input``, the vLLM sampling parameters its trainer sends, its HTTP
``RemoteInferenceClient`` and ``SkyRLGymGenerator.generate``, which makes a ``ProveTextEnv`` per
trajectory through ``skyrl_gym.make``. Writes per sample: the reward SkyRL reports (its per-token
rewards summed), the stop reason, the decoded response and the environment's metrics.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import typing
from pathlib import Path

if sys.version_info < (3, 12):  # skyrl 0.3.0 (Requires-Python >=3.11) puts a typing.TypedDict in a pydantic
    import typing_extensions  # model (skyrl.tinker.types), which pydantic refuses before Python 3.12

    typing.TypedDict = typing_extensions.TypedDict  # type: ignore[misc]

from skyrl.backends.skyrl_train.inference_servers.engine_utils import (
    get_sampling_params_for_backend,
)
from skyrl.backends.skyrl_train.inference_servers.remote_inference_client import (
    RemoteInferenceClient,
)
from skyrl.train.config import GeneratorConfig, SamplingParams, SkyRLGymConfig
from skyrl.train.dataset.dataset import PromptDataset
from skyrl.train.generators.skyrl_gym_generator import SkyRLGymGenerator
from skyrl.train.generators.utils import prepare_generator_input

from prove.integrations.skyrl import ENV_ID, register_prove
from prove.train.chat_template import load_tokenizer


async def generate(args: argparse.Namespace) -> list[dict]:
    register_prove(args.env_url, reward=args.reward)
    tokenizer = load_tokenizer()
    dataset = PromptDataset([args.data], tokenizer, max_prompt_length=args.max_prompt_length, num_workers=1)
    sampling = SamplingParams(max_generate_length=args.max_tokens, temperature=1.0, logprobs=None)
    cfg = GeneratorConfig(n_samples_per_prompt=args.samples, max_turns=args.max_turns, sampling_params=sampling,
                          max_input_length=args.max_prompt_length + args.max_turns * (args.max_tokens + 512))
    client = RemoteInferenceClient(proxy_url=args.llm_url, server_urls=[args.llm_url], data_parallel_size=1,
                                   model_name=args.model)
    generator = SkyRLGymGenerator(cfg, SkyRLGymConfig(max_env_workers=2), client, tokenizer)
    prompts = dataset.collate_fn([dataset[i] for i in range(len(dataset))])
    batch, _ = prepare_generator_input(prompts, args.samples, get_sampling_params_for_backend("vllm", sampling),
                                       ENV_ID, "train", 0)
    try:
        out = await generator.generate(batch, disable_tqdm=True)
    finally:
        await client.teardown()
    samples = []
    for i, reward in enumerate(out["rewards"]):
        samples.append({
            "reward": sum(reward) if isinstance(reward, list) else float(reward),
            "stop_reason": out["stop_reasons"][i],
            "response": tokenizer.decode(out["response_ids"][i], skip_special_tokens=False),
            "env_metrics": out["env_metrics"][i],
            "rollout_metrics": {k: v for k, v in (out["rollout_metrics"] or {}).items() if k.startswith("environment/")},
        })
    return samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a SkyRL dataset written by prove.integrations.skyrl.skyrl_dataset")
    ap.add_argument("--env-url", required=True, help="the running `prove serve`")
    ap.add_argument("--llm-url", required=True, help="the vLLM server's root URL (no /v1), started --enable-scale-out")
    ap.add_argument("--model", required=True, help="the served model name")
    ap.add_argument("--reward", default="prove", help="prove or an ablation of prove.reward.ABLATIONS")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--max-turns", type=int, default=2)
    ap.add_argument("--max-prompt-length", type=int, default=6144)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    Path(args.out).write_text(json.dumps(asyncio.run(generate(args))))


if __name__ == "__main__":
    main()
