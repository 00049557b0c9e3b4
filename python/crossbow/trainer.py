"""``crossbow.Trainer``: the whole training loop in C++ (GIL released), configured from Python.

    crossbow.Trainer(net="resnet32", train_db="cifar10_train_lmdb", test_db="cifar10_test_lmdb",
                     batch_size=16, learners="auto", sync="sma", epochs=10, lr=0.1,
                     lr_policy="multistep", steps=[5, 8]).fit()

Every option here is also a ``crossbow train`` flag (``--lr-policy`` for ``lr_policy``): both
come from OPTIONS. Options are checked before anything is built or read.
"""
import json
import math
import os

from crossbow import _native, world
from crossbow.names import did_you_mean

# The synchronisers (crossbow/engine/sync/), checked here before the extension is loaded.
SYNCS = ("sma", "easgd", "localsgd", "diloco", "ssgd", "sgd")

# name: (default, type, help). The command line adds --name-with-dashes for each.
OPTIONS = {
    "batch_size": (16, int, "images per learner per iteration"),
    "learners": ("auto", str, "learners per device: a number, or auto (the autotuner picks)"),
    "sync": ("sma", str, "sma (model averaging), easgd (elastic averaging), localsgd (periodic "
             "averaging), diloco (outer Nesterov step on z), ssgd (synchronous SGD) or sgd (one "
             "learner)"),
    "sync_period": (1, int, "sma, easgd, localsgd, diloco: synchronise every this many "
                    "iterations (H)"),
    "devices": ("cpu", str, "cpu (all cores, one device), groups such as cpu:0-1,cpu:2-3, or "
                "GPUs such as cuda:0,cuda:1 (cuda:0,cuda:0: two devices on one GPU; cuda:local "
                "under mpirun: the GPU numbered as the rank on its machine)"),
    "epochs": (None, int, "stop after this many epochs"),
    "iterations": (None, int, "stop after this many iterations"),
    "time_limit": (None, float, "stop after this many seconds of training"),
    "target_accuracy": (None, float, "stop when the test top-1 accuracy reaches this (0-1)"),
    "lr": (0.1, float, "base learning rate"),
    "lr_policy": ("fixed", str, "fixed, step, multistep, exp, inv or poly (as Caffe)"),
    "gamma": (0.1, float, "factor of step/multistep/exp/inv"),
    "power": (1.0, float, "exponent of inv/poly"),
    "step_size": (0.0, float, "step: epochs between drops"),
    "steps": ((), float, "multistep: the epochs at which the rate drops (e.g. 80 120)"),
    "warmup": (0.0, float, "epochs of linear warm-up (composes with any policy)"),
    "warmup_start": (0.1, float, "warm-up's first factor of the rate"),
    "momentum": (0.9, float, "learner momentum"),
    "weight_decay": (1e-4, float, "L2 weight decay"),
    "alpha": (0.1, float, "SMA: pull of the learners towards the average model"),
    "central_momentum": (0.9, float, "SMA: momentum of the average model"),
    "central_momentum_type": ("polyak", str, "SMA: polyak or nesterov central momentum"),
    "outer_lr": (0.7, float, "DiLoCo: learning rate of the outer step on z"),
    "outer_momentum": (0.9, float, "DiLoCo: Nesterov momentum of the outer step"),
    "autotune_threshold": (0.1, float, "the autotuner adds learners while throughput grows more"),
    "threads_per_learner": (1, int, "threads each learner's operators run on"),
    "eval_every": (0, int, "iterations between evaluations (0: every epoch)"),
    "checkpoint_dir": (None, str, "where checkpoints go (none: no checkpoints)"),
    "checkpoint_every_epochs": (1.0, float, "epochs between checkpoints (0: never by epochs)"),
    "checkpoint_every_minutes": (0.0, float, "minutes between checkpoints (0: never by time)"),
    "resume": (False, bool, "continue from the checkpoint in checkpoint_dir, if any"),
    "metrics": (None, str, "metrics file (JSON lines)"),
    "tensorboard": (None, str, "TensorBoard folder: scalars written while training runs"),
    "log_every": (50, int, "iterations between metrics records"),
    "progress": (True, bool, "a progress bar on stderr"),
    "stall_timeout": (300.0, float, "seconds without a finished iteration after which the run "
                      "is stuck: it ends, saying what each thread waits for (0: never)"),
    "skip_nan": (False, bool, "skip a batch whose loss, gradients or BN statistics are not "
                 "finite instead of stopping"),
    "workers": (2, int, "data loader threads per source"),
    "augment": ("auto", str, "input preset: cifar, imagenet, mnist or none (see the guide), "
                "or auto: the net's own"),
    "input_size": (None, int, "ImageNet nets: input side in pixels, 64-224 (default 224)"),
    "mean": ((), float, "per-channel mean in [0, 1] units, overriding the preset's"),
    "std": ((), float, "per-channel standard deviation, overriding the preset's"),
    "num_classes": (None, int, "classes of the net's last layer (default: the net's dataset)"),
    "seed": (0, int, "seed of initialisation and data order"),
    "collective_timeout": (300.0, float, "MPI: seconds a rank waits for the others before it "
                           "gives up (longer than an evaluation of the test set)"),
}

