"""`crossbow train` and `crossbow convert` as a user meets them when something is wrong: bad
flags, labels beyond the classes, truncated and garbage LMDBs, signals, many learners, and the
output in a terminal and in a log file. Each runs the real command in its own process."""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

from crossbow import _native

MNIST = os.path.join(ROOT, "data", "samples", "mnist")
needs_native = pytest.mark.skipif(not _native.available(),
                                  reason="needs crossbow._C (scripts/setup.sh)")
pytestmark = needs_native


def _env():
    paths = [os.path.join(ROOT, "python")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))


def crossbow(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "crossbow", *map(str, args)], env=_env(),
                          capture_output=True, text=True, timeout=timeout, cwd="/", **kw)


@pytest.fixture(scope="module")
def mnist(tmp_path_factory):
    """The bundled MNIST sample (8000 + 2000 digits) as LMDBs."""
    folder = tmp_path_factory.mktemp("mnist")
    dbs = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        db = str(folder / split)
        r = crossbow("convert", "mnist", f"{MNIST}/{prefix}-images-idx3-ubyte.gz",
                     f"{MNIST}/{prefix}-labels-idx1-ubyte.gz", db)
        assert r.returncode == 0, r.stderr
        assert "labels 0..9" in r.stdout + r.stderr, "convert reports the label range it wrote"
        dbs[split] = db
    return dbs


def train(mnist, *flags, timeout=120):
    return crossbow("train", "--net", "lenet", "--train-db", mnist["train"], "--lr", "0.01",
                    *flags, timeout=timeout)


@pytest.mark.parametrize("flags, words", [
    (["--lr", "nan"], ["--lr", "nan"]),
    (["--lr", "-0.1"], ["--lr", "-0.1"]),
    (["--momentum", "1"], ["--momentum", "1.0"]),
    (["--learners", "0"], ["--learners", "0"]),
    (["--batch-size", "0"], ["--batch-size", "0"]),
    (["--weight-decay", "inf"], ["--weight-decay", "inf"]),
    (["--devices", f"cpu:{os.cpu_count() + 3}"], ["--devices", f"core {os.cpu_count() + 3}",
                                                   f"({len(os.sched_getaffinity(0))} cores)"]),
])
def test_bad_flags_are_refused_naming_the_flag_and_value(mnist, flags, words):
    r = train(mnist, "--iterations", "2", *flags)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


def test_labels_beyond_the_classes_are_refused_before_training(mnist):
    r = train(mnist, "--num-classes", "3", "--iterations", "2")
    assert r.returncode == 1
    assert re.search(r"record \d+ has label [3-9], outside \[0, 3\)", r.stderr), r.stderr
    assert "--num-classes" in r.stderr and "iteration" not in r.stderr


