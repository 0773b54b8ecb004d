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


def _engine_examples():
    """The Python blocks of docs/PYTHON.md's engine section, with the module each needs."""
    import re

    text = (ROOT / "docs" / "PYTHON.md").read_text()
    section = text[text.index("## Fleets as one table") :]
    blocks = []
    for part in section.split("\n### ")[1:]:
        title = part.split("\n", 1)[0]
        blocks.append((title, re.search(r"```python\n(.*?)```", part, re.S).group(1)))
    needs = {"polars": "polars", "Dask": "distributed", "Spark 4": "pyspark", "Ray Data": "ray", "DuckDB": "duckdb"}
    return [(title, code, needs[title]) for title, code in blocks]


EXAMPLES = _engine_examples()


def test_every_engine_has_an_example():
    assert [title for title, _, _ in EXAMPLES] == ["polars", "Dask", "Spark 4", "Ray Data", "DuckDB"]


@pytest.mark.parametrize("title,code,module", EXAMPLES, ids=[t for t, _, _ in EXAMPLES])
def test_engine_examples_run_as_scripts(tmp_path, title, code, module):
    """Each example runs as it stands, as a script (so the Dask one needs its main guard),
    from the repository root on the samples."""
    import importlib.util
    import shutil

    from conftest import SAMPLES, samples

    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    if module == "pyspark" and shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    if not samples("fgtape", "fgtape") or SAMPLES.resolve() != (ROOT.parent / "shared" / "samples").resolve():
        pytest.skip("the examples read ../shared/samples")
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fg2020.3.16-c172p-normal-nomp" in done.stdout or title == "DuckDB", done.stdout


def test_the_wheel_is_built_small():
    """`pip install ./python` builds with the workspace's `wheel` profile: optimised, no debug
    info, stripped, and panics unwind (Ctrl-C stops a conversion by unwinding its threads)."""
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())
    assert pyproject["tool"]["maturin"]["profile"] == "wheel"
    profile = tomllib.loads((ROOT / "Cargo.toml").read_text())["profile"]["wheel"]
    assert profile["inherits"] == "release"
    assert profile["debug"] is False and profile["strip"] is True
    assert profile.get("panic", "unwind") == "unwind"
    extras = pyproject["project"]["optional-dependencies"]
    assert {"pandas", "polars", "dask", "spark", "ray", "test"} <= set(extras)
    assert "h5py" in extras["test"]