def _flag(name):
    return f"{name} (--{name.replace('_', '-')})"


def _check(opts):
    """Every option's value, checked before anything is built; messages name the option as a
    keyword and as a flag, and the value."""
    def require(name, ok, what):
        v = opts[name]
        if v is not None and not ok(v):
            raise ValueError(f"{_flag(name)} must be {what}, got {v!r}")

    finite = math.isfinite
    for name in ("batch_size", "sync_period", "epochs", "iterations", "time_limit", "workers",
                 "threads_per_learner", "log_every", "collective_timeout"):
        require(name, lambda v: finite(v) and v > 0, "> 0")
    for name in ("lr", "weight_decay", "eval_every", "checkpoint_every_epochs",
                 "checkpoint_every_minutes", "stall_timeout", "warmup", "step_size"):
        require(name, lambda v: finite(v) and v >= 0, "finite and >= 0")
    for name in ("momentum", "central_momentum", "outer_momentum"):
        require(name, lambda v: 0 <= v < 1, "in [0, 1)")
    require("alpha", lambda v: 0 < v <= 1, "in (0, 1]")
    require("outer_lr", lambda v: finite(v) and v > 0, "> 0")
    require("central_momentum_type", lambda v: v in ("polyak", "nesterov"), "polyak or nesterov")
    require("target_accuracy", lambda v: 0 <= v <= 1, "in [0, 1]")
    require("autotune_threshold", lambda v: finite(v) and v > 0, "> 0")
    require("num_classes", lambda v: v >= 1, ">= 1")
    for name in ("gamma", "power", "warmup_start"):
        require(name, finite, "finite")
    if opts["epochs"] is None and opts["iterations"] is None and opts["time_limit"] is None:
        raise ValueError("set epochs, iterations or time_limit (--epochs, --iterations, "
                         "--time-limit): training would never stop")
    if opts["learners"] != "auto":
        try:
            k = int(opts["learners"])
        except ValueError:
            raise ValueError(f"{_flag('learners')} must be 'auto' or a number, "
                             f"got {opts['learners']!r}")
        if k < 1:
            raise ValueError(f"{_flag('learners')} must be >= 1, got {k}")
    if opts["sync"] not in SYNCS:
        raise ValueError(f"{_flag('sync')} must be {', '.join(SYNCS[:-1])} or {SYNCS[-1]}, "
                         f"got {opts['sync']!r}")
    if opts["resume"] and not opts["checkpoint_dir"]:
        raise ValueError("resume (--resume) needs a checkpoint_dir (--checkpoint-dir)")


def _check_db(what, db):
    if isinstance(db, (str, os.PathLike)) and not os.path.exists(db):
        raise FileNotFoundError(f"{what} '{os.fspath(db)}' does not exist")


class Trainer:
    """Trains a zoo net (a name) or a ModelBuilder on LMDB paths, ImageDBs or (images, labels)
    numpy pairs with many learners per device; see OPTIONS for the keyword arguments."""

    def __init__(self, net, train_db, test_db=None, **options):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"Trainer got an unknown option '{unknown[0]}'"
                            f"{did_you_mean(unknown[0], OPTIONS)}")
        self.options = {name: spec[0] for name, spec in OPTIONS.items()}
        self.options.update(options)
        _check(self.options)
        self.builder = _builder(net, self.options["num_classes"], self.options["input_size"])
        self._data_error = None
        try:
            _check_db("train_db", train_db)
            _check_db("test_db", test_db)
        except FileNotFoundError as e:
            if not world.under_mpirun():
                raise
            self._data_error = e  # every rank hears of it at the start-up check, in fit()
        self.train_db, self.test_db = train_db, test_db
        self._trainer = None

    def _native_trainer(self):
        if self._trainer is None:
            o = self.options
            C = _native.load()
            spec = self.builder.to_spec(lr=o["lr"], momentum=o["momentum"],
                                        weight_decay=o["weight_decay"], seed=o["seed"],
                                        threads=o["threads_per_learner"],
                                        device=spec_device(o["devices"]))
            native = {k: v for k, v in o.items() if v is not None}
            native["steps"] = [float(s) for s in o["steps"]]
            train, test = self._sources(C)
            self._trainer = C.Trainer(json.dumps(spec), json.dumps(native), train, test)
        return self._trainer

    def _sources(self, C):
        """The batch sources; under mpirun a rank that cannot open its data tells the others
        (at the start-up check they all make) instead of leaving them waiting."""
        o = self.options
        try:
            if self._data_error:
                raise self._data_error
            return (_source(self.train_db, self.builder, o, True),
                    _source(self.test_db, self.builder, o, False))
        except (OSError, ValueError, RuntimeError) as e:
            if C.world()[1] == 1:
                raise
            C.report_startup_failure(f"{type(e).__name__}: {e}", o["collective_timeout"])
            raise

    def fit(self):
        """Trains until a stop condition; returns a dict: stop_reason, iterations, epochs,
        elapsed_s, images_per_s, learners_per_device, test_loss/accuracy/top5 (last
        evaluation), best_accuracy, time_to_accuracy_s (None if not reached), skipped_batches,
        autotune (the autotuner's decisions), ranks (processes of an MPI job)."""
        from crossbow import observe
        with observe.training(self.options, self.builder.name):
            return dict(self._native_trainer().fit())


