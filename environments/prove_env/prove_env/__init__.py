"""prove-env: PROVE as a verifiers environment (the hub package; the adapter is prove.integrations.verifiers).

    pip install ./environments/prove_env && vf-eval prove-env --env.taskset.rows <rows.parquet> -m <model> ...
"""

from prove.integrations.verifiers import ProveEnv, ProveTaskset, load_environment

__all__ = ["ProveEnv", "ProveTaskset", "load_environment"]
