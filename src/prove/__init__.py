"""PROVE: Programmatic Rewards On Verified Environments (see README.md; `prove --help` for the CLI).

Its parts are layers (foundations, env, reward, llm, graph, synth, tracking, train, eval, then
figures and the CLI), each importing only from those below it: the table, with why each sits where
it does, is ``LAYERS`` in tests/test_layers.py, which checks every import of the package against it.
"""

__version__ = "0.1.0"
