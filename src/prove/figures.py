"""Redraw every figure under figures/ from what is already in results/, without recomputing.

    python -m prove.figures --results results --figures figures      # or: ./run_all.sh figures
    python -m prove.figures --list                                   # the registry: figure, inputs, producer

Each figure is one registry entry: its name, the files under ``results/`` it reads, the command that
writes them, and a draw function that reuses the notebooks' own plot functions. Every figure is drawn
in the paper style (``prove.figures_style``) and written as ``<name>.png`` and ``<name>.pdf``. A figure
whose inputs are missing is reported by name with the missing files and the command that produces
them; the others are drawn. Exit code: 0 when at least one figure was drawn and none failed while
drawing; 1 when a draw failed (its error is printed) or nothing could be drawn.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prove.figures_style import paper_style, save

__all__ = ["Figure", "REGISTRY", "missing_inputs", "redraw", "main"]

RUN_ALL = "./run_all.sh"
TRAIN = "prove train smollm2-135m --variant sft && prove train smollm2-135m"
Draw = Callable[[Path, Path], None]
"""draw(results_dir, png_path): writes png_path and its PDF twin."""


@dataclass(frozen=True)
class Figure:
    name: str
    inputs: tuple[str, ...]
    """Paths under results/ (a glob pattern must match at least one file)."""
    producer: str
    draw: Draw


def _nb(n: str) -> str:
    return f"{RUN_ALL}   (notebooks/{n} writes it)"


def _both(plot: Callable[..., Any], *args: Any) -> Callable[[Path], None]:
    """A plot function that saves to the path it is given, called once for PNG and once for PDF."""
    def draw(png: Path) -> None:
        for path in (png, png.with_suffix(".pdf")):
            plot(*args, path)
    return draw


def _csv(results: Path, name: str, **kw: Any) -> pd.DataFrame:
    return pd.read_csv(results / name, **kw)


# ---------------------------------------------------------------- draw functions, one per figure

def _inventory(results: Path, png: Path) -> None:
    from prove.env.report import plot_inventory

    _both(plot_inventory, _csv(results, "01_server_summary.csv"))(png)


def _graph_edges(results: Path, png: Path) -> None:
    from prove.graph.plots import plot_edge_counts

    save(plot_edge_counts(_csv(results, "graph_edge_counts.csv")), png)


def _graph_server(server: str) -> Draw:
    def draw(results: Path, png: Path) -> None:
        from prove.graph import load_graph
        from prove.graph.plots import draw_server_graph

        save(draw_server_graph(load_graph(results / "graph" / "tool_graph.json"), server), png)
    return draw


def _graph_chains(results: Path, png: Path) -> None:
    from prove.graph import load_graph
    from prove.graph.chains import coverage_report, load_chains
    from prove.graph.plots import plot_chain_lengths

    graph = load_graph(results / "graph" / "tool_graph.json")
    save(plot_chain_lengths(coverage_report(graph, load_chains(results / "graph" / "chains.jsonl"))), png)


def _synth_funnel(results: Path, png: Path) -> None:
    from prove.synth.plots import funnel_figure

    save(funnel_figure(json.loads((results / "synth" / "card.json").read_text())["funnel"]), png)


def _synth_distributions(results: Path, png: Path) -> None:
    from prove.synth.plots import distributions_figure

    lines = (results / "synth" / "examples.jsonl").read_text().splitlines()
    save(distributions_figure([json.loads(line) for line in lines if line.strip()]), png)


def _reward_cases(results: Path, png: Path) -> None:
    from prove.reward.plots import cases_figure

    save(cases_figure(_csv(results, "reward_cases.csv")), png)


def _reward_verbosity(results: Path, png: Path) -> None:
    from prove.reward import PROVE, analysis
    from prove.reward.components import budget
    from prove.reward.plots import verbosity_figure

    n_g = len(analysis.DEMO_TURN["calls"])  # the reward's own constants, as notebook 04 passes them
    save(verbosity_figure(_csv(results, "reward_verbosity.csv"), budget(n_g, PROVE.beta) - n_g,
                          analysis.precise_partial_score()), png)


def _reward_coverage(results: Path, png: Path) -> None:
    from prove.reward.plots import coverage_heatmap

    save(coverage_heatmap(_csv(results, "reward_coverage_grid.csv")), png)


def _reward_beta(results: Path, png: Path) -> None:
    from prove.reward.plots import beta_figure

    save(beta_figure(_csv(results, "reward_efficiency.csv"), _csv(results, "reward_budget.csv", index_col=0)),
         png)


def _train_sweep(results: Path, png: Path) -> None:
    from prove.train import report

    save(report.sweep_and_weights_figure(_csv(results, "train_configs.csv"), report.reward_weights_table()),
         png)


def _train_curves(results: Path, png: Path) -> None:
    from prove.train import report

    save(report.curves_figure(report.find_runs(results)), png)


def _teval_self_check(results: Path, png: Path) -> None:
    from prove.eval.plots import plot_teval_abilities

    rows = _csv(results, "teval_self_check/teval.csv")
    scores = [{"label": label, "abilities": dict(zip(sub["ability"], sub["score"], strict=True))}
              for label, sub in rows.groupby("label", sort=False)]
    _both(plot_teval_abilities, scores)(png)


def _tau2_sample(results: Path, png: Path) -> None:
    from prove.eval.plots import plot_tau2_pass_k

    _both(plot_tau2_pass_k, _csv(results, "tau2_sample/tau2_bench.csv").to_dict("records"))(png)


def _heldout(results: Path, png: Path) -> None:
    from prove.eval.plots import plot_heldout

    _both(plot_heldout, _csv(results, "heldout_summary.csv"))(png)


def _bfcl(results: Path, png: Path) -> None:
    from prove.eval.plots import plot_bfcl_categories

    _both(plot_bfcl_categories, _csv(results, "bfcl_multi_turn.csv").to_dict("records"))(png)


def _comparison(results: Path, png: Path) -> None:
    from prove.eval.plots import plot_comparison

    table = _csv(results, "eval_comparison.csv").dropna(subset=["base", "trained"])
    if table.empty:
        raise LookupError("eval_comparison.csv has no model with both a base and a trained score yet")
    _both(plot_comparison, table)(png)


def _ablation_behaviours(results: Path, png: Path) -> None:
    from prove.reward.plots import behaviours_figure

    means = _csv(results, "ablation_behaviour_means.csv", index_col=0)
    wins = _csv(results, "ablation_discrimination.csv", index_col=0)
    scores = _csv(results, "ablation_behaviour_scores.csv", usecols=["example_id", "turn"])
    save(behaviours_figure(means, wins, len(scores.drop_duplicates())), png)


def _runs_comparison(results: Path, png: Path) -> None:
    from prove.tracking import list_runs, runs_comparison_figure

    save(runs_comparison_figure(list_runs(results)), png)


REGISTRY: tuple[Figure, ...] = (
    Figure("01_inventory", ("01_server_summary.csv",), _nb("01_servers.ipynb"), _inventory),
    Figure("graph_edges_per_server", ("graph_edge_counts.csv",), _nb("02_graph.ipynb"), _graph_edges),
    Figure("graph_flights", ("graph/tool_graph.json",), _nb("02_graph.ipynb"), _graph_server("flights")),
    Figure("graph_chain_lengths", ("graph/tool_graph.json", "graph/chains.jsonl"), _nb("02_graph.ipynb"),
           _graph_chains),
    Figure("synth_funnel", ("synth/card.json",), _nb("03_synthesis.ipynb"), _synth_funnel),
    Figure("synth_distributions", ("synth/examples.jsonl",), _nb("03_synthesis.ipynb"), _synth_distributions),
    Figure("reward_cases", ("reward_cases.csv",), _nb("04_reward.ipynb"), _reward_cases),
    Figure("reward_verbosity", ("reward_verbosity.csv",), _nb("04_reward.ipynb"), _reward_verbosity),
    Figure("reward_coverage_heatmap", ("reward_coverage_grid.csv",), _nb("04_reward.ipynb"), _reward_coverage),
    Figure("reward_beta", ("reward_efficiency.csv", "reward_budget.csv"), _nb("04_reward.ipynb"), _reward_beta),
    Figure("train_lr_sweep_reward_weights", ("train_configs.csv",), _nb("05_train_grpo.ipynb"), _train_sweep),
    Figure("train_curves", ("train/*/metrics.jsonl",), TRAIN, _train_curves),
    Figure("teval_self_check", ("teval_self_check/teval.csv",), _nb("06_eval_bfcl_tau2_teval.ipynb"),
           _teval_self_check),
    Figure("tau2_sample_pass_k", ("tau2_sample/tau2_bench.csv",), _nb("06_eval_bfcl_tau2_teval.ipynb"),
           _tau2_sample),
    Figure("heldout_base_sft_grpo", ("heldout_summary.csv",), _nb("06_eval_bfcl_tau2_teval.ipynb"), _heldout),
    Figure("bfcl_multi_turn_categories", ("bfcl_multi_turn.csv",), _nb("06_eval_bfcl_tau2_teval.ipynb"), _bfcl),
    Figure("eval_base_vs_trained", ("eval_comparison.csv",), _nb("06_eval_bfcl_tau2_teval.ipynb"), _comparison),
    Figure("ablation_behaviours", ("ablation_behaviour_means.csv", "ablation_discrimination.csv",
                                   "ablation_behaviour_scores.csv"), _nb("07_ablations.ipynb"),
           _ablation_behaviours),
    Figure("runs_comparison", ("train/*/metrics.jsonl",), TRAIN + "   (then 06 for the evaluation bars)",
           _runs_comparison),
)


def missing_inputs(figure: Figure, results: Path) -> list[str]:
    """The figure's inputs that are not under ``results`` (a glob counts when it matches a file)."""
    missing = []
    for pattern in figure.inputs:
        found = any(p.is_file() for p in results.glob(pattern)) if "*" in pattern else (results / pattern).is_file()
        if not found:
            missing.append(str(results / pattern))
    return missing


