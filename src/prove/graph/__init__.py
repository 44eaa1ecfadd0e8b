"""Tool dependency graph: pair classifiers (schema, LLM), the graph, chains, agreement with labels."""

from prove.graph.agreement import (
    Labels,
    agreement_table,
    load_labels,
    pairwise_agreement,
    sample_pairs,
)
from prove.graph.build import CLASSIFIERS, abuild_graph, build_graph, classify_pairs
from prove.graph.chains import (
    Chain,
    Edge,
    ToolGraph,
    compose_chains,
    coverage_report,
    graph_chains,
    load_chains,
    sample_chains,
    save_chains,
    walk_chains,
)
from prove.graph.features import Join, joins
from prove.graph.graph import edge_counts, edge_table, is_entry, load_graph, save_graph, tool_graph
from prove.graph.llm_classifier import PROMPT_VERSION, LLMClassifier, parse_answer
from prove.graph.relations import (
    RELATIONS,
    Judgement,
    PairClassifier,
    sample_tool_pairs,
    tool_pairs,
)
from prove.graph.schema_classifier import SchemaClassifier

__all__ = [
    "Labels", "agreement_table", "load_labels", "pairwise_agreement", "sample_pairs", "CLASSIFIERS", "abuild_graph",
    "build_graph", "classify_pairs", "Chain", "Edge", "ToolGraph", "compose_chains", "coverage_report",
    "graph_chains", "load_chains", "sample_chains", "save_chains", "walk_chains", "Join", "joins",
    "edge_counts", "edge_table", "is_entry", "load_graph", "save_graph", "tool_graph",
    "PROMPT_VERSION", "LLMClassifier", "parse_answer", "RELATIONS", "Judgement", "PairClassifier",
    "tool_pairs", "sample_tool_pairs", "SchemaClassifier",
]
