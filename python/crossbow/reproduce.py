"""``crossbow reproduce RECIPE``: a published recipe (crossbow.recipes) end to end. It converts
the data set from its archive in the data folder (``--data-dir``: crossbow.archives) once into
a cache, trains through the same Trainer as ``crossbow train``, evaluating every epoch and
checkpointing, and writes into its output folder:

    reproduce.json   the recipe, variant and every Trainer option of the run
    metrics.jsonl    the training metrics (crossbow plot reads them)
    curves.png       test accuracy, loss, rate and learners' distance to z
    result.json      one result row: best and final top-1, time, images/s, machine, commit

Running the same command again resumes from the checkpoint. Any ``crossbow train`` option
given on the command line overrides the recipe's (and is recorded in reproduce.json).
"""
import argparse
import json
import os
import subprocess
import sys

from crossbow import archives, machine, recipes

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_dir(given=None):
    return given or os.environ.get("CROSSBOW_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "crossbow")


def prepare(dataset, data, cache, log=print):
    """(train_db, test_db) of `dataset` in `cache`, extracting its archive from the data
    folder (`data`: --data-dir, else crossbow.archives.data_dir's default) and converting it
    where that was not done before. Every step writes beside its target and renames when
    complete, so an interrupted step starts again rather than leave half."""
    d = archives.DATASETS[dataset]
    dbs = {split: os.path.join(cache, f"{dataset}_{split}") for split in ("train", "test")}
    if all(os.path.isfile(os.path.join(db, "data.mdb")) for db in dbs.values()):
        return dbs["train"], dbs["test"]
    extracted = archives.extract(dataset, cache, data, log)
    from crossbow import convert
    for split, sub in (("train", d.train), ("test", d.test)):
        if os.path.isfile(os.path.join(dbs[split], "data.mdb")):
            continue
        partial = dbs[split] + ".partial"
        log(f"converting {os.path.join(extracted, sub)} into {dbs[split]}")
        result = convert.image_folders(os.path.join(extracted, sub) + os.sep, partial,
                                       overwrite=True, encoded=d.encoded)
        log(result["text"])
        os.replace(partial, dbs[split])
    return dbs["train"], dbs["test"]


def commit():
    try:
        out = subprocess.run(["git", "-C", _CHECKOUT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def evaluations(metrics_path):
    """The evaluation records of a metrics file in epoch order, one per epoch: a resumed run
    repeats the epochs after its checkpoint, and the later record wins."""
    from crossbow.plot import read_metrics
    if not os.path.isfile(metrics_path) or os.path.getsize(metrics_path) == 0:
        return []
    by_epoch = {}
    for r in read_metrics(metrics_path):
        if r.get("accuracy") is not None:
            by_epoch[round(r["epoch"], 3)] = r
    return [by_epoch[e] for e in sorted(by_epoch)]


def result_row(settings, metrics_path):
    """One row for docs/reproduction.md from a run's reproduce.json settings and metrics; `lr`
    is one learner's rate, which lr_learner_scaling multiplies by the learners' factor."""
    from crossbow import trainer
    recipe = recipes.get(settings["recipe"])
    o = settings["options"]
    evals = evaluations(metrics_path)
    last = evals[-1] if evals else {}
    return {
        "recipe": recipe.name, "variant": settings["variant"], "net": o["net"],
        "sync": o["sync"], "batch_size": o["batch_size"], "learners": o["learners"],
        "learners_chosen": last.get("learners_per_device"),
        "epochs": o["epochs"], "epochs_done": round(last.get("epoch", 0.0), 2),
        "complete": last.get("epoch", 0.0) >= o["epochs"] - 1e-3,
        "published_epochs": round(recipe.epochs, 2),
        "compressed": o["epochs"] < recipe.epochs,
        "best_top1": max((r["accuracy"] for r in evals), default=None),
        "final_top1": last.get("accuracy"),
        "published_top1": recipe.published_top1 or None, "source": recipe.source,
        "overrides": settings.get("overrides", {}),
        "lr": o["lr"], "lr_learner_scaling": o.get(
            "lr_learner_scaling", trainer.option_table()["lr_learner_scaling"].default),
        "training_minutes": round(last.get("time", 0.0) / 60, 1),
        "images_per_s": round(last["epoch"] * settings["train_images"] / last["time"], 1)
        if last.get("time") else None,
        **settings["machine"], "commit": settings["commit"], "started": settings["started"],
    }


def run_settings(recipe, variant, options, overrides, train_db, test_db):
    """What result_row needs besides the metrics, but what the run's machine says:
    train_images, machine and started (None here; crossbow.machine fills them)."""
    return {"recipe": recipe, "variant": variant, "options": options, "overrides": overrides,
            "train_db": train_db, "test_db": test_db, "train_images": None, "machine": None,
            "commit": commit(), "started": None}


def record_settings(out, recipe, variant, options, overrides, train_db, test_db):
    """Writes (and returns) `out`/reproduce.json: what result_row needs besides the metrics.
    A resumed run keeps the start time and commit of its first start."""
    from crossbow import _native
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "reproduce.json")
    settings = machine.fill(run_settings(recipe, variant, options, overrides, train_db, test_db),
                            len(_native.load().LmdbReader(train_db)))
    if os.path.isfile(path):
        with open(path) as f:
            before = json.load(f)
        settings.update(started=before.get("started"), commit=before.get("commit"))
    _write_json(path, settings)
    return settings


def _write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


_ALWAYS_SHOWN = ("batch_size", "learners", "sync", "lr", "momentum", "weight_decay")


def train_command(options, train_db, test_db):
    """The `crossbow train` command line that runs `options`."""
    from crossbow.options import option_table
    words = ["crossbow", "train", "--net", options["net"], "--train-db", train_db,
             "--test-db", test_db]
    for name, option in option_table().items():
        value = options.get(name)
        if value is None or value == option.default and name not in _ALWAYS_SHOWN:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "--no-" + flag[2:])
        elif isinstance(value, (list, tuple)):
            words += [flag] + [f"{v:g}" for v in value]
        else:
            words += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return " ".join(words)


def run(args, overrides):
    recipe = recipes.get(args.recipe)
    options = recipe.options(args.variant, args.epochs)
    options.update(overrides)
    out = args.output or os.path.join(
        "reproduce", f"{recipe.name}-{args.variant}-{options['epochs']}ep")
    options.setdefault("checkpoint_dir", os.path.join(out, "ckpt"))
    options.setdefault("metrics", os.path.join(out, "metrics.jsonl"))
    options.setdefault("resume", True)
    from crossbow import trainer
    trainer.checked_options({k: v for k, v in options.items() if k != "net"})
    from crossbow import net_source
    net_source.builder(options["net"], options.get("num_classes"), options.get("input_size"),
                       options.get("zero_init_residual"))  # a wrong --net fails before the data
    cache = cache_dir(args.cache_dir)
    train_db, test_db = (os.path.join(cache, f"{recipe.dataset}_{s}") for s in ("train", "test"))
    if args.dry_run:
        print(f"{recipe.name} ({args.variant}): {recipe.source}")
        print(train_command(options, train_db, test_db))
        return 0
    if args.export:
        exported = dict(options)
        net = exported.pop("net")
        print(trainer.Trainer(net, None, None, **exported).export(args.export, train_db, test_db))
        _write_json(os.path.join(args.export, "reproduce.json"),
                    run_settings(recipe.name, args.variant, options, overrides, train_db, test_db))
        return 0
    train_db, test_db = prepare(recipe.dataset, args.data_dir, cache,
                                log=lambda line: print(line, file=sys.stderr, flush=True))
    settings = record_settings(out, recipe.name, args.variant, options, overrides, train_db,
                               test_db)
    options = dict(options)
    net = options.pop("net")
    result = trainer.Trainer(net, train_db, test_db, **options).fit()
    print(trainer.describe(result))
    row = result_row(settings, options["metrics"])
    _write_json(os.path.join(out, "result.json"), row)
    try:
        from crossbow.plot import plot
        plot([options["metrics"]], os.path.join(out, "curves.png"),
             [f"{recipe.name} ({args.variant})"])
    except ImportError as e:
        print(f"no plot: {e}", file=sys.stderr)
    print(f"result: {os.path.join(out, 'result.json')}")
    return 128 + result["signal"] if result["signal"] else 0


def _list():
    for r in recipes.RECIPES.values():
        published = f"{r.published_top1 * 100:.2f}%" if r.published_top1 else "none"
        print(f"{r.name:28} {r.net:9} {r.dataset:10} {r.epochs:6.1f} epochs, "
              f"published top-1 {published}: {r.source}")
    return 0




def add_parser(subparsers, output_flags, net_help):
    from crossbow import options, trainer
    p = subparsers.add_parser(
        "reproduce", parents=[output_flags], conflict_handler="resolve",
        help="train a published recipe end to end (crossbow reproduce --list)",
        description=__doc__.split("\n\n")[0])
    p.add_argument("recipe", nargs="?", metavar="RECIPE", help=", ".join(recipes.RECIPES))
    p.add_argument("--list", action="store_true", help="list the recipes and exit")
    p.add_argument("--net", help=net_help + "; default: the recipe's")
    p.add_argument("--variant", default="sma", choices=recipes.VARIANTS,
                   help="sma: batch 16, auto-tuned learners (default); published: as the "
                        "paper")
    p.add_argument("--dry-run", action="store_true",
                   help="print the equivalent crossbow train command and exit")
    p.add_argument("--export", metavar="FOLDER",
                   help=trainer.EXPORT_HELP + "; the data is not converted")
    archives.add_argument(p)
    p.add_argument("--cache-dir", help="where converted data sets are kept (default: "
                                       "$CROSSBOW_CACHE or ~/.cache/crossbow)")
    p.add_argument("--output", "-o", help="the run's folder (default: "
                                          "reproduce/RECIPE-VARIANT-Eep)")
    group = p.add_argument_group("training options, overriding the recipe's")
    options.add_arguments(group)
    for action in group._group_actions:
        action.default = argparse.SUPPRESS
    p.add_argument("--epochs", type=int, default=None,
                   help="compress the recipe to this many epochs, its learning-rate drops at "
                        "the same fractions (default: as published)")
    p.set_defaults(run=_run)
    return p


def _run(args):
    if args.list:
        return _list()
    if not args.recipe:
        raise ValueError("name a recipe (crossbow reproduce --list shows them)")
    from crossbow import options
    # --epochs is the reproduce command's own (it compresses the schedule), not an override.
    overrides = {n: getattr(args, n) for n in options.option_table()
                 if n != "epochs" and hasattr(args, n)}
    if args.net is not None:
        overrides["net"] = args.net
    return run(args, overrides)
