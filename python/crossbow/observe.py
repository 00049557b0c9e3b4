"""What runs beside the C++ training loop while ``Trainer.fit`` trains, on rank 0 only (as the
metrics file): the run's settings written beside the metrics file, and the TensorBoard writer
that follows the metrics file (``tensorboard=DIR``; the metrics go to DIR/metrics.jsonl unless
``metrics`` names a file)."""
import contextlib
import os

from crossbow import run_settings, world
from crossbow.weights import CHECKPOINT_FILE


def _resumes(options):
    """Whether the C++ loop will resume, and so append to the metrics file (train/trainer.cc:
    resume set and a checkpoint in checkpoint_dir)."""
    folder = options.get("checkpoint_dir")
    return bool(options.get("resume") and folder and
                os.path.isfile(os.path.join(folder, CHECKPOINT_FILE)))


def _follow(options, settings):
    from crossbow.tensorboard_log import MetricsFollower
    logdir, metrics = options["tensorboard"], options["metrics"]
    os.makedirs(logdir, exist_ok=True)
    offset = 0
    if _resumes(options) and os.path.isfile(metrics):
        offset = os.path.getsize(metrics)  # the earlier records are in the earlier events
    elif os.path.isfile(metrics):
        os.remove(metrics)  # the loop starts it anew; no old record may reach the events
    return MetricsFollower(metrics, logdir, offset, settings=settings).start()


@contextlib.contextmanager
def training(options, net_name):
    """Around one fit(); ``options`` are the Trainer's (a metrics path is added where
    tensorboard is set without one, before the C++ trainer reads them)."""
    if options.get("tensorboard") and not options.get("metrics"):
        options["metrics"] = os.path.join(os.fspath(options["tensorboard"]), "metrics.jsonl")
    if world.rank() != 0 or not options.get("metrics"):
        yield
        return
    settings = run_settings.of_trainer(options, net_name, world.size())
    parent = os.path.dirname(os.fspath(options["metrics"]))
    if parent:
        os.makedirs(parent, exist_ok=True)
    run_settings.write(options["metrics"], settings)
    follower = _follow(options, settings) if options.get("tensorboard") else None
    try:
        yield
    finally:
        if follower is not None:
            follower.stop()
