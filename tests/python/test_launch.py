"""crossbow launch, on this machine: mpirun's remote shell is launch_agent.sh, so that every
host name (node-a, node-b, ...) runs its own Open MPI daemon here, as on a server of its own. A
lost host is a rank killed (SIGKILL) or stopped (SIGSTOP) there; an unreachable one is refused
by the agent as ssh would; a checkpoint folder that is not shared is a mount namespace in which
one host sees an empty folder of its own. Each fault ends in one line naming the host or rank."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conftest import ROOT

from crossbow import _native

MPIRUN = shutil.which("mpirun")
MNIST = os.path.join(ROOT, "data", "samples", "mnist")
AGENT = os.path.join(ROOT, "tests", "python", "launch_agent.sh")
pytestmark = [
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not found (apt-get install openmpi-bin "
                       "libopenmpi-dev, then rebuild)"),
    pytest.mark.skipif(not getattr(_native.load(), "has_mpi", False) if _native.available()
                       else True, reason="crossbow._C missing or built without MPI"),
]


def _env(**extra):
    paths = [os.path.join(ROOT, "python")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p), **extra)
    for name in list(env):  # a test run under mpirun must not look like a rank itself
        if name.startswith(("OMPI_", "PMIX_", "PMI_")):
            del env[name]
    return env


def _launch(hosts, *flags, train=()):
    return [sys.executable, "-m", "crossbow", "launch", "--hosts", hosts, "--mpirun-args",
            f"--mca plm_rsh_agent {AGENT} --mca plm_rsh_no_tree_spawn 1", "--probe-timeout",
            "20", *flags, "--", *train]


def _run(command, timeout=60, **env):
    return subprocess.run(command, env=_env(**env), capture_output=True, text=True,
                          timeout=timeout, cwd="/")


@pytest.fixture(scope="module")
def mnist(tmp_path_factory):
    """The bundled MNIST sample (8000 + 2000 digits) as LMDBs."""
    folder = tmp_path_factory.mktemp("mnist")
    for split, prefix in (("train", "train"), ("test", "t10k")):
        r = _run([sys.executable, "-m", "crossbow", "convert", "mnist",
                  f"{MNIST}/{prefix}-images-idx3-ubyte.gz",
                  f"{MNIST}/{prefix}-labels-idx1-ubyte.gz", str(folder / split)])
        assert r.returncode == 0, r.stderr
    return {"train": str(folder / "train"), "test": str(folder / "test")}


def _train(mnist, ckpt, *flags, iterations=10**6):
    return ["--net", "lenet", "--train-db", mnist["train"], "--batch-size", "16", "--learners",
            "1", "--lr", "0.01", "--no-progress", "--checkpoint-dir", str(ckpt),
            "--iterations", str(iterations), *flags]


def _last_line(stderr):
    return [line for line in stderr.splitlines() if line.startswith("crossbow launch: ")][-1]


# Faults found before any rank starts.

def test_a_wrong_flag_is_refused_before_any_host_is_touched(tmp_path, mnist):
    train = _train(mnist, tmp_path / "c", "--lr-polcy", "step")
    r = _run(_launch("node-a,node-b", train=train), CROSSBOW_TEST_UNREACHABLE="node-a node-b")
    assert r.returncode == 1, r.stderr
    assert _last_line(r.stderr) == ("crossbow launch: crossbow train flags: unrecognized "
                                    "arguments: --lr-polcy step; did you mean '--lr-policy'?")
    assert "unreachable" not in r.stderr
    r = _run(_launch("node-a", train=_train(mnist, tmp_path / "c")[:-6]))  # no folder
    assert "the run needs --checkpoint-dir" in _last_line(r.stderr), r.stderr


@pytest.mark.parametrize("command, message", [
    ("echo 'no scheduler here' >&2; exit 3",
     "host discovery 'echo 'no scheduler here' >&2; exit 3' failed (exit 3): no scheduler here"),
    ("true", "host discovery 'true' printed no hosts"),
    ("echo node-a:x", "host discovery 'echo node-a:x': 'node-a:x' is not a host"),
])
def test_a_discovery_command_that_fails_or_prints_nothing_is_named(tmp_path, mnist, command,
                                                                   message):
    launch = _launch("x", train=_train(mnist, tmp_path / "c"))
    launch[launch.index("--hosts"):launch.index("--hosts") + 2] = ["--host-discovery", command]
    r = _run(launch)
    assert r.returncode == 1
    assert _last_line(r.stderr).startswith(f"crossbow launch: {message}"), r.stderr


def test_an_unreachable_host_is_named_and_left_out(tmp_path, mnist):
    r = _run(_launch("node-a,node-b,node-c", "--min-hosts", "3",
                     train=_train(mnist, tmp_path / "c")), CROSSBOW_TEST_UNREACHABLE="node-c")
    assert r.returncode == 1
    assert ("crossbow launch: host node-c left out: unreachable (mpirun could not start a "
            "process there (exit 255): ssh: connect to host node-c port 22: No route to host)"
            in r.stderr), r.stderr
    assert _last_line(r.stderr) == ("crossbow launch: 2 usable host(s) (node-a,node-b), fewer "
                                    "than --min-hosts 3: node-c unreachable")


def _can_unshare():
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0 \
        if shutil.which("unshare") else False


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare -m (root or user namespaces) to "
                    "give one host a folder of its own")
def test_a_checkpoint_folder_that_a_host_does_not_share_is_named(tmp_path, mnist):
    ckpt = tmp_path / "c"
    r = _run(_launch("node-a,node-b", train=_train(mnist, ckpt)),
             CROSSBOW_TEST_PRIVATE_HOST="node-b", CROSSBOW_TEST_PRIVATE_DIR=str(ckpt / "launch"))
    assert r.returncode == 1
    assert _last_line(r.stderr) == (
        f"crossbow launch: host node-b does not see the checkpoint folder '{ckpt}' as this "
        "machine does (the marker launch/marker is missing or older there): put the folder on "
        "a file system every host shares")
