"""fastai itself, in the peer's venv, through scripts/peer/fastai_reference.py: the tests that
hold Crossbow's optimisers, schedules and evaluation crops to fastai's call `reference` and skip,
saying why, where the venv or its fastai is missing (CI's machine has neither)."""
import functools
import json
import os
import subprocess

import pytest

from conftest import script

import peer


@functools.lru_cache(maxsize=None)
def missing():
    """Why fastai cannot run here, or "" where it can."""
    python = peer.default_python()
    if not os.access(python, os.X_OK):
        return f"no peer venv at {python} (scripts/peer/setup_peer.sh)"
    found = subprocess.run([python, "-c", "import fastai"], capture_output=True, text=True)
    return "" if found.returncode == 0 else f"the peer venv's python {python} has no fastai"


def reference(command, cfg, tmp_path):
    """fastai_reference.py COMMAND on `cfg`: its JSON result; skips where fastai is missing."""
    why = missing()
    if why:
        pytest.skip(f"{why}: compared with the numpy references of fastai's equations only")
    source, target = tmp_path / f"{command}_in.json", tmp_path / f"{command}_out.json"
    source.write_text(json.dumps(cfg))
    r = subprocess.run([peer.default_python(), script("fastai_reference.py"), command,
                        str(source), str(target)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(target.read_text())
