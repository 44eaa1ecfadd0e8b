"""Package discovery only (dependencies live in pyproject.toml): maps servers/ to `prove_servers`."""

from setuptools import find_packages, setup

setup(
    packages=find_packages("src")
    + ["prove_servers"]
    + [f"prove_servers.{name}" for name in find_packages("servers")],
    package_data={"prove_servers": ["*.md"]},
)
