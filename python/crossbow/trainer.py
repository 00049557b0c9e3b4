"""``crossbow.Trainer``: the whole training loop in C++ (GIL released), configured from Python.

    crossbow.Trainer(net="resnet32", train_db="cifar10_train_lmdb", test_db="cifar10_test_lmdb",
                     batch_size=16, learners="auto", sync="sma", epochs=10, lr=0.1,
                     lr_policy="multistep", steps=[5, 8]).fit()

Every option here is also a ``crossbow train`` flag (``--lr-policy`` for ``lr_policy``): both
come from the C++ table of options (crossbow/train/trainer_options.cc, here ``OPTIONS``), which
checks them before anything is built or read.
"""
import json
import os
import shlex

from crossbow import _native, observe, world
from crossbow.net_source import builder as net_builder, checkpoint_builder
from crossbow.options import as_json, checked_options, checked_subset, option_table
from crossbow.weights import checkpoint_path

# The optimiser's options, passed to the spec as they are (None: the learner's default).
_SOLVER_OPTIONS = ("optimizer", "momentum_convention", "betas", "eps", "radam_eps",
                   "lookahead_k", "lookahead_alpha")


def __getattr__(name):
    if name == "OPTIONS":
        return option_table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_db(what, db):
    if isinstance(db, (str, os.PathLike)) and not os.path.exists(db):
        raise FileNotFoundError(f"{what} '{os.fspath(db)}' does not exist")


class Trainer:
    """Trains a net (a zoo name, FILE.py:FUNCTION or MODULE:FUNCTION: crossbow.net_source) or
    a ModelBuilder on LMDB paths, ImageDBs or (images, labels) numpy pairs with many learners
    per device; see OPTIONS (or ``crossbow train --help``) for the keyword arguments."""

    def __init__(self, net, train_db, test_db=None, **options):
        self.options = checked_options(options)
        self.builder = net_builder(net, self.options["num_classes"], self.options["input_size"],
                                self.options["zero_init_residual"])
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

    def learner_spec(self):
        """The spec every learner is made from (builder.to_spec with the options)."""
        o = self.options
        return self.builder.to_spec(lr=o["lr"], momentum=o["momentum"], nesterov=o["nesterov"],
                                    weight_decay=o["weight_decay"], bias_decay=o["bias_decay"],
                                    seed=o["seed"], threads=o["threads_per_learner"],
                                    device=spec_device(o["devices"]),
                                    label_smoothing=o["label_smoothing"],
                                    **{k: o[k] for k in _SOLVER_OPTIONS})

    def export(self, folder, train_db=None, test_db=None):
        """Writes what the C++ tool crossbow_train needs to run this training without Python
        into `folder`: spec.json (the learner spec) and options.json (the options, with the
        net's input preset and classes filled in where they were left to the net). Returns the
        crossbow_train command line, on `train_db` and `test_db` (default: this trainer's)."""
        o = _with_net(self.options, self.builder)
        os.makedirs(folder, exist_ok=True)
        spec, options = (os.path.join(folder, name) for name in ("spec.json", "options.json"))
        for path, text in ((spec, json.dumps(self.learner_spec())), (options, as_json(o))):
            with open(path, "w") as f:
                f.write(text + "\n")
        train_db = self.train_db if train_db is None else train_db
        test_db = self.test_db if test_db is None else test_db
        words = ["crossbow_train", "--spec", spec, "--options", options, "--train_db",
                 os.fspath(train_db)] + (["--test_db", os.fspath(test_db)] if test_db else [])
        return " ".join(shlex.quote(w) for w in words)

    def _native_trainer(self):
        if self._trainer is None:
            C = _native.load()
            train, test = self._sources(C)
            self._trainer = C.Trainer(json.dumps(self.learner_spec()), as_json(self.options),
                                      train, test)
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
        with observe.training(self.options, self.builder.name):
            return dict(self._native_trainer().fit())


# Evaluation's batch, its own (a training option's default is the table's).
EVAL_BATCH_SIZE = 100


def evaluate(net, checkpoint, test_db, batch_size=EVAL_BATCH_SIZE, num_classes=None,
             workers=None, input_size=None):
    """Loss, top-1 and top-5 of a checkpoint's average model on one epoch of test_db; `net`
    None: the net the checkpoint records; `workers` None: the option table's default."""
    if workers is None:
        workers = option_table()["workers"].default
    checkpoint = checkpoint_path(checkpoint)
    _check_db("test_db", test_db)
    checked_subset(batch_size=batch_size, num_classes=num_classes, workers=workers,
                   input_size=input_size)
    builder = checkpoint_builder(net, checkpoint, num_classes, input_size)
    source = _source(test_db, builder, dict(batch_size=batch_size, workers=workers), False)
    loss, top1, top5 = _native.load().evaluate_checkpoint(json.dumps(builder.to_spec()),
                                                          checkpoint, source)
    return {"loss": loss, "top1": top1, "top5": top5}


def _source(db, builder, o, train):
    """The C++ batch source of an LMDB path (crossbow/train/make_source.h, as crossbow_train's),
    an ImageDB or an (images, labels) pair."""
    if db is None:
        return None
    if hasattr(db, "source"):
        return db.source
    if isinstance(db, tuple):
        images, labels = db
        return _native.load().ArraySource(images, labels, o["batch_size"])
    return _native.load().make_source(os.fspath(db), train, as_json(_with_net(o, builder)),
                                      builder.input_shape[-1])


def _with_net(o, builder):
    """The options with what they leave to the net filled in from it: the input preset of
    --augment auto (none if the net has none) and the classes."""
    preset = o.get("augment", "auto")
    return dict(o, augment=(builder.preset or "none") if preset == "auto" else preset,
                num_classes=builder.num_classes)


def spec_device(devices):
    """The learner spec's device for an engine on `devices`: its first GPU, or the CPU (the
    engine places each learner on its own device; the spec names where the model starts)."""
    first = devices.split(",")[0].strip()
    if first == "cuda:local":
        return "cuda:%d" % world.local_rank()
    return first if first.startswith("cuda") else "cpu"


EXPORT_HELP = ("write the learner spec and options into FOLDER and print the command of "
               "crossbow_train, the C++ trainer (for machines without our Python module), "
               "instead of training")


def describe(result):
    """A few lines for people: why it stopped, accuracy, speed, learners."""
    lines = [f"stopped ({result['stop_reason']}) after {result['iterations']} iterations, "
             f"{result['epochs']:.2f} epochs, {result['elapsed_s']:.1f} s of training",
             f"{result['images_per_s']:.0f} images/s with {result['learners_per_device']} "
             f"learner(s) per device"]
    if result.get("accuracy") is not None:
        loss = result["test_loss"]  # None where it was not finite
        lines.append(f"test accuracy {result['accuracy'] * 100:.2f}% (top-5 "
                     f"{result['top5'] * 100:.2f}%, loss "
                     f"{'not finite' if loss is None else f'{loss:.4f}'}), best "
                     f"{result['best_accuracy'] * 100:.2f}%")
    if result.get("time_to_accuracy_s") is not None:
        lines.append(f"time to target accuracy: {result['time_to_accuracy_s']:.1f} s")
    if result.get("skipped_batches"):
        lines.append(f"skipped batches (non-finite loss): {result['skipped_batches']}")
    return "\n".join(lines)
