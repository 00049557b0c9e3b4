"""Crossbow across MPI ranks, with mpirun on this machine: SMA and S-SGD across ranks equal the
in-process run with as many devices bit for bit, through `crossbow train` on an LMDB too;
checkpoints resume with another number of ranks; a bad start names the rank; a dead or hung
rank ends the job in bounded time."""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

from conftest import ROOT

MPIRUN = shutil.which("mpirun")
JOB = os.path.join(ROOT, "tests", "python", "mpi_job.py")


def _native_with_mpi():
    try:
        from crossbow import _native
        return getattr(_native.load(), "has_mpi", False)
    except ImportError:
        return False


pytestmark = [
    pytest.mark.skipif(MPIRUN is None, reason="mpirun not found (apt-get install openmpi-bin "
                       "libopenmpi-dev, then rebuild)"),
    pytest.mark.skipif(not _native_with_mpi(), reason="crossbow._C was built without MPI "
                       "(scripts/setup.sh builds it with MPI where libopenmpi-dev is installed)"),
]


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), **extra)
    for name in list(env):  # a test run under mpirun must not look like a rank itself
        if name.startswith(("OMPI_", "PMIX_", "PMI_")):
            del env[name]
    return env


def _mpirun(ranks):
    return [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]


def _run(command, timeout=120):
    return subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=timeout)


def _job(ranks, **options):
    """The job on `ranks` MPI ranks (0: one process without mpirun); its rank 0 result."""
    command = [sys.executable, JOB, json.dumps(options)]
    p = _run(_mpirun(ranks) + command if ranks else command)
    assert p.returncode == 0, p.stdout + p.stderr
    results = [json.loads(line[7:]) for line in p.stdout.splitlines() if line.startswith("RESULT")]
    assert len(results) == 1, p.stdout  # rank 0's
    return results[0]


def _tensors(path):
    """name -> raw bytes of a checkpoint (serialize.cc's format), minus the run's counters."""
    b = open(path, "rb").read()
    pos, out = 12, {}
    for _ in range(struct.unpack_from("<I", b, 8)[0]):
        (n,) = struct.unpack_from("<I", b, pos)
        name = b[pos + 4:pos + 4 + n].decode()
        pos += 4 + n + 1
        (ndim,) = struct.unpack_from("<I", b, pos)
        pos += 4 + 8 * ndim
        (nbytes,) = struct.unpack_from("<Q", b, pos)
        out[name] = b[pos + 8:pos + 8 + nbytes]
        pos += 8 + nbytes
    del out["checkpoint/info"]  # holds the elapsed time
    return out


def _assert_same_checkpoints(a, b):
    ta, tb = _tensors(os.path.join(a, "checkpoint.cbt")), _tensors(os.path.join(b, "checkpoint.cbt"))
    assert sorted(ta) == sorted(tb)
    assert [k for k in ta if ta[k] != tb[k]] == []
    assert any(k.startswith("z/") for k in ta)


def _devices(n):
    return ",".join(f"cpu:{i}" for i in range(n))


# In-process devices each need a core of their own: two on a two-core machine.
@pytest.mark.parametrize("ranks, sync, learners", [(2, "sma", 1), (2, "ssgd", 2)])
def test_ranks_equal_in_process_devices_bit_for_bit(tmp_path, ranks, sync, learners):
    options = dict(sync=sync, learners=learners)
    spread = _job(ranks, devices="cpu", checkpoint_dir=str(tmp_path / "ranks"), **options)
    local = _job(0, devices=_devices(ranks), checkpoint_dir=str(tmp_path / "one"), **options)
    assert spread["ranks"] == ranks and local["ranks"] == 1
    assert spread["epochs"] == local["epochs"] == 6 * ranks * learners * 4 / 96
    _assert_same_checkpoints(tmp_path / "ranks", tmp_path / "one")


