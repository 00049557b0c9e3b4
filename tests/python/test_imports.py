"""`import crossbow` gives the Python package from every folder, the checkout root included,
where the C++ folder crossbow/ comes first on sys.path: it has no __init__.py, so it is at most
a namespace portion, which any regular package of the name (installed, or python/crossbow on
PYTHONPATH) outranks (PEP 420)."""
import os
import re
import subprocess
import sys

import pytest

from crossbow import _native

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "python", "crossbow")

IDENTITY = """
import sys, crossbow, crossbow.model, crossbow.nets
assert sys.modules["crossbow"] is crossbow
assert crossbow.model.Model is crossbow.Model
assert not crossbow.__file__.startswith({cpp!r}), crossbow.__file__
assert {cpp!r} not in list(crossbow.__path__), list(crossbow.__path__)
print(crossbow.__file__)
print(crossbow.nets.build("resnet20", 10).num_params())
"""


def _python(code, cwd, pythonpath=None, args=("-",)):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, *args], input=code, cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, f"python3 {' '.join(args)} in {cwd} failed:\n{done.stderr}"
    return done.stdout.split("\n")


@pytest.mark.parametrize("args", [("-",), ("-c", "import sys; exec(sys.stdin.read())")])
def test_import_in_the_checkout_root_gives_the_package(args):
    """Standard input and -c both put the current folder first on sys.path."""
    out = _python(IDENTITY.format(cpp=os.path.join(ROOT, "crossbow")), ROOT, args=args)
    assert out[1] == "269722"


def test_the_root_gives_the_package_on_the_path():
    """With python/ on PYTHONPATH, the root's crossbow/ still comes first on sys.path; the
    import must give python/crossbow, the package a script elsewhere would get."""
    out = _python(IDENTITY.format(cpp=os.path.join(ROOT, "crossbow")), ROOT,
                  pythonpath=os.path.join(ROOT, "python"))
    assert out[0] == os.path.join(PACKAGE, "__init__.py")


def test_python_m_crossbow_in_the_root():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "crossbow", "summary", "lenet"], cwd=ROOT,
                          env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Total params: 431,080" in done.stdout


def _readme_example():
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks, "README.md has no ```python block"
    return blocks[0]


@pytest.mark.skipif(not _native.available(), reason="needs the C++ extension (scripts/setup.sh)")
def test_readme_example_runs_in_the_checkout_root(tmp_path):
    """The README's Python example, fed to `python3 -` in the root as a new user would."""
    code = _readme_example()
    assert '"lenet.cbw"' in code and 'crossbow.nets.build("lenet"' in code
    code = code.replace('"lenet.cbw"', repr(str(tmp_path / "lenet.cbw")))
    out = "\n".join(_python(code + "print('done')\n", ROOT))
    assert "431,080" in out and "'top1'" in out and "done" in out
    assert (tmp_path / "lenet.cbw").stat().st_size > 431080 * 4
