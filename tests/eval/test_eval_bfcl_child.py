"""The BFCL child's config file: the parent's settings round-trip, and a bad file names the field and what is valid.

    .venv/bin/python -m pytest tests/eval/test_eval_bfcl_child.py -q
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prove.eval.base import Endpoint
from prove.eval.bfcl import BFCLConfig, _child_config, _child_env
from prove.eval.bfcl_child import (
    ChildConfig,
    ChildConfigError,
    ChildModel,
    main,
    read_config,
    write_config,
)


def _config(**overrides: object) -> ChildConfig:
    model = ChildModel(registry="prove/SmolLM2-135M-base", model_name="smollm2", handler="QwenHandler",
                       is_fc_model=False, max_new_tokens=32, no_think=True)
    return ChildConfig(**{"project_dir": "/runs/bfcl", "models": (model,), "base_url": "http://127.0.0.1:8000/v1",
                          "tokenizer_path": "/models/smollm2", "max_steps_per_turn": 1, **overrides})


def test_the_config_file_round_trips(tmp_path):
    cfg = _config()
    path = write_config(cfg, tmp_path / "logs" / "x.generate.json")
    assert read_config(path) == cfg
    assert read_config(write_config(_config(base_url=None, tokenizer_path=None, max_steps_per_turn=None),
                                    tmp_path / "e.json")).base_url is None


def test_the_parent_writes_every_setting_but_the_api_key(tmp_path):
    run = BFCLConfig(label="SmolLM2-135M-base", handler="QwenHandler", is_fc_model=False, project_dir=tmp_path,
                     tokenizer_path="/models/smollm2", max_new_tokens=32, max_steps_per_turn=1, no_think=True)
    endpoint = Endpoint("http://127.0.0.1:8000/v1", "smollm2", api_key="sk-secret")
    generate = _child_config(run, endpoint, serving=True)
    assert generate == _config(project_dir=str(tmp_path.resolve()))
    assert "sk-secret" not in write_config(generate, tmp_path / "g.json").read_text()
    assert _child_env(run, endpoint, serving=True)["REMOTE_OPENAI_API_KEY"] == "sk-secret"
    assert not any(k.startswith("PROVE_BFCL") for k in _child_env(run, endpoint, serving=True))
    assert generate.bfcl_environ() == {
        "BFCL_PROJECT_ROOT": str(tmp_path.resolve()), "REMOTE_OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "REMOTE_OPENAI_TOKENIZER_PATH": "/models/smollm2"}
    evaluate = _child_config(run, endpoint, serving=False)  # the checker needs no endpoint
    assert evaluate.base_url is None and evaluate.tokenizer_path is None
    assert evaluate.bfcl_environ() == {"BFCL_PROJECT_ROOT": str(tmp_path.resolve())}


def _model_json(**overrides: object) -> dict:
    return {"registry": "prove/x", "model_name": "m", "handler": "QwenFCHandler", "is_fc_model": True, **overrides}


@pytest.mark.parametrize("data, message", [
    ({"project_dir": "/r", "models": [_model_json()], "max_step": 1},
     "unknown field(s) ['max_step']; valid fields: ['project_dir', 'models', 'base_url', 'tokenizer_path', "
     "'max_steps_per_turn']"),
    ({"models": [_model_json()]}, "missing field(s) ['project_dir']; required: ['project_dir', 'models']"),
    ({"project_dir": "/r", "models": []}, "models = [] is not valid; expected a non-empty list of model objects"),
    ({"project_dir": "/r", "models": {"registry": "prove/x"}}, "models = {'registry': 'prove/x'} is not valid"),
    ({"project_dir": "/r", "models": [_model_json()], "max_steps_per_turn": 0},
     "max_steps_per_turn = 0 is not valid; expected a positive integer or null (bfcl's own 20)"),
    ({"project_dir": "/r", "models": [_model_json()], "max_steps_per_turn": "1"},
     "max_steps_per_turn = '1' is not valid"),
    ({"project_dir": "/r", "models": [_model_json()], "base_url": "localhost:8000"},
     "base_url = 'localhost:8000' is not valid; expected an http(s):// URL or null"),
    ({"project_dir": "/r", "models": [_model_json(handler="QwenFC")]},
     "models[0].handler = 'QwenFC' is not valid; expected one of ['Granite3FCHandler', 'Granite4FCHandler', "
     "'OpenAICompletionsHandler', 'QwenFCHandler', 'QwenHandler'] or 'module:Class'"),
    ({"project_dir": "/r", "models": [_model_json(), _model_json(registry="prove/qwen3_8b")]},
     "models[1].registry = 'prove/qwen3_8b' is not valid; expected 'prove/<label>' (a label without '_'"),
    ({"project_dir": "/r", "models": [_model_json(is_fc_model="yes")]},
     "models[0].is_fc_model = 'yes' is not valid; expected true or false"),
    ({"project_dir": "/r", "models": [_model_json(cap=3)]},
     "unknown field(s) ['models[0].cap']; valid fields: ['registry', 'model_name', 'handler'"),
    ({"project_dir": "/r", "models": [{"registry": "prove/x"}]},
     "missing field(s) ['models[0].model_name', 'models[0].handler', 'models[0].is_fc_model']"),
    (["/r"], "the file must be a JSON object with fields ['project_dir', 'models'"),
])
def test_a_bad_file_names_the_field_and_what_is_valid(tmp_path, data, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ChildConfigError, match=re.escape(f"{path}: {message}")):
        read_config(path)


def test_a_file_that_is_not_json_or_not_there_says_so(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{project_dir: /r}")
    with pytest.raises(ChildConfigError, match=r"x\.json: not valid JSON"):
        read_config(path)
    with pytest.raises(ChildConfigError, match=r"missing\.json: no such BFCL child config file"):
        read_config(tmp_path / "missing.json")


def test_the_child_stops_on_a_bad_config_before_touching_bfcl(tmp_path, capsys):
    assert main(["generate", "--model", "prove/x"]) == 2
    assert "--config CONFIG.json" in capsys.readouterr().err
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"project_dir": "/r", "models": [_model_json(max_new_tokens=-1)]}))
    with pytest.raises(ChildConfigError, match=r"models\[0\]\.max_new_tokens = -1 is not valid"):
        main(["--config", str(path), "generate", "--model", "prove/x"])


def test_no_prove_bfcl_environment_variable_is_left_in_the_repository():
    root = Path(__file__).resolve().parents[2]
    name = "PROVE_" + "BFCL_"  # split so this file does not match itself
    hits = [str(p.relative_to(root)) for folder in ("src", "tests", "notebooks", "benchmarks", "configs")
            for p in (root / folder).rglob("*") if p.is_file() and p.suffix in {".py", ".ipynb", ".yaml", ".md", ".sh"}
            and name in p.read_text(errors="ignore")]
    hits += [f for f in ("README.md", "run_all.sh") if (root / f).is_file() and name in (root / f).read_text()]
    assert hits == []
