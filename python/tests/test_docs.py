"""The notebook-style example in docs/ runs as it stands, on the installed package."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import recfmt
from conftest import ROOT


def test_notebook_example_runs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "python_example.py")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused:" in done.stdout


@pytest.mark.skipif(
    os.environ.get("RECFMT_EXPECT_WHEEL") != "1",
    reason="only where the package was installed from a wheel (cargo xtask ci)",
)
def test_the_package_under_test_is_the_installed_wheel():
    """CI tests what a user gets from `pip install`: the package in site-packages, with its
    native module, type stubs and py.typed, not the source folder."""
    import importlib.metadata
    from pathlib import Path

    package = Path(recfmt.__file__).parent
    assert "site-packages" in package.parts, package
    names = {p.name for p in package.iterdir()}
    assert {"_recfmt.pyi", "py.typed", "dask.py"} <= names, names
    assert any(n.startswith("_recfmt") and n.endswith(".so") for n in names), names
    assert importlib.metadata.version("recfmt") == recfmt.__version__
