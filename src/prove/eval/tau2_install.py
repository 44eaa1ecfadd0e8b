"""Install τ²-bench v0.2.0 from a source folder or tarball into this venv, once (run_all.sh does it).

    python -m prove.eval.tau2_install install ../shared/vendor/tau2-bench-0.2.0.tar.gz
    python -m prove.eval.tau2_install data-dir      # the TAU2_DATA_DIR the install recorded

τ²-bench is not on PyPI. Its declared requirements are open ranges (`litellm>=1.65.0`, ...) and pip,
left alone, picks the newest litellm, which downgrades `importlib-metadata` that this venv already
has at a newer version. So the install runs with every package already in the venv pinned to its
present version (`pip freeze` as constraints): pip adds only the missing requirements, at versions
that fit what is here (litellm 1.83.0 on this machine), and changes nothing installed; if no such
versions exist pip stops and says which requirement conflicts. A tarball is unpacked into
`<venv>/src/` and installed from there (not editable); its `data/` folder is TAU2_DATA_DIR. A stamp
(`<venv>/.prove-tau2.json`) records the source's fingerprint, so a second call returns in
milliseconds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "TAU2_TAG",
    "TAU2_DIST_VERSIONS",
    "DOMAIN_FILES",
    "Tau2SourceError",
    "SourceInfo",
    "check_source",
    "install",
    "stamp_path",
    "read_stamp",
    "installed_data_dir",
]

TAU2_TAG = "v0.2.0"
TAU2_DIST_VERSIONS = ("0.2.0", "0.2.1.dev0")
"""Distribution versions of tag v0.2.0: its pyproject.toml already says `0.2.1-dev` (pip: 0.2.1.dev0)."""
SOURCE_VERSIONS = ("0.2.0", "0.2.1-dev")
"""The same, as pyproject.toml spells them; the CHANGELOG's newest release must be 0.2.0 as well."""
GIT_HINT = (f"git clone --branch {TAU2_TAG} --depth 1 https://github.com/sierra-research/tau2-bench "
            "and set PROVE_TAU2_SOURCE to that folder (or to ../shared/vendor/tau2-bench-0.2.0.tar.gz)")
DOMAIN_FILES: dict[str, tuple[str, ...]] = {
    "mock": ("db.json", "policy.md", "tasks.json"),
    "airline": ("db.json", "policy.md", "tasks.json"),
    "retail": ("db.json", "policy.md", "tasks.json"),
    "telecom": ("db.toml", "user_db.toml", "main_policy.md", "tech_support_manual.md", "tasks.json"),
}
"""What each domain's environment and task loader open under <data>/tau2/domains/<domain>/ (v0.2.0)."""


class Tau2SourceError(RuntimeError):
    """PROVE_TAU2_SOURCE is missing, is not τ²-bench, or is another version; the message says the fix."""


@dataclass(frozen=True)
class SourceInfo:
    """A checked τ²-bench source tree: where it is, its version, a fingerprint of what was given."""

    root: Path
    version: str
    fingerprint: str
    given: str

    @property
    def data_dir(self) -> Path:
        return self.root / "data"


def _fingerprint(path: Path) -> str:
    """sha256 of a tarball's bytes; for a folder, of its pyproject.toml and CHANGELOG.md."""
    h = hashlib.sha256()
    if path.is_file():
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    else:
        for name in ("pyproject.toml", "CHANGELOG.md"):
            f = path / name
            h.update(f.read_bytes() if f.is_file() else b"")
    return h.hexdigest()


def _project_version(root: Path) -> tuple[str, str]:
    """(name, version) from pyproject.toml's [project] table (stdlib only: tomllib is 3.11+)."""
    text = (root / "pyproject.toml").read_text()
    name = re.search(r'(?m)^name\s*=\s*"([^"]+)"', text)
    version = re.search(r'(?m)^version\s*=\s*"([^"]+)"', text)
    return (name.group(1) if name else ""), (version.group(1) if version else "")


def _latest_release(root: Path) -> str | None:
    """The newest released section of CHANGELOG.md (`## [0.2.0] - 2025-10-06` -> "0.2.0")."""
    f = root / "CHANGELOG.md"
    if not f.is_file():
        return None
    m = re.search(r"(?m)^## \[(\d+\.\d+\.\d+)\]", f.read_text())
    return m.group(1) if m else None


