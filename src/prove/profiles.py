"""Run profiles (`configs/profiles/<name>.yaml`): `smoke` for a CPU machine, `paper` for 8xH100.

    from prove.profiles import load_profile; cfg = load_profile("smoke")
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

__all__ = ["PROFILE_DIR", "available_profiles", "load_profile", "default_profile", "repo_root"]


def repo_root() -> Path:
    """The checkout this package runs from (where configs/ lives)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "configs" / "profiles").is_dir():
            return parent
    return Path.cwd()


PROFILE_DIR = repo_root() / "configs" / "profiles"


def available_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(name: str) -> dict[str, Any]:
    """The profile's settings; an unknown name lists the valid ones."""
    path = PROFILE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"unknown profile {name!r}; available: {', '.join(available_profiles())}")
    with path.open() as fh:
        return yaml.safe_load(fh)


def default_profile() -> str:
    """`paper` where an NVIDIA GPU answers, `smoke` otherwise."""
    return "paper" if shutil.which("nvidia-smi") and _gpu_present() else "smoke"


def _gpu_present() -> bool:
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout
