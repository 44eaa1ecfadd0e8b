"""`prove serve --max-memory`: a byte budget given on the command line, refused clearly when malformed.

    .venv/bin/python -m pytest tests/env/test_serve_flags.py -q
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request

from prove.env.launch import EnvServer


def test_a_malformed_budget_is_refused_before_serving() -> None:
    out = subprocess.run([sys.executable, "-m", "prove", "serve", "--max-memory", "2X", "--port", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "--max-memory must be a byte count like 2G" in out.stderr


def test_a_budget_on_the_command_line_serves() -> None:
    with EnvServer(extra_args=["--max-memory", "256M"]) as server:
        with urllib.request.urlopen(server.url + "/control/health", timeout=30) as resp:
            assert resp.status == 200
