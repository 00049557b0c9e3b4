"""bench_train.py statistical: time to accuracy, Crossbow against PyTorch on the same machine in
the same run. Every recipe of the stated sweep (tta_recipes.py; --recipes picks some) trains
ResNet-20 on CIFAR-10 for at most --epochs (a budget its schedule is a fraction of; several
budgets run every recipe at each: the budget is part of a recipe, and the one that suits a
target best differs between targets), evaluated on the whole test set after every epoch,
until the highest of --targets; PyTorch's recipes in every --modes configuration. Written to
the --work folder ($WORK): $WORK/tta_runs.jsonl (one line per run with its accuracy-against-time
curve; --resume keeps the runs already there, refusing any of another precision or of recipe
options the sweep no longer gives, and continues an interrupted run from its checkpoint:
tta_<recipe>_<budget>ep_ckpt/ for Crossbow's, tta_<recipe>_<mode>_<budget>ep.pt for the
peer's), $WORK/tta_learners.json (the learner count of each Crossbow recipe with auto-tuned
learners, searched once a sweep before its first run), $WORK/tta_table.md (the table, also
printed) and $WORK/tta_curves.png; the last JSON lines give, per target, each side's fastest
run and the ratios (bench "train_tta").

--dry-run: the whole pipeline on the bundled sample (data/samples/cifar10: 2,000 training and
500 test images) in --work/dry_run, one recipe a side (sma-b16, he-b128), 2 epochs, targets
15% and 20%, the peer in eager mode alone, unless --recipes, --epochs, --targets or --modes say
otherwise; without a peer Python that has torch, Crossbow alone.
"""
import json
import os
import shutil

import sys

sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peer"))  # peer.py
import peer  # noqa: E402
import tta_recipes  # noqa: E402
import tta_report  # noqa: E402

PEER_SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peer")
FULL = dict(epochs=[30], targets=[0.8, 0.85], modes=list(peer.MODES), recipes=None)
DRY = dict(epochs=[2], targets=[0.15, 0.2], modes=["eager"], recipes=["sma-b16", "he-b128"])


def add_arguments(ap):
    ap.add_argument("--epochs", type=int, nargs="+",
                    help=f"statistical: each run's budget, or several: every recipe at each "
                    f"(default {FULL['epochs'][0]}; schedules are fractions of it)")
    ap.add_argument("--targets", type=float, nargs="+",
                    help="statistical: test top-1 targets in (0, 1) (default 0.8 0.85; add 0.9 "
                         "with --epochs 60 or more); a run stops at the highest")
    ap.add_argument("--recipes", nargs="+", help="statistical: the recipes of the sweep to run "
                    "(default: all; scripts/bench/tta_recipes.py; a dry run: sma-b16 he-b128)")
    ap.add_argument("--dry-run", action="store_true",
                    help="statistical: the whole pipeline on the bundled 2,000-image sample in "
                         "about a minute (short runs, low targets)")
    ap.add_argument("--resume", action="store_true",
                    help="statistical: keep the finished runs of tta_runs.jsonl and go on from "
                         "the checkpoint of an interrupted run")


def settle(args):
    """Fills in the defaults of a full or a dry run, checks --targets and --recipes, and finds
    the peer: returns the sweep it can run, {budget: {name: recipe}}. Without a peer a dry run
    goes on with Crossbow alone; a full one stops (unless it runs Crossbow's recipes alone)."""
    defaults = DRY if args.dry_run else FULL
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.dry_run:
        args.work = os.path.join(args.work, "dry_run")
    if not all(0 < t < 1 for t in args.targets):
        raise SystemExit(f"bench_train: --targets must lie in (0, 1), got {args.targets}")
    args.targets = sorted(args.targets)
    if not all(e > 0 for e in args.epochs):
        raise SystemExit(f"bench_train: --epochs must be > 0, got {args.epochs}")
    args.epochs = sorted(set(args.epochs))
    try:
        chosen = {e: tta_recipes.sweep(e, args.recipes) for e in args.epochs}
    except ValueError as e:
        raise SystemExit(f"bench_train: {e}") from None
    check_crossbow_options(chosen)
    if any(r["side"] == "pytorch" for r in chosen[args.epochs[0]].values()):
        try:
            info = peer.describe(args.peer_python)
        except RuntimeError as e:
            if not args.dry_run:
                raise SystemExit(f"bench_train statistical: {e}\n(--recipes with Crossbow's "
                                 "recipes alone runs without a peer)") from None
            print(f"no PyTorch peer, so Crossbow alone: {e}", flush=True)
            return {e: {n: r for n, r in by_name.items() if r["side"] == "crossbow"}
                    for e, by_name in chosen.items()}
        args.modes, notes = peer.modes(info, args.modes)
        print(peer.banner(info), *notes, sep="\n", flush=True)
    return chosen