def evaluate(net, checkpoint, test_db, batch_size=100, num_classes=None, workers=2,
             input_size=None):
    """Loss, top-1 and top-5 of a checkpoint's average model on one epoch of test_db."""
    if os.path.isdir(checkpoint):
        checkpoint = os.path.join(checkpoint, "checkpoint.cbt")
    if not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"no checkpoint at '{checkpoint}'")
    _check_db("test_db", test_db)
    if not batch_size > 0:
        raise ValueError(f"batch_size must be > 0, got {batch_size}")
    builder = _builder(net, num_classes, input_size)
    options = dict(batch_size=batch_size, workers=workers, seed=0)
    source = _source(test_db, builder, options, False)
    loss, top1, top5 = _native.load().evaluate_checkpoint(json.dumps(builder.to_spec()),
                                                          checkpoint, source)
    return {"loss": loss, "top1": top1, "top5": top5}


def _source(db, builder, o, train):
    """The C++ batch source of an LMDB path, an ImageDB or an (images, labels) pair."""
    if db is None:
        return None
    if hasattr(db, "source"):
        return db.source
    if isinstance(db, tuple):
        images, labels = db
        return _native.load().ArraySource(images, labels, o["batch_size"])
    from crossbow.data import ImageDB
    preset = o.get("augment", "auto")
    if preset == "auto":
        preset = builder.preset or "none"
    return ImageDB(os.fspath(db), o["batch_size"], train=train, preset=preset,
                   input_size=builder.input_shape[-1], mean=o.get("mean") or None,
                   std=o.get("std") or None, seed=o["seed"], workers=o["workers"],
                   num_classes=builder.num_classes).source


def spec_device(devices):
    """The learner spec's device for an engine on `devices`: its first GPU, or the CPU (the
    engine places each learner on its own device; the spec names where the model starts)."""
    first = devices.split(",")[0].strip()
    if first == "cuda:local":
        return "cuda:%d" % world.local_rank()
    return first if first.startswith("cuda") else "cpu"


def _builder(net, num_classes, input_size=None):
    if isinstance(net, str):
        from crossbow import nets
        return nets.builder(net, num_classes, input_size)
    if hasattr(net, "to_spec"):
        return net
    raise TypeError(f"net must be a zoo net name or a ModelBuilder, got {type(net).__name__}")


def add_arguments(parser):
    """The OPTIONS as flags of `crossbow train`: --batch-size, --lr-policy, --resume ..."""
    import argparse
    for name, (default, kind, help_text) in OPTIONS.items():
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=help_text)
        elif isinstance(default, tuple):
            parser.add_argument(flag, type=kind, nargs="*", default=list(default),
                                help=help_text)
        else:
            parser.add_argument(flag, type=kind, default=default, help=help_text)


def options_from(args):
    """The OPTIONS' values from parsed `crossbow train` arguments."""
    return {name: getattr(args, name) for name in OPTIONS}


def describe(result):
    """A few lines for people: why it stopped, accuracy, speed, learners."""
    lines = [f"stopped ({result['stop_reason']}) after {result['iterations']} iterations, "
             f"{result['epochs']:.2f} epochs, {result['elapsed_s']:.1f} s of training",
             f"{result['images_per_s']:.0f} images/s with {result['learners_per_device']} "
             f"learner(s) per device"]
    if result.get("accuracy") is not None:
        lines.append(f"test accuracy {result['accuracy'] * 100:.2f}% (top-5 "
                     f"{result['top5'] * 100:.2f}%, loss {result['test_loss']:.4f}), best "
                     f"{result['best_accuracy'] * 100:.2f}%")
    if result.get("time_to_accuracy_s") is not None:
        lines.append(f"time to target accuracy: {result['time_to_accuracy_s']:.1f} s")
    if result.get("skipped_batches"):
        lines.append(f"skipped batches (non-finite loss): {result['skipped_batches']}")
    return "\n".join(lines)
