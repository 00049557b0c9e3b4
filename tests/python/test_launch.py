"""crossbow launch, on this machine: mpirun's remote shell is launch_agent.sh, so that every
host name (node-a, node-b, ...) runs its own Open MPI daemon here, as on a server of its own. A
lost host is a rank killed (SIGKILL) or stopped (SIGSTOP) there; an unreachable one is refused
by the agent as ssh would; a checkpoint folder that is not shared is a mount namespace in which
one host sees an empty folder of its own. Each fault ends in one line naming the host or rank.
The helpers that watch a launch are scripts/demo/launch_faults.py's."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest
from launch_faults import Launch, environment, launch_command as _launch

from conftest import ROOT

from crossbow import _native

MPIRUN = shutil.which("mpirun")
MNIST = os.path.join(ROOT, "data", "samples", "mnist")
pytestmark = [
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not found (apt-get install openmpi-bin "
                       "libopenmpi-dev, then rebuild)"),
    pytest.mark.skipif(not getattr(_native.load(), "has_mpi", False) if _native.available()
                       else True, reason="crossbow._C missing or built without MPI"),
]


def _run(command, timeout=60, **env):
    return subprocess.run(command, env=environment(**env), capture_output=True, text=True,
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


def test_the_supervisor_needs_no_cpp_extension(tmp_path, mnist):
    """As where only mpirun runs: crossbow._C cannot be imported, and the launch still probes
    the hosts and names the one it cannot reach (the train flags are left to the ranks)."""
    blocked = ("import sys; sys.modules['crossbow._C'] = None\n"
               "from crossbow.cli import main\n"
               "code = main(sys.argv[1:])\n"
               "assert 'crossbow._C' not in sys.modules or sys.modules['crossbow._C'] is None\n"
               "sys.exit(code)\n")
    command = _launch("node-a,node-b", "--min-hosts", "2",
                      train=_train(mnist, tmp_path / "c", "--lr-polcy", "step"))
    r = _run([sys.executable, "-c", blocked] + command[3:], CROSSBOW_TEST_UNREACHABLE="node-b")
    assert r.returncode == 1, r.stderr
    assert _last_line(r.stderr) == ("crossbow launch: 1 usable host(s) (node-a), fewer than "
                                    "--min-hosts 2: node-b unreachable"), r.stderr

# Faults while the job trains.

def test_every_rank_dying_at_once_ends_the_launch_with_the_reason(tmp_path, mnist):
    ckpt = tmp_path / "c"
    launch = Launch(tmp_path, _launch("node-a,node-b", train=_train(mnist, ckpt)))
    for pid in launch.trainers_past(ckpt, 2, 3).values():
        os.kill(pid, signal.SIGKILL)
    code, output = launch.end()
    assert code == 1
    assert _last_line(output) == ("crossbow launch: every rank failed at once (rank 0 killed by "
                                  "SIGKILL, rank 1 killed by SIGKILL); not a lost host, not "
                                  "restarting")
    assert "crossbow launch: restart" not in output


@pytest.mark.parametrize("flags, message", [
    (["--max-restarts", "0"], "restarts exhausted (0 of --max-restarts 0); the last end: rank 1 "
     "on host node-b killed by SIGKILL"),
    (["--min-hosts", "2"], "1 usable host(s) (node-a), fewer than --min-hosts 2: node-b lost "
     "its rank: rank 1 on host node-b killed by SIGKILL"),
])
def test_a_lost_rank_past_the_limits_ends_the_launch(tmp_path, mnist, flags, message):
    ckpt = tmp_path / "c"
    launch = Launch(tmp_path, _launch("node-a,node-b", *flags, train=_train(mnist, ckpt)))
    os.kill(launch.trainers_past(ckpt, 2, 3)[1], signal.SIGKILL)
    code, output = launch.end()
    assert code == 1
    assert _last_line(output) == f"crossbow launch: {message}", output


def test_a_spare_host_past_max_hosts_takes_the_place_of_a_lost_one(tmp_path, mnist):
    ckpt = tmp_path / "c"
    launch = Launch(tmp_path, _launch("node-a,node-b,node-c", "--max-hosts", "2",
                                      "--max-restarts", "1", train=_train(mnist, ckpt)))
    launch.wait_for("starting 2 rank(s) on node-a,node-b\n")
    os.kill(launch.trainers_past(ckpt, 2, 3)[1], signal.SIGKILL)
    launch.wait_for("starting 2 rank(s) on node-a,node-c\n")
    os.kill(launch.trainers_past(ckpt, 2, 3)[0], signal.SIGKILL)
    code, output = launch.end()
    assert code == 1
    assert "; hosts node-a,node-b -> node-a,node-c;" in _restarts(output)[0], output
    assert _last_line(output) == ("crossbow launch: restarts exhausted (1 of --max-restarts 1); "
                                  "the last end: rank 0 on host node-a killed by SIGKILL")

def _restarts(output):
    return [line for line in output.splitlines() if line.startswith("crossbow launch: restart ")]


def test_a_run_goes_on_past_a_killed_then_a_stopped_rank_to_the_end(tmp_path, mnist):
    """Three ranks; node-b's is killed mid-epoch, and the run goes on with two; node-c's is then
    stopped, and it goes on with one to the last iteration. Each restart resumes from the last
    checkpoint, with as many learners as ranks, and is a line and a metrics record."""
    ckpt, metrics, iterations = tmp_path / "c", tmp_path / "m.jsonl", 300
    train = _train(mnist, ckpt, "--test-db", mnist["test"], "--checkpoint-every-epochs", "0.1",
                   "--metrics", str(metrics), "--log-every", "20", iterations=iterations)
    launch = Launch(tmp_path, _launch("node-a,node-b,node-c", "--heartbeat-timeout", "3",
                                      "--max-restarts", "2", train=train))
    os.kill(launch.trainers_past(ckpt, 3, 40)[1], signal.SIGKILL)  # 0.24 epochs in
    os.kill(launch.trainers_past(ckpt, 2, 70)[1], signal.SIGSTOP)
    code, output = launch.end()
    assert code == 0, output
    restarts = _restarts(output)
    assert len(restarts) == 2, output
    lost = r"(\d+) iteration\(s\) lost, resuming from iteration (\d+)$"
    first = re.search(r"restart 1 of at most 2 at \S+: rank 1 on host node-b killed by SIGKILL; "
                      r"hosts node-a,node-b,node-c -> node-a,node-c; " + lost, restarts[0])
    second = re.search(r"restart 2 of at most 2 at \S+: rank 1 on host node-c no heartbeat for "
                       r"\d+ s \(stopped, frozen or cut off\); hosts node-a,node-c -> node-a; "
                       + lost, restarts[1])
    assert first and second, restarts
    resumed = [int(n) for n in re.findall(r"resumed from '[^']*' at iteration (\d+)", output)]
    assert resumed == [int(first[2]), int(second[2])] and 0 < resumed[0] < resumed[1], output
    for engine in ("3 ranks x 1 device(s)", "2 ranks x 1 device(s)", "1 device(s) x 1"):
        assert f"engine: {engine}" in output  # the learners follow the hosts
    assert f"stopped (iterations) after {iterations} iterations" in output
    assert "crossbow launch: finished after 2 restart(s)" in output
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    events = [r for r in records if r.get("event") == "restart"]
    assert [(e["hosts_before"], e["hosts_after"], e["hosts_lost"], e["iteration"],
             e["iterations_lost"]) for e in events] == [
        (["node-a", "node-b", "node-c"], ["node-a", "node-c"], ["node-b"], resumed[0],
         int(first[1])),
        (["node-a", "node-c"], ["node-a"], ["node-c"], resumed[1], int(second[1]))]
    assert events[0]["ranks_lost"] == {"1": "killed by SIGKILL"}
    steps = [r["iteration"] for r in records]
    assert steps == sorted(steps) and steps[-1] == iterations  # one history, to the end


def test_a_lost_host_listed_again_joins_at_the_next_restart(tmp_path, mnist):
    ckpt, hosts = tmp_path / "c", tmp_path / "hosts"
    hosts.write_text("node-a\nnode-b\n")
    command = _launch("x", "--heartbeat-timeout", "3", train=_train(
        mnist, ckpt, "--checkpoint-every-epochs", "0.05"))
    command[command.index("--hosts"):command.index("--hosts") + 2] = [
        "--host-discovery", f"cat {hosts}"]
    launch = Launch(tmp_path, command)
    os.kill(launch.trainers_past(ckpt, 2, 10)[1], signal.SIGKILL)
    launch.wait_for("starting 1 rank(s) on node-a\n")
    hosts.write_text("node-a\n")
    launch.wait_for("lost host node-b is no longer listed")
    hosts.write_text("node-a\nnode-b\n")
    os.kill(launch.trainers_past(ckpt, 1, 30)[0], signal.SIGSTOP)
    launch.wait_for("starting 1 rank(s) on node-b\n")
    os.kill(launch.trainers_past(ckpt, 1, 0)[0], signal.SIGKILL)  # its only rank: the end
    code, output = launch.end()
    assert code == 1, output
    restarts = _restarts(output)
    assert len(restarts) == 2, output
    assert "rank 1 on host node-b killed by SIGKILL; hosts node-a,node-b -> node-a;" \
        in restarts[0]
    assert "rank 0 on host node-a no heartbeat for" in restarts[1]
    assert "; hosts node-a -> node-b;" in restarts[1]
    assert _last_line(output) == ("crossbow launch: every rank failed at once (rank 0 killed "
                                  "by SIGKILL); not a lost host, not restarting")  # one rank
