#!/usr/bin/env python3
"""Why averaged learners need more epochs: ResNet-20 on the full CIFAR-10,
one schedule for every run (the small-batch rule's: one epoch of warm-up from a tenth of the
rate, /10 at 1/2 and 3/4 of --epochs, momentum 0.9, weight decay 1e-4), and one lever changed
per run against the same seed:

  sgd-k1          one learner at batch 16, lr 0.0354 (the square-root rule from He's 0.1 at 128)
  ssgd-k2         S-SGD, 2 learners x 16 (the gradient of 32 images), the same lr
  sma-k2          SMA, 2 learners x 16, the same lr, alpha and central momentum at the defaults
  sma-k2-lr-sqrtk SMA with the rate x sqrt(2)
  sma-k2-lr-k     SMA with the rate x 2
  ssgd-k2-lr-k    S-SGD with the rate x 2 (the linear-scaling rule for batch 32)
  sma-k2-cm0      SMA without central momentum
  sma-k2-alpha05  SMA with alpha 0.5 (a stronger pull)
  sma-k4-lr-sqrtk SMA, 4 learners x 16, the rate x sqrt(4) (the small-batch rule at 4 learners,
                  which the autotuner chose on the AMX machine)
  sma-k4          SMA, 4 learners, the one-learner rate
  sma-k4-lr-sqrtk-alpha-1n  the rule's rate with alpha 1/4 (N alpha = 1: z follows the
                  learners' mean at once)
  sma-k2-lr-sqrtk-alpha-1n  the rule's rate at 2 learners with alpha 1/2
  ssgd-k4-lr-sqrtk  S-SGD, 4 learners x 16 (the gradient of 64 images), the rate x 2

Each run writes $WORK/avg_NAME.jsonl (the trainer's metrics, an evaluation of the whole test
set every epoch) and checkpoints to $WORK/avg_NAME_ckpt (--resume goes on from them); the
table (epochs to each --targets, best and last accuracy) is printed
and written to $WORK/averaging_table.md, with every run's curve in $WORK/averaging_curves.png.
Statistical efficiency does not depend on the machine's load (the runs are synchronous and
seeded), so runs may share the machine; their images/s and times then do not count.

  python3 scripts/bench/bench_averaging.py --work DIR [--runs sgd-k1 sma-k2] [--precision bf16]
  python3 scripts/bench/bench_averaging.py --work DIR --report
"""
import argparse
import json
import os
import sys

import bench_train
import tta_report
from crossbow import archives
from tta import crossbow_curve
from tta_recipes import COMMON, HE_BATCH, HE_DROPS, HE_LR

BATCH = 16
LR = round(HE_LR * (BATCH / HE_BATCH) ** 0.5, 4)
STUDY = {
    "sgd-k1": dict(sync="sgd", learners="1"),
    "ssgd-k2": dict(sync="ssgd", learners="2"),
    "sma-k2": dict(sync="sma", learners="2"),
    "sma-k2-lr-sqrtk": dict(sync="sma", learners="2", lr=round(LR * 2 ** 0.5, 4)),
    "sma-k2-lr-k": dict(sync="sma", learners="2", lr=2 * LR),
    "ssgd-k2-lr-k": dict(sync="ssgd", learners="2", lr=2 * LR),
    "sma-k2-cm0": dict(sync="sma", learners="2", central_momentum=0.0),
    "sma-k2-alpha05": dict(sync="sma", learners="2", alpha=0.5),
    "sma-k4-lr-sqrtk": dict(sync="sma", learners="4", lr=2 * LR),
    "sma-k4": dict(sync="sma", learners="4"),
    "sma-k4-lr-sqrtk-alpha-1n": dict(sync="sma", learners="4", lr=2 * LR, alpha=0.25),
    "sma-k2-lr-sqrtk-alpha-1n": dict(sync="sma", learners="2", lr=round(LR * 2 ** 0.5, 4),
                                     alpha=0.5),
    "ssgd-k4-lr-sqrtk": dict(sync="ssgd", learners="4", lr=2 * LR),
}


