"""Property-based fuzzing of every tool: schema-valid and schema-invalid arguments.

The only failure a tool may produce is the model-facing tool error (a logged call with ok=False);
after an error, and after any read, the state hash is unchanged. The number of fuzzed calls is
printed in pytest's terminal summary.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prove.env import Hub, load_registry
from prove.env.errors import REASONS
from prove.env.sampling import ValuePool
from prove.env.types import ENTITY, declared_entity

REG = load_registry()
HUB = Hub()
SEED = 3
POOLS: dict[str, ValuePool] = {}
CALLS = {"valid": 0, "invalid": 0, "ok": 0, "error": 0, "raised": 0}

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def _pool(server: str) -> ValuePool:
    if server not in POOLS:
        HUB.open(f"pool-{server}", SEED)
        POOLS[server] = ValuePool.of(HUB, f"pool-{server}", server)
    return POOLS[server]


def strategy(schema: dict[str, Any], defs: dict[str, Any], name: str, pool: ValuePool) -> st.SearchStrategy:
    """A hypothesis strategy for values valid under a (pydantic-generated) JSON schema."""
    if "$ref" in schema:
        return strategy(defs[schema["$ref"].split("/")[-1]], defs, name, pool)
    if "anyOf" in schema:
        return st.one_of([strategy(s, defs, name, pool) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        if kind == "integer":
            lo = None if lo is None else int(lo) + (1 if "exclusiveMinimum" in schema else 0)
            hi = None if hi is None else int(hi) - (1 if "exclusiveMaximum" in schema else 0)
            return st.integers(lo if lo is not None else -10**6, hi if hi is not None else 10**6)
        return st.floats(lo if lo is not None else -1e6, hi if hi is not None else 1e6, allow_nan=False,
                         exclude_min="exclusiveMinimum" in schema, exclude_max="exclusiveMaximum" in schema)
    if kind == "string":
        text = st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 30), 30))
        known = [v for v in pool.candidates(schema) if isinstance(v, str)]
        return st.sampled_from(known) | text if known else text
    if kind == "array":
        item = schema.get("items", {})
        if declared_entity(schema) and ENTITY not in item:
            item = {**item, ENTITY: declared_entity(schema)}
        item = strategy(item, defs, name, pool)
        return st.lists(item, min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4))
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: strategy(v, defs, k, pool) for k, v in props.items() if k in required},
            optional={k: strategy(v, defs, k, pool) for k, v in props.items() if k not in required},
        )
    return JSON


def _check(tool: str, arguments: Any, episode: str) -> None:
    spec = REG.tool(tool)
    HUB.open(episode, SEED)
    before = HUB.server_hash(episode, spec.server)
    try:
        out = HUB.call(tool, arguments, episode_id=episode)  # must not raise
    except Exception:
        CALLS["raised"] += 1  # counted for the run's summary line; the test fails on it
        raise
    assert set(out) == ({"name", "arguments", "ok", "result"} if out["ok"]
                        else {"name", "arguments", "ok", "error", "detail"})
    if not out["ok"] or not spec.write:
        assert HUB.server_hash(episode, spec.server) == before, out
    if not out["ok"]:
        assert isinstance(out["error"], str) and out["error"]
        assert out["detail"]["reason"] in REASONS, out  # the facts, whatever the input
    CALLS["ok" if out["ok"] else "error"] += 1
    HUB.close(episode)


FUZZ = settings(max_examples=20, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("tool", sorted(REG.tools))
def test_fuzz_schema_valid_arguments(tool: str) -> None:
    spec = REG.tool(tool)
    schema = spec.input_schema
    args = strategy({**schema, "type": "object"}, schema.get("$defs", {}), tool, _pool(spec.server))

    @FUZZ
    @given(args)
    def run(arguments: dict) -> None:
        CALLS["valid"] += 1
        _check(tool, arguments, "fuzz-valid")

    run()


@pytest.mark.parametrize("tool", sorted(REG.tools))
def test_fuzz_schema_invalid_arguments(tool: str) -> None:
    spec = REG.tool(tool)
    props = list(spec.input_schema.get("properties", {}))
    garbage = st.one_of(
        JSON,  # not even an object, or an object of anything
        st.dictionaries(st.sampled_from(props or ["x"]) | st.text(max_size=6), JSON, max_size=5),
        st.just({k: "x" * 5000 for k in props[:1]}),
    )

    @FUZZ
    @given(garbage)
    def run(arguments: Any) -> None:
        CALLS["invalid"] += 1
        _check(tool, arguments, "fuzz-invalid")

    run()
