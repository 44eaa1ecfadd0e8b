"""Reward configuration: weights, β and value rules in one frozen dataclass, ablations by name.

Use: ``from prove.reward import RewardConfig, ABLATIONS, get_config``; ``get_config("beta0")``.

Why the defaults (``PROVE``) are what they are — one setting for every model, as in the paper:

* ``beta = 0.5``: budget B = n_g + ceil(n_g/2). A live environment legitimately needs a few calls
  outside the ground truth (a lookup the teacher did not need, one retry after a ``ToolError``), so
  every turn gets at least one spare call and long turns about one spare per two ground-truth
  calls. ``beta0`` is the tight-budget ablation.
* Weights ``validity 0.1, coverage 0.3, efficiency 0.2, name 0.2, args 0.2`` (sum 1): coverage is
  the task objective and gets the largest share; argument values are what change live state and
  get the next; validity is mostly learned early (formatting) and gets the smallest. The two
  anti-padding terms (efficiency + name) together weigh 0.4, chosen so that a rollout that covers
  all of G but sprays calls without bound (score → 0.1 + 0.3 + 0.2 = 0.6) scores below a precise
  rollout that completes 2 of 3 steps (0.1 + 0.2 + 0.7·2/3 ≈ 0.77): precision beats spraying.
* Value rules: strings compare after collapsing whitespace and case-folding; numbers with
  ``rel_tol = 1e-6`` (amounts such as 100 vs 100.0 vs "100" agree; 100 vs 100.01 does not);
  numeric strings compare as numbers (type errors are already charged by validity, so the value
  signal is about the value).
* ``w_outcome = 0``: the state-verified outcome (did the rollout's episode end with the ground
  truth's effect on the records, whatever calls it made; ``prove.reward.components``) is reported
  for every rollout but weighs nothing, so the paper's numbers are the five call-based components'.
  The ``outcome`` ablation gives it coverage's weight (0.3): a correct alternative plan then earns
  that share in full while coverage still charges it for the ground-truth steps it skipped.
* ``coverage_requires_success``: a call whose live execution is known to have failed
  (``ok: false``) did not complete its step and cannot cover it. A call with unknown outcome (the
  ``<tool_call>`` text fallback) can cover, but never earns the execution third of validity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

COMPONENTS: tuple[str, ...] = ("validity", "coverage", "efficiency", "name_signal", "arg_match", "outcome")


@dataclass(frozen=True)
class RewardConfig:
    """Weights of the six components, the budget slack β, and the value-normalisation rules."""

    w_validity: float = 0.1
    w_coverage: float = 0.3
    w_efficiency: float = 0.2
    w_name: float = 0.2
    w_args: float = 0.2
    w_outcome: float = 0.0
    beta: float = 0.5
    normalise_strings: bool = True
    numeric_strings: bool = True
    rel_tol: float = 1e-6
    abs_tol: float = 1e-9
    coverage_requires_success: bool = True
    # Exact coverage search while (compatible pairs) * 2**n_g stays under this; greedy beyond.
    exact_search_budget: int = 1 << 17

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("float", float) and not (
                isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
            ):
                raise ValueError(f"RewardConfig.{f.name} must be finite and >= 0, got {value!r}")
        weights = (self.w_validity, self.w_coverage, self.w_efficiency, self.w_name, self.w_args,
                   self.w_outcome)
        if sum(weights) <= 0:
            raise ValueError("RewardConfig needs at least one positive weight")
        object.__setattr__(self, "_weights", weights)  # read on every scored turn
        if self.exact_search_budget < 0:
            raise ValueError("RewardConfig.exact_search_budget must be >= 0")

    @property
    def weights(self) -> tuple[float, float, float, float, float, float]:
        """Weights in the order of ``COMPONENTS``."""
        return self._weights  # type: ignore[attr-defined]

    @property
    def needs_state(self) -> bool:
        """The score depends on the state-verified outcome (``w_outcome > 0``): a rollout must
        come with its episode's effect hash and the row with the expected one."""
        return self.w_outcome > 0


PROVE = RewardConfig()

ABLATIONS: dict[str, RewardConfig] = {
    "prove": PROVE,
    "no_validity": replace(PROVE, w_validity=0.0),
    "no_coverage": replace(PROVE, w_coverage=0.0),
    "no_efficiency": replace(PROVE, w_efficiency=0.0),
    "beta0": replace(PROVE, beta=0.0),
    "no_name": replace(PROVE, w_name=0.0),
    "no_args": replace(PROVE, w_args=0.0),
    "recall_only": RewardConfig(
        w_validity=0.0, w_coverage=1.0, w_efficiency=0.0, w_name=0.0, w_args=0.0
    ),
    "outcome": replace(PROVE, w_outcome=0.3),
}


CALL_ABLATIONS: dict[str, RewardConfig] = {n: c for n, c in ABLATIONS.items() if not c.needs_state}
"""The ablations a turn's calls alone can score (every one but ``outcome``, which needs the live
episode's effect): what hand-built cases without an episode are scored under."""


def get_config(config: str | RewardConfig | None = None) -> RewardConfig:
    """A config by ablation name (``None`` → PROVE's default). Unknown names fail loudly."""
    if config is None:
        return PROVE
    if isinstance(config, RewardConfig):
        return config
    if config not in ABLATIONS:
        raise ValueError(f"unknown reward config {config!r}; known: {', '.join(ABLATIONS)}")
    return ABLATIONS[config]