# SMA's alpha when the study began (the default up to 10 learners then); the runs whose lever
# is alpha set their own, so every run keeps the options it was measured with.
STUDY_ALPHA = 0.1


def options(name, epochs):
    from crossbow import recipes
    # The rate is each run's own lever: the trainer's learner scaling stays off.
    alpha = {"alpha": STUDY_ALPHA} if STUDY[name]["sync"] == "sma" else {}
    return {**COMMON, **recipes.multistep(epochs, HE_DROPS), "batch_size": BATCH, "lr": LR,
            "warmup": 1.0, "warmup_start": 0.1, "lr_learner_scaling": "none", **alpha,
            **STUDY[name]}


def run(args, name, dbs):
    import crossbow
    metrics = os.path.join(args.work, f"avg_{name}.jsonl")
    result = crossbow.Trainer(net="resnet20", train_db=dbs["train"], test_db=dbs["test"],
                              metrics=metrics, workers=args.workers, seed=args.seed,
                              checkpoint_dir=os.path.join(args.work, f"avg_{name}_ckpt"),
                              resume=args.resume, precision=args.precision, progress=False,
                              **options(name, args.epochs)).fit()
    # A signal checkpointed the run: the study stops with it (--resume goes on from there).
    if result["stop_reason"].startswith("signal"):
        raise SystemExit(f"bench_averaging: {name} stopped by a {result['stop_reason']}")


def runs_found(args, folder):
    """Every study run with a metrics file in --work, as tta_report's run records."""
    from crossbow.plot import read_metrics
    train_images = bench_train.tta.count_images(os.path.join(folder, "train"))
    out = []
    for name in STUDY:
        path = os.path.join(args.work, f"avg_{name}.jsonl")
        if not os.path.exists(path):
            continue
        curve = crossbow_curve(read_metrics(path), train_images)
        out.append(dict(run=name, side="crossbow", recipe=name, mode=None, batch=BATCH,
                        about=", ".join(f"{k} {v}" for k, v in STUDY[name].items()),
                        options=options(name, args.epochs),
                        precision=args.precision, epochs_budget=args.epochs, learners=None,
                        curve=curve))
    return out


def report(args, folder):
    found = runs_found(args, folder)
    if not found:
        raise SystemExit(f"bench_averaging: no avg_*.jsonl in {args.work}")
    targets = " | ".join(f"epochs to {t:.0%}" for t in args.targets)
    lines = [f"| run ({args.precision}, seed {args.seed}) | options | {targets} | best | last |", "|---|---|" + "---|" * len(args.targets) + "---|---|"]
    for r in found:
        cells = []
        for t in args.targets:
            hit = tta_report.first_reaching(r["curve"], t)
            cells.append(f"{hit['epoch']:.1f}" if hit else "not reached")
        acc = [p["accuracy"] for p in r["curve"]]
        lines.append(f"| {r['run']} | {r['about']} | " + " | ".join(cells)
                     + f" | {max(acc):.2%} | {acc[-1]:.2%} |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.work, "averaging_table.md"), "w") as f:
        f.write(table)
    print(table)
    # The runs share the machine: the time panel compares them only roughly.
    print("wrote", tta_report.plot(found, args.targets,
                                   os.path.join(args.work, "averaging_curves.png"),
                                   title="ResNet-20 on CIFAR-10: one lever per run of the "
                                         "averaging study (Crossbow only)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", nargs="+", choices=tuple(STUDY), default=list(STUDY))
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--targets", type=float, nargs="+", default=[0.75, 0.8])
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--report", action="store_true", help="the table of the runs in --work")
    archives.add_argument(ap)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    folder, dbs = bench_train.prepare(args.work, None, args.data_dir)
    if not args.report:
        for name in args.runs:
            print(json.dumps({"averaging_run": name, **STUDY[name]}), flush=True)
            run(args, name, dbs)
    report(args, folder)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FileNotFoundError as e:  # an archive missing from the data folder
        sys.exit(f"bench_averaging: {e}")
