"""TensorBoard events from the metrics records, written while training runs.

The loop runs in C++ with the GIL released and writes each record to the metrics file as one
flushed JSON line (rank 0 only). A thread here follows that file and turns every new record into
scalars with tensorboardX's SummaryWriter, so Python stays off the per-iteration path and the
events say what the metrics file says. Tags: train/loss, train/lr, train/images_per_s,
train/learners_per_device, train/epoch, sma/distance_to_z/learner_J, test/loss, test/top1,
test/top5; the step is the iteration.
"""
import math
import os
import threading
import time

SCALARS = (("loss", "train/loss"), ("lr", "train/lr"), ("images_per_s", "train/images_per_s"),
           ("learners_per_device", "train/learners_per_device"), ("epoch", "train/epoch"),
           ("test_loss", "test/loss"), ("accuracy", "test/top1"), ("top5", "test/top5"))


def scalars(record):
    """[(tag, value)] of one metrics record; missing and non-finite values are left out."""
    out = [(tag, float(record[key])) for key, tag in SCALARS
           if isinstance(record.get(key), (int, float)) and math.isfinite(record[key])]
    for j, d in enumerate(record.get("distance_to_z") or ()):
        if isinstance(d, (int, float)) and math.isfinite(d):
            out.append((f"sma/distance_to_z/learner_{j}", float(d)))
    return out


def summary_writer(logdir, purge_step=None):
    try:
        from tensorboardX import SummaryWriter
    except ImportError as e:
        raise ImportError("tensorboard logging needs tensorboardX: pip install tensorboardX "
                          "tensorboard (scripts/setup.sh installs them)") from e
    # tensorboardX names event files by the second: a run resumed within the second that the
    # last one started in would overwrite its events without a suffix of its own.
    return SummaryWriter(os.fspath(logdir), flush_secs=5, purge_step=purge_step,
                         filename_suffix=f".{os.getpid()}.{time.time_ns()}")


def _inode(path):
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


class MetricsFollower:
    """Follows a metrics file from ``offset`` and writes its records to a SummaryWriter.
    ``start()`` polls every ``interval`` seconds until ``stop()``, which reads what is left,
    flushes and closes the writer.

    A follower of a resumed run (``offset`` > 0) opens its event file with TensorBoard's purge
    at the first step it writes, so that events an earlier run wrote for steps that are
    trained again (past the checkpoint it resumed from) are dropped. A file that is replaced or
    shortened is read again from its start, in a new event file that purges from its first
    step: a resumed run rewrites the metrics file without the records past its checkpoint
    (train/metrics.h)."""

    def __init__(self, metrics_path, logdir, offset=0, interval=0.5, settings=None):
        self.path, self.offset, self.interval = os.fspath(metrics_path), offset, interval
        self.logdir, self.settings = logdir, settings
        self.inode = _inode(self.path) if offset else None
        self.purge = offset > 0
        self.writer = None if self.purge else self._open_writer(None)
        self.records = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="crossbow-tensorboard",
                                        daemon=True)

    def _open_writer(self, purge_step):
        writer = summary_writer(self.logdir, purge_step)
        if self.settings:
            writer.add_text("run/settings", "\n".join(
                f"    {k}: {v}" for k, v in sorted(self.settings.items())), 0)
        return writer

    def _restart(self):
        """The file was replaced or shortened: its records are written again from the start."""
        self.offset = 0
        if self.writer is not None:
            self.writer.close()
        self.writer, self.purge = None, True

    def poll(self):
        """Writes the complete lines added since the last poll; returns how many."""
        import json
        try:
            with open(self.path, "rb") as f:
                stat = os.fstat(f.fileno())
                replaced = self.inode is not None and stat.st_ino != self.inode
                if replaced or stat.st_size < self.offset:
                    self._restart()
                self.inode = stat.st_ino
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return 0
        complete = chunk[:chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        written = 0
        for line in complete.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # not a record; the metrics file is the place to find out why
            step = int(record.get("iteration", 0))
            if self.writer is None:
                self.writer = self._open_writer(step)
            for tag, value in scalars(record):
                self.writer.add_scalar(tag, value, step)
            written += 1
        self.records += written
        return written

    def _run(self):
        while not self._stop.wait(self.interval):
            self.poll()
            if self.writer is not None:
                self.writer.flush()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.poll()
        if self.writer is not None:
            self.writer.close()
