"""Grounded synthesis: live state sampling, a state-machine conversation generator with recovery,
perturbations, replay validation and export (JSONL, VERL parquet, dataset card).

Use: ``synthesize(SynthConfig.from_profile("smoke"), "results/synth")``; CLI ``python -m
prove.synth.cli --help``; parts: ``prove.synth.{chains, sampling, machine, programmatic,
openai_teacher, perturb, validate, export, pipeline}``.
"""

from prove.synth.chains import Chain, Edge, ToolGraph, sample_chains
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
    "sample_chains", "split_chains", "synthesize", "asynthesize", "training_rows", "write_parquet",
]
