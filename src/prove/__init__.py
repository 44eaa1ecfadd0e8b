"""PROVE: Programmatic Rewards On Verified Environments (see README.md; `prove --help` for the CLI)."""

__version__ = "0.1.0"
