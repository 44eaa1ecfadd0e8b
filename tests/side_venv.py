"""A venv of its own for a framework whose pins clash with the project's: ``side_venv(name, requirements)``.

Some environment frameworks cannot be installed beside the project's pins (pip reports
ResolutionImpossible: each caller says which pin clashes). Their tests build a side venv once under
``.cache/venvs/<name>-<hash of the requirements>/``: the framework and its own requirements are
installed there, and a ``.pth`` file appends the project venv's site directories after the side venv's
own, so ``import prove`` works while the side venv's packages shadow the project's. A venv counts as
built only once its ``.complete`` marker is written (an interrupted build is removed and redone), builds
are serialised by a lock file, and a later call with the same requirements reuses it.

``base``: another interpreter to build the venv from (a framework that needs a newer Python than the
project's, e.g. NeMo Gym's 3.12). Such a venv gets no ``.pth`` file: the project venv's compiled packages
are built for the project's Python, so that venv cannot import ``prove`` and reaches it over HTTP instead.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("PROVE_SIDE_VENVS", ROOT / ".cache" / "venvs"))


def find_python(version: str, env_var: str) -> str | None:
    """An interpreter of ``version`` (e.g. "3.12") to build a side venv from: ``$env_var``, else pyenv's
    ``/root/.pyenv/versions/<version>*``, else ``python<version>`` on PATH; None when there is none."""
    candidates = [os.environ.get(env_var, ""), *sorted(glob.glob(f"/root/.pyenv/versions/{version}*/bin/python")),
                  shutil.which(f"python{version}") or ""]
    want = tuple(int(x) for x in version.split("."))
    for python in filter(None, candidates):
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                              text=True, check=False)
        if done.returncode == 0 and tuple(int(x) for x in done.stdout.split()) == want:
            return python
    return None


def side_python(venv: Path) -> Path:
    """The interpreter of a side venv."""
    return venv / "bin" / "python"


def side_venv(name: str, requirements: list[str], timeout: float = 1800.0, base: str | Path | None = None) -> Path:
    """The side venv for `requirements` (built on first use, from the interpreter `base` when given,
    else this one); raises with pip's output when pip fails."""
    version = sys.version if base is None else subprocess.run(
        [str(base), "-c", "import sys; print(sys.version)"], check=True, capture_output=True, text=True).stdout
    digest = hashlib.sha256("\n".join([version, *sorted(requirements)]).encode()).hexdigest()[:12]
    venv = CACHE / f"{name}-{digest}"
    if (venv / ".complete").exists():
        return venv
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second builder waits, then finds the venv complete
        if not (venv / ".complete").exists():
            _build(venv, requirements, timeout, base)
    return venv


def _build(venv: Path, requirements: list[str], timeout: float, base: str | Path | None) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([str(base or sys.executable), "-m", "venv", str(venv)], check=True)
    python = side_python(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    if base is None:
        _see_project(python, env)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
        env=env, capture_output=True, text=True, timeout=timeout,
    )
    if done.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        raise RuntimeError(f"pip could not build the side venv {venv.name} from {requirements}:\n"
                           f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    (venv / ".complete").write_text("\n".join(requirements) + "\n")


def _see_project(python: Path, env: dict[str, str]) -> None:
    # The project's packages come after the side venv's own: a .pth file appends them to sys.path. It is
    # written before pip runs, so pip counts what the project already has (torch: gigabytes) as
    # installed where it meets the requirements, and installs into the side venv only what differs.
    # The project venv's site directories go in with site.addsitedir, so their own .pth files run too:
    # the editable install's finder maps prove_servers (servers/), which no plain path line can.
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True, env=env).stdout.strip())
    sites = [p for p in dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]]) if Path(p).is_dir()]
    lines = [str(ROOT / "src"), *(f"import site; site.addsitedir({p!r})" for p in sites)]
    (purelib / "zz_prove_project.pth").write_text("".join(f"{line}\n" for line in lines))
