"""pyproject.toml through its build backend (scikit-build-core), without the C++ build that
`pip install .` runs (CI builds the C++ once, in scripts/setup.sh): the metadata, and the
wheel's Python layout: python/crossbow as crossbow, nets/ as crossbow.nets, nothing else."""
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

pytest.importorskip("scikit_build_core", reason="the build backend (setup.sh installs it)")

_HOOK = """
import sys
from scikit_build_core import build
if sys.argv[1] == "metadata":
    print(build.prepare_metadata_for_build_wheel(sys.argv[2]))
else:
    print(build.build_wheel(sys.argv[2], config_settings={"wheel.cmake": "false"}))
"""


def _backend(hook, out):
    done = subprocess.run([sys.executable, "-c", _HOOK, hook, str(out)], cwd=ROOT, text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return os.path.join(out, done.stdout.strip().splitlines()[-1])


def test_wheel_metadata_names_the_package_its_command_and_extras(tmp_path):
    info = _backend("metadata", tmp_path)
    with open(os.path.join(info, "METADATA")) as f:
        metadata = f.read()
    assert "Name: crossbow" in metadata and "Requires-Dist: numpy" in metadata
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    for extra in ("plot", "tensorboard", "onnx"):
        assert f"Provides-Extra: {extra}" in metadata
    with open(os.path.join(info, "entry_points.txt")) as f:
        assert "crossbow = crossbow.cli:main" in f.read()


def test_the_wheel_holds_the_package_and_the_zoo_and_no_stale_module(tmp_path):
    with zipfile.ZipFile(_backend("wheel", tmp_path)) as wheel:
        names = wheel.namelist()
    files = {n for n in names if not n.startswith("crossbow-0")}  # less the .dist-info
    ours = {os.path.join("crossbow", f) for f in os.listdir(os.path.join(ROOT, "python",
                                                                         "crossbow"))
            if f.endswith(".py")}
    zoo = {os.path.join("crossbow", "nets", f) for f in os.listdir(os.path.join(ROOT, "nets"))
           if f.endswith(".py")}
    assert ours | zoo == files - {n for n in files if n.endswith(".so")}
    # A development build's module (python/crossbow/_C*.so, git-ignored) must not get in: the
    # wheel's own comes from CMake's install, with the libraries it links beside it.
    assert not [n for n in files if n.endswith(".so")]
