"""Grounded synthesis: live state sampling, a state-machine conversation generator with recovery,
perturbations, replay validation and export (JSONL, VERL parquet, dataset card).

Use: ``synthesize(SynthConfig.from_profile("smoke"), "results/synth")``; CLI ``python -m
prove.synth.cli --help``. Parts, in stage order (a module imports only its own stage or earlier
ones, and nothing of training, reward or evaluation; tests/synth/test_synth_stages.py checks):

* foundations: ``records`` (canonical JSON, ids, random streams), ``evidence`` (where values came
  from), ``phrasing``, ``sampling`` (live state sampling); the chains synthesis draws and the
  graph it looks edges up in are ``prove.graph.chains`` (``Chain``, ``Edge``, ``ToolGraph``);
* generate: ``machine`` (the state machine and the ``Teacher`` protocol), ``programmatic`` (with
  ``planner``) and ``openai_teacher`` (the two teachers), ``perturb`` (scripts and perturbations);
* validate: ``validate`` (replay and filters);
* export: ``export`` (rows in the ``prove.rows`` contract, JSONL, card);
* drive: ``pipeline`` (the run, across processes), ``cli``, ``plots``.
"""

from prove.graph.chains import Chain, Edge, ToolGraph
from prove.synth.evidence import provenance
from prove.synth.export import training_rows, write_parquet
from prove.synth.machine import (
    TRANSITIONS,
    Action,
    Conversation,
    Outcome,
    Script,
    State,
    SynthEnv,
    Teacher,
    TurnSpec,
    run_conversation,
)
from prove.synth.perturb import PerturbationRates, build_script
from prove.synth.pipeline import PAPER_SIZES, SynthConfig, SynthResult, asynthesize, synthesize
from prove.synth.programmatic import ProgrammaticTeacher
from prove.synth.records import KINDS, dumps, example_id, split_chains
from prove.synth.sampling import LiveSampler, SamplingContext
from prove.synth.validate import check_example, replay_example

__all__ = [
    "Action", "Chain", "Conversation", "Edge", "KINDS", "LiveSampler", "Outcome", "PAPER_SIZES",
    "PerturbationRates", "ProgrammaticTeacher", "SamplingContext", "Script", "State", "SynthConfig",
    "SynthEnv", "SynthResult", "TRANSITIONS", "Teacher", "ToolGraph", "TurnSpec", "build_script",
    "check_example", "dumps", "example_id", "provenance", "replay_example", "run_conversation",
    "split_chains", "synthesize", "asynthesize", "training_rows", "write_parquet",
]
