"""A synchroniser added in one file (tests/example_sync/halfpull.cc, built apart as a plugin)
runs in the engine and passes the option table's check with nothing else changed: loaded into
a fresh process, `--sync halfpull` with alpha 0.2 trains bit for bit as EASGD with alpha 0.1,
and apart from EASGD with the same alpha."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = os.path.join(ROOT, "build", "libcrossbow_example_sync.so")

# In its own process: the plugin's registration would otherwise change the list of
# synchronisers that other tests of this process see.
SCRIPT = r"""
import ctypes, json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from crossbow import _native
_C = _native.load()
ctypes.CDLL({plugin!r}, mode=ctypes.RTLD_GLOBAL)
import test_model_averaging_reference as t

def z_after(sync, alpha, iterations=4):
    images, labels = t.data()
    e = t.engine(images, labels, sync=sync, alpha=alpha, sync_period=1)
    for _ in range(iterations):
        e.iterate()
    return {{k: np.asarray(v) for k, v in e.state().items() if k.startswith("z/")}}

def gap(a, b):
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in a)

half = z_after("halfpull", 0.2)
print(json.dumps({{"same": gap(half, z_after("easgd", 0.1)),
                  "apart": gap(half, z_after("easgd", 0.2)),
                  "checked": _C.EngineOptions(sync="halfpull") is not None}}))
"""


@pytest.mark.skipif(not os.path.exists(PLUGIN),
                    reason=f"{PLUGIN} is not built (scripts/setup.sh builds it with the tests)")
def test_a_synchroniser_in_one_file_trains_as_its_definition_says():
    code = SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)), plugin=PLUGIN)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["checked"]  # the option table took the name from the registry
    assert out["same"] == 0.0, out
    assert out["apart"] > 1e-6, out


def test_without_the_plugin_the_name_is_refused():
    from crossbow import _native
    if not _native.available():
        pytest.skip("crossbow._C is not built (scripts/setup.sh)")
    with pytest.raises(ValueError, match=r"sync \(--sync\) must be .*got 'halfpull'"):
        _native.load().EngineOptions(sync="halfpull")
