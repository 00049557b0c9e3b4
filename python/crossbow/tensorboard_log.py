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


def summary_writer(logdir):
    try:
        from tensorboardX import SummaryWriter
    except ImportError as e:
        raise ImportError("tensorboard logging needs tensorboardX: pip install tensorboardX "
                          "tensorboard (scripts/setup.sh installs them)") from e
    # tensorboardX names event files by the second: a run resumed within the second that the
    # last one started in would overwrite its events without a suffix of its own.
    return SummaryWriter(os.fspath(logdir), flush_secs=5,
                         filename_suffix=f".{os.getpid()}.{time.time_ns()}")


class MetricsFollower:
    """Follows a metrics file from ``offset`` and writes its records to a SummaryWriter.
    ``start()`` polls every ``interval`` seconds until ``stop()``, which reads what is left,
    flushes and closes the writer."""

    def __init__(self, metrics_path, logdir, offset=0, interval=0.5, settings=None):
        self.path, self.offset, self.interval = os.fspath(metrics_path), offset, interval
        self.writer = summary_writer(logdir)
        if settings:
            self.writer.add_text("run/settings", "\n".join(
                f"    {k}: {v}" for k, v in sorted(settings.items())), 0)
        self.records = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="crossbow-tensorboard",
                                        daemon=True)

    def poll(self):
        """Writes the complete lines added since the last poll; returns how many."""
        import json
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() < self.offset:  # truncated: a new run from the start
                    self.offset = 0
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
            for tag, value in scalars(record):
                self.writer.add_scalar(tag, value, int(record.get("iteration", 0)))
            written += 1
        self.records += written
        return written

    def _run(self):
        while not self._stop.wait(self.interval):
            self.poll()
            self.writer.flush()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.poll()
        self.writer.close()