def test_resume_with_another_number_of_ranks(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    _job(2, devices="cpu", iterations=4, checkpoint_dir=ckpt)
    resumed = _job(3, devices="cpu", iterations=6, checkpoint_dir=ckpt, resume=True)
    assert resumed["resumed"] and resumed["iterations"] == 6 and resumed["ranks"] == 3


@pytest.fixture
def lmdb_path(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    from test_data import datum, write_db
    rng = np.random.default_rng(1)
    return write_db(tmp_path / "db", [datum(rng.integers(0, 255, (1, 28, 28)), i % 10)
                                      for i in range(80)])


def _train(db, checkpoint_dir, *flags):
    return [sys.executable, "-m", "crossbow", "train", "--net", "lenet", "--train-db", db,
            "--batch-size", "4", "--learners", "2", "--iterations", "5", "--lr", "0.05",
            "--workers", "1", "--no-progress", "--checkpoint-dir", checkpoint_dir, *flags]


def test_crossbow_train_under_mpirun_equals_in_process_devices(tmp_path, lmdb_path):
    metrics = tmp_path / "m.jsonl"
    p = _run(_mpirun(2) + _train(lmdb_path, str(tmp_path / "a"), "--devices", "cpu",
                                 "--metrics", str(metrics), "--log-every", "1"))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("stopped (iterations) after 5 iterations") == 1  # rank 0 reports
    assert len(metrics.read_text().splitlines()) == 5  # one writer
    p = _run(_train(lmdb_path, str(tmp_path / "b"), "--devices", "cpu:0,cpu:1"))
    assert p.returncode == 0, p.stdout + p.stderr
    _assert_same_checkpoints(tmp_path / "a", tmp_path / "b")


def _mpmd(first, second):
    return [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "1", *first, ":", "-np", "1",
            *second]


def test_mismatched_flags_name_the_rank_before_training(tmp_path, lmdb_path):
    ckpt = str(tmp_path / "c")
    p = _run(_mpmd(_train(lmdb_path, ckpt), _train(lmdb_path, ckpt, "--lr", "0.2")))
    assert p.returncode != 0
    assert "rank 1 differs from rank 0 in lr: 0.2, rank 0 has 0.05" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(ckpt, "checkpoint.cbt"))


def test_a_rank_that_cannot_read_its_data_is_named(tmp_path, lmdb_path):
    ckpt = str(tmp_path / "c")
    missing = str(tmp_path / "elsewhere" / "db")
    p = _run(_mpmd(_train(lmdb_path, ckpt), _train(missing, ckpt)))
    assert p.returncode != 0
    assert f"rank 1 of 2 cannot start: FileNotFoundError: train_db '{missing}' does not exist" \
        in p.stderr, p.stderr


def _rank_pid(token, rank, deadline):
    while time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            if f"CROSSBOW_TEST_JOB={token}".encode() in env and \
                    f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
                return int(pid)
        time.sleep(0.1)
    raise AssertionError(f"rank {rank} of job {token} not found")


@pytest.mark.parametrize("how", ["kill", "hang"])
def test_a_dead_or_hung_rank_ends_the_job_with_a_message(tmp_path, how):
    token = uuid.uuid4().hex
    metrics = tmp_path / "m.jsonl"
    options = dict(iterations=10**6, log_every=1, metrics=str(metrics), collective_timeout=2)
    proc = subprocess.Popen(_mpirun(2) + [sys.executable, JOB, json.dumps(options)],
                            env=_env(CROSSBOW_TEST_JOB=token), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    pid = None
    try:
        deadline = time.time() + 60
        pid = _rank_pid(token, 1, deadline)
        while not (metrics.exists() and metrics.read_text().count("\n") >= 3):
            assert time.time() < deadline and proc.poll() is None, "training did not start"
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        stopped = time.time()
        output, _ = proc.communicate(timeout=30)
        assert time.time() - stopped < 30
    finally:
        if proc.poll() is None:
            proc.kill()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode != 0
    if how == "kill":
        assert "exited on signal 9" in output, output
    else:
        assert re.search(r"on rank 0 of 2 timed out after (19\d\d|2000) ms: another rank died, "
                         r"hangs or stopped training", output), output


def test_ranks_compare_their_data_by_its_metadata(tmp_path):
    """Each rank reads its DB's metadata, not its records, and the ranks compare it: DBs of one
    size whose labels differ are refused before training."""
    sys.path.insert(0, os.path.dirname(__file__))
    from test_data import datum, write_db
    from crossbow import convert
    rng = np.random.default_rng(1)
    dbs = []
    for name, classes in (("a", 10), ("b", 9)):
        dbs.append(write_db(tmp_path / name, [datum(rng.integers(0, 255, (1, 28, 28)),
                                                    i % classes) for i in range(80)]))
        convert.check(dbs[-1], write_metadata=True, progress=False)
    ckpt = str(tmp_path / "c")
    p = _run(_mpmd(_train(dbs[0], ckpt), _train(dbs[1], ckpt)))
    assert p.returncode != 0, p.stdout + p.stderr
    assert "rank 1 differs from rank 0 in training data: 80 records, labels 0..8" in p.stderr, \
        p.stderr


def test_each_rank_reads_a_few_records_before_training_whatever_the_db_size(tmp_path):
    """Start-up reads the metadata, not the records: each of 2 ranks reads the probe and the
    batches its ring holds (4 slots of 4 records, filled before sharding and again after) and
    the next one, 37 records, not the 3,000 of the DB."""
    sys.path.insert(0, os.path.dirname(__file__))
    from test_data import datum, write_db
    from crossbow import convert
    rng = np.random.default_rng(2)
    db = write_db(tmp_path / "db", [datum(rng.integers(0, 255, (1, 28, 28)), i % 10)
                                    for i in range(3000)])
    convert.check(db, write_metadata=True, progress=False)
    job = os.path.join(os.path.dirname(__file__), "mpi_data_job.py")
    counts = tmp_path / "counts"
    counts.mkdir()
    p = _run(_mpirun(2) + [sys.executable, job, db, str(counts)])
    assert p.returncode == 0, p.stdout + p.stderr
    read = {f.name: int(f.read_text()) for f in counts.iterdir()}
    assert sorted(read) == ["rank0", "rank1"], p.stdout + p.stderr
    assert all(count <= 1 + (2 * 4 + 1) * 4 for count in read.values()), read
