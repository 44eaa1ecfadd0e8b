"""`python -m prove.graph --help`: build the tool dependency graph into results/graph."""

from prove.graph.build import main

main()