def redraw(results: str | Path = "results", figures: str | Path = "figures",
           names: Sequence[str] | None = None, out: Any = None) -> dict[str, Any]:
    """Draw every registered figure (or ``names``) whose inputs exist; returns
    {"drawn": [paths], "missing": {name: (missing inputs, producer)}, "failed": {name: error}}."""
    out = out or sys.stdout
    results, figures = Path(results), Path(figures)
    known = {f.name: f for f in REGISTRY}
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        raise ValueError(f"unknown figures {unknown}; known: {', '.join(known)}")
    report: dict[str, Any] = {"drawn": [], "missing": {}, "failed": {}}
    for fig in (known[n] for n in names) if names else REGISTRY:
        missing = missing_inputs(fig, results)
        if missing:
            report["missing"][fig.name] = (missing, fig.producer)
            print(f"missing  {fig.name}: needs {', '.join(missing)}; run {fig.producer}", file=out)
            continue
        png = figures / f"{fig.name}.png"
        try:
            with paper_style():
                fig.draw(results, png)
        except Exception as exc:  # one figure's bad input must not stop the others; reported below
            report["failed"][fig.name] = f"{type(exc).__name__}: {exc}"
            print(f"FAILED   {fig.name}: {type(exc).__name__}: {exc}", file=out)
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        report["drawn"] += [png, png.with_suffix(".pdf")]
        print(f"drawn    {fig.name}: {png} (+ .pdf)", file=out)
    n_drawn = len(report["drawn"]) // 2
    print(f"{n_drawn} drawn, {len(report['missing'])} missing inputs, {len(report['failed'])} failed "
          f"-> {figures}", file=out)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prove.figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default="results", help="folder the notebooks wrote (default: results)")
    parser.add_argument("--figures", default="figures", help="folder to write figures to (default: figures)")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="only these figures")
    parser.add_argument("--list", action="store_true", help="print the registry and exit")
    args = parser.parse_args(argv)
    if args.list:
        for fig in REGISTRY:
            print(f"{fig.name:<32} {', '.join(fig.inputs):<70} {fig.producer}")
        return 0
    report = redraw(args.results, args.figures, args.only)
    return 0 if report["drawn"] and not report["failed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