def test_a_truncated_lmdb_is_an_error_not_sigbus(mnist, tmp_path):
    db = tmp_path / "cut"
    db.mkdir()
    data = open(os.path.join(mnist["train"], "data.mdb"), "rb").read()
    (db / "data.mdb").write_bytes(data[:len(data) // 3])
    r = crossbow("train", "--net", "lenet", "--train-db", db, "--iterations", "2")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert f"LMDB {db} is truncated" in r.stderr and f"has {len(data) // 3} bytes" in r.stderr


def test_garbage_records_are_counted_and_skipped(mnist, tmp_path):
    import lmdb
    db = str(tmp_path / "garbage")
    good = lmdb.open(mnist["test"], readonly=True, lock=False)
    bad = lmdb.open(db, map_size=1 << 26)
    with good.begin() as r, bad.begin(write=True) as w:
        for i, (key, value) in enumerate(r.cursor()):
            w.put(key, os.urandom(len(value)) if i % 10 == 3 else value)
    r = crossbow("train", "--net", "lenet", "--train-db", db, "--epochs", "1", "--lr", "0.01",
                 "--learners", "2")
    assert r.returncode == 0, r.stderr
    assert re.search(r"epoch 0 read, 200 corrupt record\(s\) skipped", r.stderr), r.stderr


@pytest.mark.parametrize("learners", [1, 7, 16, 64])
def test_any_learner_count_trains_on_the_real_loader(mnist, learners):
    r = train(mnist, "--learners", learners, "--iterations", "3", "--workers", "2", timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"with {learners} learner(s) per device" in r.stdout


def _sigterm_once_logged(mnist, ckpt, marker, *flags):
    """Trains LeNet on MNIST until stderr shows `marker`, sends SIGTERM, and checks that the run
    stops within 5 s with exit 143, saying why; returns the rest of its stderr."""
    args = [sys.executable, "-m", "crossbow", "train", "--net", "lenet", "--train-db",
            mnist["train"], "--epochs", "100", "--lr", "0.01", "--checkpoint-dir", str(ckpt),
            *flags]
    proc = subprocess.Popen(args, env=_env(), stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    line = ""
    while marker not in line and time.time() < deadline:
        line = proc.stderr.readline()
    proc.send_signal(signal.SIGTERM)
    started = time.time()
    rest = proc.communicate(timeout=30)[1]
    assert proc.returncode == 128 + signal.SIGTERM, rest
    assert time.time() - started < 5
    assert "signal (SIGTERM)" in rest, rest
    return rest


def test_sigterm_checkpoints_exits_143_and_resumes(mnist, tmp_path):
    ckpt = tmp_path / "ckpt"
    _sigterm_once_logged(mnist, ckpt, "epoch 1/100:", "--learners", "2",
                         "--checkpoint-every-epochs", "0")
    r = crossbow("train", "--net", "lenet", "--train-db", mnist["train"], "--learners", "2",
                 "--epochs", "2", "--lr", "0.01", "--checkpoint-dir", ckpt, "--resume")
    assert r.returncode == 0, r.stderr
    assert "resumed from" in r.stderr and "stopped (epochs)" in r.stdout


def test_sigterm_during_the_autotuners_trials_stops_at_once_with_a_checkpoint(mnist, tmp_path):
    """The trials train the model; a signal ends them as it ends training, at the choice so
    far, rather than after the search."""
    ckpt = tmp_path / "ckpt"
    rest = _sigterm_once_logged(mnist, ckpt, "autotuner: 1 learner(s) per device",
                                "--learners", "auto")
    assert "stop: training stops" in rest, rest
    assert (ckpt / "checkpoint.cbt").exists()


def test_in_a_log_file_there_are_no_carriage_returns_and_no_glog_preamble(mnist, tmp_path):
    r = train(mnist, "--test-db", mnist["test"], "--epochs", "2", "--learners", "2")
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr
    assert "Logging before InitGoogleLogging" not in r.stderr
    assert re.search(r"^I\d+ .* epoch 2/2: loss ", r.stderr, re.M), r.stderr


def _in_a_terminal(args, timeout=120):
    """What a command writes to stderr when stderr is a terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.DEVNULL, stderr=slave, cwd="/")
    os.close(slave)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if select.select([master], [], [], 0.5)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=10)
    os.close(master)
    return proc.returncode, out.decode()


def test_in_a_terminal_one_bar_per_epoch_that_log_lines_do_not_break(mnist):
    rc, out = _in_a_terminal([sys.executable, "-m", "crossbow", "train", "--net", "lenet",
                              "--train-db", mnist["train"], "--test-db", mnist["test"],
                              "--epochs", "2", "--learners", "2", "--lr", "0.01",
                              "--log-every", "10"])
    assert rc == 0, out
    lines = out.replace("\r\n", "\n").split("\n")
    bars = [line.split("\r")[-1] for line in lines if "[#" in line or "[." in line]
    assert len(bars) == 2, lines  # the last state of each epoch's bar stays
    draws = re.findall(r"epoch \d/2 \[[#.]+\] +[\d.]+% +(\d+) img/s ETA \S+ loss (\S+)", out)
    assert len(draws) > 5, out
    reset = [(rate, loss) for rate, loss in draws if int(rate) == 0 or float(loss) == 0]
    assert not reset, reset
    for line in lines:  # every log line starts on a line of its own (after the bar is cleared)
        for part in line.split("\r\x1b[K")[1:] + [line.split("\r")[0]]:
            assert not re.search(r".I\d{8} ", part), line


def test_quiet_prints_the_result_only(mnist):
    r = train(mnist, "--iterations", "3", "--quiet")
    assert r.returncode == 0
    assert r.stderr == "" and "stopped (iterations)" in r.stdout