def _unpack(tarball: Path, dest_parent: Path) -> Path:
    """Unpack `tarball` (one top folder) under dest_parent, atomically; returns the top folder."""
    with tarfile.open(tarball) as tf:
        tops = {m.name.split("/", 1)[0] for m in tf.getmembers() if m.name not in ("", ".")}
        if len(tops) != 1:
            raise Tau2SourceError(f"{tarball} is not a τ²-bench source tarball (top-level entries "
                                  f"{sorted(tops)[:5]}, expected one folder); fix: {GIT_HINT}")
        top = tops.pop()
        target = dest_parent / top
        if target.is_dir():
            return target
        dest_parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest_parent))
        try:
            _extract_data(tf, tmp)
            os.replace(tmp / top, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _extract_data(tf: tarfile.TarFile, dest: Path) -> None:
    """Extract plain files and folders only, inside `dest` (tarfile's "data" filter, which Python
    before 3.11.4 lacks: there the same rule is checked here)."""
    if hasattr(tarfile, "data_filter"):
        tf.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for member in tf.getmembers():
        where = (dest / member.name).resolve()
        if not (member.isfile() or member.isdir()) or (where != root and root not in where.parents):
            raise Tau2SourceError(f"refusing tarball member {member.name!r}: only files and folders "
                                  "inside the source folder are unpacked")
    tf.extractall(dest)


def check_source(given: str | os.PathLike[str] | None, unpack_to: Path | None = None) -> SourceInfo:
    """Check that `given` is τ²-bench v0.2.0 (folder or .tar.gz; a tarball is unpacked under `unpack_to`)."""
    if not given:
        raise Tau2SourceError(f"PROVE_TAU2_SOURCE is not set; fix: {GIT_HINT}")
    path = Path(given).expanduser().resolve()
    if not path.exists():
        raise Tau2SourceError(f"PROVE_TAU2_SOURCE={given} does not exist; fix: {GIT_HINT}")
    fingerprint = _fingerprint(path)
    if path.is_file():
        if not tarfile.is_tarfile(path):
            raise Tau2SourceError(f"PROVE_TAU2_SOURCE={given} is a file but not a tarball; fix: {GIT_HINT}")
        root = _unpack(path, unpack_to or Path(sys.prefix) / "src")
    else:
        root = path
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "tau2").is_dir():
        raise Tau2SourceError(f"PROVE_TAU2_SOURCE={given} is not a τ²-bench source tree (no pyproject.toml "
                              f"and src/tau2 in {root}); fix: {GIT_HINT}")
    name, version = _project_version(root)
    release = _latest_release(root)
    if name != "tau2" or version not in SOURCE_VERSIONS or release != "0.2.0":
        raise Tau2SourceError(
            f"PROVE_TAU2_SOURCE={given} is τ²-bench {name or '?'} {version or '?'} (latest CHANGELOG release "
            f"{release}), not {TAU2_TAG}: PROVE pins {TAU2_TAG} (the last tag on Python 3.10/3.11 and the "
            f"version behind the published Qwen τ² numbers); fix: {GIT_HINT}")
    return SourceInfo(root=root, version=version, fingerprint=fingerprint, given=str(path))


def stamp_path(prefix: str | Path | None = None) -> Path:
    return Path(prefix or sys.prefix) / ".prove-tau2.json"


def read_stamp(prefix: str | Path | None = None) -> dict | None:
    path = stamp_path(prefix)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def installed_data_dir(prefix: str | Path | None = None) -> Path | None:
    """The data folder the last install recorded for this venv (None when τ²-bench was not installed so)."""
    stamp = read_stamp(prefix)
    return Path(stamp["data_dir"]) if stamp else None


def _installed_version() -> str | None:
    try:
        return importlib.metadata.version("tau2")
    except importlib.metadata.PackageNotFoundError:
        return None


def install(given: str | os.PathLike[str] | None, *, python: str = sys.executable,
            quiet: bool = True) -> dict:
    """Install τ²-bench from `given` into the venv of `python` unless the stamp says it is done; returns the stamp."""
    prefix = Path(subprocess.check_output([python, "-c", "import sys; print(sys.prefix)"], text=True).strip())
    stamp = read_stamp(prefix)
    same_python = Path(python).resolve() == Path(sys.executable).resolve()
    if given and stamp and Path(given).expanduser().exists() \
            and stamp.get("fingerprint") == _fingerprint(Path(given).expanduser().resolve()) \
            and Path(stamp["data_dir"]).is_dir() and (not same_python or _installed_version() == stamp["version"]):
        return stamp
    src = check_source(given, unpack_to=prefix / "src")
    freeze = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                            capture_output=True, text=True).stdout
    pins = [line for line in freeze.splitlines() if "==" in line and not line.startswith("tau2==")]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(pins) + "\n")
        constraints = fh.name
    try:
        cmd = [python, "-m", "pip", "install", *(["--quiet"] if quiet else []), "-c", constraints, str(src.root)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(constraints)
    if proc.returncode != 0:
        raise Tau2SourceError(
            f"pip could not install τ²-bench from {src.root} without changing the venv's pinned packages:\n"
            f"{(proc.stderr or proc.stdout)[-3000:]}\nfix: free the conflicting pin above or install into a "
            "separate venv")
    after = subprocess.run([python, "-m", "pip", "freeze", "--exclude-editable"], check=True,
                           capture_output=True, text=True).stdout
    added = sorted(set(after.splitlines()) - set(freeze.splitlines()))
    changed = sorted(set(freeze.splitlines()) - set(after.splitlines()))
    if changed:  # constraints make this impossible; say so loudly if pip ever disagrees
        raise Tau2SourceError(f"installing τ²-bench changed pinned packages {changed}")
    version = subprocess.check_output([python, "-c", "import importlib.metadata as m; print(m.version('tau2'))"],
                                      text=True).strip()
    record = {"tag": TAU2_TAG, "version": version, "source": src.given, "root": str(src.root),
              "data_dir": str(src.data_dir), "fingerprint": src.fingerprint, "added": added}
    stamp_path(prefix).write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["install"] and len(argv) <= 2:
        given = argv[1] if len(argv) == 2 else os.environ.get("PROVE_TAU2_SOURCE")
        before = read_stamp()
        try:
            record = install(given)
        except Tau2SourceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        done = "already installed" if record == before else f"installed (added {len(record['added'])} packages)"
        print(f"==> τ²-bench {record['tag']} ({record['version']}) {done}; TAU2_DATA_DIR={record['data_dir']}")
        return 0
    if argv == ["data-dir"]:
        data = installed_data_dir()
        if data is None:
            print(f"error: τ²-bench was not installed by prove.eval.tau2_install in {sys.prefix}", file=sys.stderr)
            return 1
        print(data)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())