def check_crossbow_options(chosen):
    """SystemExit naming the recipe and budget whose options the trainer would refuse (a
    cosine that ends inside its warm-up at --epochs 1), before any data is prepared."""
    crossbow_runs = [(e, n, r) for e, by_name in chosen.items() for n, r in by_name.items()
                     if r["side"] == "crossbow"]
    if not crossbow_runs:
        return
    from crossbow import trainer
    for epochs, name, recipe in crossbow_runs:
        try:
            trainer.checked_options(recipe["options"])
        except ValueError as e:
            raise SystemExit(f"bench_train: {name} at --epochs {epochs:g}: {e}") from None


def crossbow_curve(records, train_images):
    """The evaluations of a Crossbow metrics file as curve points (tta_report)."""
    return [{"epoch": r["epoch"], "time": r["time"], "accuracy": r["accuracy"],
             "images": round(r["epoch"] * train_images)}
            for r in records if r.get("accuracy") is not None]


def checkpoint_of(args, name, mode, epochs):
    """Where a run keeps its checkpoint: a folder for Crossbow's trainer, a file for the peer."""
    return os.path.join(args.work, f"tta_{name}_{epochs}ep_ckpt" if mode is None
                        else f"tta_{name}_{mode}_{epochs}ep.pt")


def discard(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def chosen_learners(result):
    """The learner count of a search alone (a Trainer's autotune_only fit() result), or
    SystemExit where it stopped before it chose (a signal, a budget): a benchmark would then
    train a count nobody chose. bench_train's hardware rounds use it too."""
    if result["stop_reason"] != "autotuned":
        raise SystemExit(f"bench_train: the autotuner's search stopped before it chose "
                         f"({result['stop_reason']})")
    return result["learners_per_device"]


def searched_learners(args, name, recipe, dbs):
    """{learners, search, search_s} of a recipe with auto-tuned learners: the autotuner's search
    in a run of its own (crossbow train --autotune-only), once a sweep, kept in
    $WORK/tta_learners.json for every budget of the recipe and for --resume; search_s is its
    training time (the trials), which each run of the recipe counts in its time to a target. Every run of the recipe then trains the
    same count, and so the same rate (SMA's sqrt(N) scaling): a search per run let one run's
    noise change both (2 learners in one run, 3 in the next, an epoch apart to 80%). Recipes
    that differ in their schedules alone (sma-b16, sma-b16-cos) share one search."""
    import crossbow
    from crossbow import recipes
    path = os.path.join(args.work, "tta_learners.json")
    found = {}
    if os.path.exists(path):
        with open(path) as f:
            found = json.load(f)
    if name not in found:
        # The schedule and its budget go: the rate does not change images/s, and the search
        # must end at its choice, not at the end of a short run (nor need the budget a cosine
        # ends at).
        schedule = set(recipes.multistep(1, ())) | set(recipes.flat_cosine(1, 0.5))
        search_options = {k: v for k, v in recipe["options"].items() if k not in schedule}
        twin = next((n for n, f in found.items() if f.get("options") == search_options), None)
        if twin:
            found[name] = dict(found[twin], twin=twin)
        else:
            result = crossbow.Trainer(net="resnet20", train_db=dbs["train"],
                                      workers=args.workers, precision=args.precision,
                                      progress=False, autotune_only=True,
                                      **search_options).fit()
            found[name] = dict(learners=chosen_learners(result), search=result["autotune"],
                               search_s=result["elapsed_s"], options=search_options)
        with open(path, "w") as f:
            json.dump(found, f, indent=1)
        print(json.dumps({"tta_search": name, **found[name]}), flush=True)
    return found[name]


def run_crossbow(args, name, epochs, recipe, dbs, train_images, checkpoints):
    import crossbow
    from crossbow.plot import read_metrics
    metrics = os.path.join(args.work, f"tta_{name}_{epochs}ep.jsonl")
    options, search = recipe["options"], None
    if options["learners"] == "auto":
        search = searched_learners(args, name, recipe, dbs)
        options = dict(options, learners=search["learners"])
    result = crossbow.Trainer(net="resnet20", train_db=dbs["train"], test_db=dbs["test"],
                              target_accuracy=args.targets[-1],
                              metrics=metrics, workers=args.workers,
                              checkpoint_dir=checkpoints, resume=args.resume,
                              precision=args.precision, progress=not args.dry_run,
                              **options).fit()
    return dict(learners=result["learners_per_device"], stop=result["stop_reason"],
                autotune=search and search["search"], search_s=search and search.get("search_s"),
                curve=crossbow_curve(read_metrics(metrics), train_images))


def run_pytorch(args, name, epochs, mode, recipe, folder, checkpoint):
    spec = dict(folder=folder, batch=recipe["batch"], epochs=epochs, peer_mode=mode,
                target=args.targets[-1], seed=0, options=recipe["options"],
                checkpoint=checkpoint)
    about, lines = peer.run(args, [os.path.join(PEER_SCRIPTS, "torch_tta.py")], spec,
                            {"peer": "statistical", "run": f"{name}/{mode}", "budget": epochs},
                            echo=True)
    return dict(learners=None, compile_s=about.get("compile_s"), workers=about["workers"],
                augment=about["augment"],
                curve=[{k: line[k] for k in ("epoch", "time", "accuracy", "images")}
                       for line in lines if "accuracy" in line])


def count_images(split_folder):
    return sum(len(files) for _, _, files in os.walk(split_folder))


def statistical(args, chosen, folder, dbs):
    path = os.path.join(args.work, "tta_runs.jsonl")
    runs = tta_report.read_runs(path) if args.resume and os.path.exists(path) else []
    if not args.resume:
        discard(os.path.join(args.work, "tta_learners.json"))  # a new sweep searches anew
    for r in runs:
        if r["precision"] != args.precision:
            raise SystemExit(f"bench_train: --resume: {path} holds {tta_report.name_of(r)} "
                             f"in {r['precision']}, not {args.precision}: use another --work")
        now = tta_recipes.sweep(r["epochs_budget"])
        if r["recipe"] not in now:
            raise SystemExit(f"bench_train: --resume: {path} holds {tta_report.name_of(r)}, a "
                             "recipe the sweep no longer has: use another --work")
        options = json.loads(json.dumps(now[r["recipe"]]["options"]))  # as stored: lists
        changed = sorted(k for k in {**options, **r["options"]}
                         if options.get(k) != r["options"].get(k))
        if changed:
            raise SystemExit(f"bench_train: --resume: {path} holds {tta_report.name_of(r)} "
                             f"trained with other options than the sweep's {r['recipe']} now "
                             f"(differing: {', '.join(changed)}): use another --work, or "
                             "delete its line to rerun it")
    done = {(r["run"], r["epochs_budget"]) for r in runs}
    train_images = count_images(os.path.join(folder, "train"))
    for epochs, by_name in chosen.items():
        for name, recipe in by_name.items():
            for mode in [None] if recipe["side"] == "crossbow" else args.modes:
                label = name if mode is None else f"{name}/{mode}"
                if (label, epochs) not in done:
                    checkpoint = checkpoint_of(args, name, mode, epochs)
                    runs.append(train(args, epochs, label, name, mode, recipe, checkpoint,
                                      folder, dbs, train_images))
                    tta_report.write_runs(runs, path)  # after each run: a crash keeps those done
                    discard(checkpoint)  # recorded: a rerun starts afresh
    report(args, runs)


def train(args, epochs, label, name, mode, recipe, checkpoint, folder, dbs, train_images):
    """One run of the sweep, as tta_runs.jsonl records it. A run that does not finish (a
    Crossbow run stopped by a signal, a peer that failed or was interrupted) stops the sweep,
    unrecorded, with its checkpoint kept: a truncated curve is no result."""
    print(json.dumps({"tta_run": label, "budget": epochs, "about": recipe["about"]}), flush=True)
    if not args.resume:
        discard(checkpoint)  # a rerun must not report the time of an earlier run
    unfinished = None  # (what happened, when the checkpoint was saved)
    if mode is None:
        out = run_crossbow(args, name, epochs, recipe, dbs, train_images, checkpoint)
        if out["stop"].startswith("signal"):
            unfinished = (f"{label} stopped by a {out['stop']}, not recorded", "as it stopped")
    else:
        try:
            out = run_pytorch(args, name, epochs, mode, recipe, folder, checkpoint)
        except (RuntimeError, KeyboardInterrupt) as e:
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else str(e)
            unfinished = (f"{label}, {epochs} ep stopped, not recorded ({why})",
                          "at each evaluation")
    if unfinished:
        raise SystemExit(f"bench_train: {unfinished[0]}; its checkpoint {checkpoint}, saved "
                         f"{unfinished[1]}, is kept: the same command with --resume goes on "
                         "from it")
    return dict(run=label, side=recipe["side"], recipe=name, mode=mode, batch=recipe["batch"],
                about=recipe["about"], options=recipe["options"], precision=args.precision,
                epochs_budget=epochs, **out)


def report(args, runs):
    table = tta_report.table(runs, args.targets)
    with open(os.path.join(args.work, "tta_table.md"), "w") as f:
        f.write(table)
    budgets = ", ".join(str(e) for e in sorted({r["epochs_budget"] for r in runs}))
    print(f"ResNet-20, CIFAR-10, {args.precision}, budgets of {budgets} epochs; times are "
          "training time (evaluation and torch.compile's compilation excluded), Crossbow's "
          "with the learner search's seconds where the autotuner chose its learners")
    print(table)
    for t in args.targets:
        print(json.dumps({"bench": "train_tta", "precision": args.precision,
                          **tta_report.verdict(runs, t)}))
    print("wrote", tta_report.plot(runs, args.targets, os.path.join(args.work, "tta_curves.png")),
          flush=True)
