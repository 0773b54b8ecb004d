"""The notebook-style example in docs/ runs as it stands."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_notebook_example_runs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "python_example.py")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused:" in done.stdout
