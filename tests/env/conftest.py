"""Reports how many calls the tool fuzzer made (tests/env/test_fuzz.py)."""

from __future__ import annotations

import sys


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 (pytest hook)
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.env.test_fuzz")
    calls = getattr(fuzz, "CALLS", None)
    if calls and calls["valid"] + calls["invalid"]:
        terminalreporter.write_line(
            f"fuzz: {calls['valid'] + calls['invalid']} tool calls ({calls['valid']} schema-valid, "
            f"{calls['invalid']} schema-invalid); {calls['ok']} succeeded, {calls['error']} tool errors, "
            f"{calls['raised']} raised instead of answering (hypothesis replays a failing call while shrinking)"
        )
