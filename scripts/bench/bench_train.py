#!/usr/bin/env python3
"""Training benchmarks against PyTorch on the same machine in the same run.

  hardware    ResNet-32 images/s on CIFAR-10 at batch 16 with auto-tuned learners (SMA),
              against PyTorch in one process using all cores at batch 16 and 32; interleaved
              rounds, medians of the rounds reported. --net names another zoo net with a
              PyTorch twin (scripts/peer/torch_zoo.py): the CIFAR nets on CIFAR-10, the ImageNet
              nets at --input-size (224 by default) on Imagenette (imagenette2-160 from
              the data folder, --data-dir, converted once into an encoded LMDB in crossbow
              reproduce's cache) with the `imagenet` preset, the peer torchvision's twin
              reading the same JPEGs (scripts/peer/torch_imagenette.py); --images FOLDER
              (train/ of one class per sub-folder) in place of either data set; --learners N
              in place of the autotuner's choice.
  statistical time to accuracy on the full CIFAR-10 (scripts/bench/tta.py): ResNet-20, each side's
              recipes of a stated sweep (scripts/bench/tta_recipes.py: six a side, PyTorch's in
              every --modes configuration) up to --targets (default 80% and 85%) within
              each budget of --epochs; per run epochs, images/s and training time to each
              target, a JSONL of every run's curve, a markdown table and one plot; auto-tuned
              learners are searched once a sweep per recipe (--autotune-only). Hours on
              a 2-core machine; --dry-run runs the whole pipeline on the bundled sample in a
              minute.
  compare     the synchronisers side by side (sma, easgd, localsgd, diloco, ssgd, sgd):
              ResNet-20 at batch 16 on the full CIFAR-10 for the same training time each
              (2 learners, SGD 1), test accuracy every half epoch; for the model-averaging
              ones H is the best of a sweep of --sweep-seconds runs (PERIODS). A markdown
              table and one PNG (docs/sync_comparison.png by default).

Both sides alike:
  input       decoded pixels, augmented on the fly (pad 4, random crop 32, mirror, normalise)
              by --workers loader workers: Crossbow reads a raw-pixel LMDB (made once with
              `crossbow convert imageset --by_folder` from the data folder's JPEGs) with
              that many decode threads; the peer holds the same images, decoded once, in memory
              and augments them in a DataLoader with num_workers=--peer-workers (default
              --workers), per image or (--peer-augment batch) per whole batch. ImageNet nets:
              Crossbow decodes the JPEGs of an encoded LMDB, the peer the same JPEG files, in
              as many workers, each with the `imagenet` preset's random-resized crop.
  precision   --precision fp32 (default) or bf16: Crossbow's --precision, and the peer's
              mixed-precision recipe, torch.autocast("cpu", torch.bfloat16) around the forward
              pass and loss (evaluation under it too).
  threads     the peer runs torch.set_num_threads(--threads) (all cores by default) and prints
              what it got; Crossbow's learners run one thread each on the same cores.
  measurement both sides log (time, images) through the run, and one function turns each log
              into two figures: "steady", the median rate of --window-second windows over the
              second half of the measured phase (Crossbow: its metrics records; PyTorch:
              after its first batch), and "overall", images over the whole run (first steps
              included on both sides). With --learners auto the autotuner searches once, in a
              run of its own before the rounds (--autotune-only; its decisions are printed),
              and every round trains its choice for the whole --seconds.

The PyTorch peer runs under --peer-python (scripts/peer/peer.py: the venv of scripts/peer/setup_peer.sh,
current PyTorch from PyPI; named in the output) with OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE unset, once per --modes configuration (eager, channels_last, torch.compile; the
compile step is timed apart, never counted), at each --peer-batches size (hardware); the last
JSON lines give Crossbow's ratio against each and against the best.

  python3 scripts/bench/bench_train.py hardware --work /tmp/bench --rounds 3 --seconds 60 \
      --peer-batches 16 64 128
  python3 scripts/bench/bench_train.py hardware --net resnet50 --input-size 128 --peer-batches 16 64
  python3 scripts/bench/bench_train.py statistical --work /tmp/bench [--precision bf16] [--resume]
  python3 scripts/bench/bench_train.py statistical --work /tmp/bench --dry-run
  python3 scripts/bench/bench_train.py compare --work /tmp/bench --seconds 150 --sweep-seconds 45
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peer"))  # peer, torch_zoo
import bench_nets  # noqa: E402
import peer  # noqa: E402
import tta  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PEER = r'''
import json, sys, time
import torch, torch.nn.functional as F
spec = json.loads(sys.argv[1])
torch.set_num_threads(spec["threads"])
from torch_modes import autocast, prepare, timed
from torch_zoo import param_count, twin
if spec["imagenet"]:
    from torch_imagenette import train_loader
    loader = train_loader(spec["folder"], spec["shape"][-1], spec["batch"], spec["workers"])
else:
    from torch_cifar import train_loader
    loader = train_loader(spec["folder"], spec["work"], spec["batch"], spec["workers"],
                          spec["augment"])
model = twin(spec["net"], spec["classes"])
print(json.dumps({"threads": torch.get_num_threads(), "workers": spec["workers"],
                  "params": param_count(model)}), flush=True)
opt = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
model, layout = prepare(model, spec["peer_mode"])

def step(x, y):
    with autocast(spec["precision"]):
        loss = F.cross_entropy(model(layout(x)), y)
    opt.zero_grad(); loss.backward(); opt.step()

# torch.compile compiles on its first step: that step is timed apart and kept out of the rates.
if spec["peer_mode"] == "compile":
    x, y = next(iter(loader))
    print(json.dumps({"compile_s": timed(lambda: step(x, y))}), flush=True)
log, images, start = [], 0, time.perf_counter()
while True:
    for x, y in loader:
        step(x, y)
        images += len(y)
        log.append((time.perf_counter() - start, images))
        if log[-1][0] >= spec["seconds"]:
            print(json.dumps({"log": log, "input": list(x.shape[1:])})); sys.exit(0)
'''


SAMPLE = os.path.join(ROOT, "data", "samples", "cifar10")


def prepare(work, folder=None, data=None):
    """JPEG folders (`folder`, or the full CIFAR-10 from its archive in the data folder,
    `data`: --data-dir) and raw-pixel Crossbow LMDBs made from them in `work` (once)."""
    from crossbow import archives, convert
    if folder is None:
        folder = archives.extract("cifar10", work, data)
    dbs = {}
    for split in ("train", "test"):
        dbs[split] = os.path.join(work, f"cifar10_{split}_lmdb")
        if not os.path.isdir(dbs[split]):
            convert.image_folders(os.path.join(folder, split) + "/", dbs[split], encoded=False)
    return folder, dbs


def prepare_imagenet(work, folder=None, data=None):
    """The JPEG folder (with train/) and its encoded training LMDB: `folder`'s converted into
    `work` (once), or Imagenette's from the data folder (`data`: --data-dir), made once by
    crossbow.reproduce in its cache (the data `crossbow reproduce` trains on)."""
    from crossbow import archives, convert, reproduce
    if folder is None:
        cache = reproduce.cache_dir()
        train, test = reproduce.prepare("imagenette", data, cache)
        return os.path.join(cache, archives.DATASETS["imagenette"].folder), {"train": train,
                                                                             "test": test}
    db = os.path.join(work, os.path.basename(os.path.normpath(folder)) + "_encoded_train_lmdb")
    if not os.path.isdir(db):
        convert.image_folders(os.path.join(folder, "train") + "/", db, encoded=True)
    return folder, {"train": db}


def rates(log, measured_from, window_s):
    """The one measurement rule of both sides. `log`: (seconds, cumulative images) points from
    the start of the run; `measured_from`: the index of the first point of the measured phase.
    Returns (steady, overall): the median rate of window_s-second windows over the second half
    of the measured phase, and images / seconds over the whole run."""
    t_end, n_end = log[-1]
    overall = n_end / t_end
    t0 = log[measured_from][0]
    half = t0 + (t_end - t0) / 2
    points = [p for p in log[measured_from:] if p[0] >= half]
    if len(points) < 2:  # too short a run for halves: the whole measured phase
        points = log[measured_from:]
    if len(points) < 2:
        return overall, overall
    windows, begin = [], points[0]
    for p in points[1:]:
        if p[0] - begin[0] >= window_s:
            windows.append((p[1] - begin[1]) / (p[0] - begin[0]))
            begin = p
    steady = statistics.median(windows) if windows else (
        (points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0]))
    return steady, overall


def crossbow_log(metrics, batch):
    """(seconds, images since the first record) from a metrics file. Its records begin after
    autotuning, so the whole log is the measured phase; images count batch x learners."""
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    log, images = [], 0
    for before, r in zip([None] + records, records):
        if before is not None:
            images += (r["iteration"] - before["iteration"]) * batch * r["learners_per_device"]
        log.append((r["time"], images))
    return log


def peer_rates(args, net, folder, batch, mode):
    """(steady, overall) images/s of one run of the peer, its twin checked against `net`."""
    spec = dict(folder=folder, batch=batch, seconds=args.seconds, peer_mode=mode, net=net["net"],
                classes=net["classes"], shape=net["shape"], imagenet=net["imagenet"])
    about, lines = peer.run(args, ["-c", PEER], spec,
                            {"peer": "hardware", "batch": batch, "peer_mode": mode})
    bench_nets.check_params(net, about["params"], "torch", lines[-1]["input"])
    return rates(lines[-1]["log"], 0, args.window)


def crossbow_run(args, net, dbs, metrics, **budget):
    """One SMA run of Crossbow at batch 16 with `budget`'s learners and stop options: its
    result, the net's parameter count and input shape checked against `net`."""
    import crossbow
    trainer = crossbow.Trainer(
        net=net["net"], input_size=net["input_size"], num_classes=net["classes"],
        train_db=dbs["train"], batch_size=16, sync="sma", lr=0.1, workers=args.workers,
        metrics=metrics, log_every=10, precision=args.precision, progress=False, **budget)
    built = trainer.builder
    bench_nets.check_params(net, built.num_params(), "crossbow",
                            built.shapes[built.input_name][1:])
    return trainer.fit(), list(built.shapes[built.input_name][1:])


def searched_learners(args, net, dbs):
    """The autotuner's learner count, from a run of the search alone before the rounds
    (autotune_only): a run's time limit counts the autotuner's trials, so the rounds train
    with the count fixed and measure all their --seconds."""
    result, shape = crossbow_run(args, net, dbs, os.path.join(args.work, "search.jsonl"),
                                 learners="auto", autotune_only=True)
    print(json.dumps({"search": result["autotune"], "learners": result["learners_per_device"],
                      "input": shape}), flush=True)
    return tta.chosen_learners(result)


def hardware(args, net, folder, dbs):
    peers = [(b, m) for b in args.peer_batches for m in args.modes]
    rows = {name: {"steady": [], "overall": []}
            for name in ["crossbow_b16"] + [f"torch_b{b}_{m}" for b, m in peers]}
    learners = searched_learners(args, net, dbs) if args.learners == "auto" else args.learners
    for r in range(args.rounds):
        metrics = os.path.join(args.work, f"hw{r}.jsonl")
        result, shape = crossbow_run(args, net, dbs, metrics, learners=learners,
                                     time_limit=args.seconds)
        print(json.dumps({"round": r, "learners": result["learners_per_device"],
                          "input": shape}), flush=True)
        log = crossbow_log(metrics, 16)
        if not log:
            raise SystemExit(f"bench_train: Crossbow logged no metrics record (one each 10 "
                             f"iterations) in --seconds {args.seconds:g}: give it more")
        ours = rates(log, 0, args.window)[0], result["images_per_s"]
        for name, (steady, overall) in [("crossbow_b16", ours)] + [
                (f"torch_b{b}_{m}", peer_rates(args, net, folder, b, m)) for b, m in peers]:
            rows[name]["steady"].append(steady)
            rows[name]["overall"].append(overall)
        print(json.dumps({"round": r, **{k: {s: v[s][-1] for s in v} for k, v in rows.items()}}),
              flush=True)
    med = {k: {s: statistics.median(v[s]) for s in v} for k, v in rows.items()}
    print(f"{net['net']} at {net['shape'][-1]} px, {net['data']}, {args.precision}, medians of {args.rounds} interleaved rounds of "
          f"{args.seconds} s;"
          f" steady: median of {args.window} s windows over the second half of the measured "
          "phase; overall: the whole run (the peer's compile not included); ratio: Crossbow's images/s over the peer's")
    cb = med["crossbow_b16"]
    print(f"  Crossbow SMA batch 16, {result['learners_per_device']} learners: steady "
          f"{cb['steady']:8.1f}, overall {cb['overall']:8.1f} images/s")
    for b, m in peers:
        pt = med[f"torch_b{b}_{m}"]
        print(f"  PyTorch {m} batch {b} ({args.threads} threads): steady {pt['steady']:8.1f}, "
              f"overall {pt['overall']:8.1f} images/s (Crossbow is "
              f"{cb['steady'] / pt['steady']:.2f}x steady, {cb['overall'] / pt['overall']:.2f}x "
              "overall)")
    for kind in ("steady", "overall"):
        print(json.dumps({"bench": "train_hardware", "net": net["net"],
                          "input_size": net["shape"][-1], "classes": net["classes"],
                          "data": net["data"], "rate": kind, "precision": args.precision,
                          "crossbow": cb[kind],
                          **peer.ratios(cb[kind], {f"b{b}_{m}": med[f"torch_b{b}_{m}"][kind]
                                                   for b, m in peers})}))


# compare: each algorithm's learners and learning rate. Two learners is what the autotuner
# picks on a two-core machine; S-SGD's two learners make one batch of 32, so it gets twice the
# rate; SGD is one learner.
COMPARED = {"sma": (2, 0.025), "easgd": (2, 0.025), "localsgd": (2, 0.025),
            "diloco": (2, 0.025), "ssgd": (2, 0.05), "sgd": (1, 0.025)}
# The periods H (iterations) the sweep tries; S-SGD and SGD step together every iteration.
PERIODS = {"sma": (1, 4), "easgd": (1, 4, 16), "localsgd": (4, 16, 64), "diloco": (4, 16, 64)}


def compare_run(args, dbs, sync, period, seconds, metrics):
    """One algorithm for `seconds` of training: the trainer's result, or None if it diverged."""
    import crossbow
    learners, lr = COMPARED[sync]
    if os.path.exists(metrics):
        os.remove(metrics)
    try:
        return crossbow.Trainer(net="resnet20", train_db=dbs["train"], test_db=dbs["test"],
                                batch_size=16, learners=learners, sync=sync, sync_period=period,
                                lr=lr, weight_decay=1e-4, time_limit=seconds,
                                eval_every=25000 // (16 * learners), metrics=metrics,
                                workers=args.workers, progress=False).fit()
    except RuntimeError as e:  # a non-finite loss stops training: that H diverged
        print(json.dumps({"sync": sync, "sync_period": period, "diverged": str(e)}), flush=True)
        return None


def compare(args, folder, dbs):
    from crossbow.plot import plot
    paths, labels, rows = [], [], []
    for sync in args.syncs:
        period, tried = 1, {}
        for h in PERIODS.get(sync, ()):
            result = compare_run(args, dbs, sync, h, args.sweep_seconds,
                                 os.path.join(args.work, f"sweep_{sync}_{h}.jsonl"))
            tried[h] = result["accuracy"] if result else None
            print(json.dumps({"sync": sync, "sync_period": h, "sweep_accuracy": tried[h]}),
                  flush=True)
        if tried:
            finite = {h: a for h, a in tried.items() if a is not None}
            if not finite:
                rows.append({"sync": sync, "sweep": tried, "diverged": True})
                continue
            period = max(finite, key=finite.get)
        metrics = os.path.join(args.work, f"compare_{sync}.jsonl")
        result = compare_run(args, dbs, sync, period, args.seconds, metrics)
        if result is None:
            rows.append({"sync": sync, "sweep": tried, "sync_period": period, "diverged": True})
            continue
        row = {"sync": sync, "sync_period": period, "sweep": tried,
               "learners": result["learners_per_device"], "lr": COMPARED[sync][1],
               "images_per_s": result["images_per_s"], "epochs": result["epochs"],
               "accuracy": result["accuracy"], "best": result["best_accuracy"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        paths.append(metrics)
        labels.append(f"{sync} H={period}, {row['learners']} learner(s)")
    print(f"ResNet-20, CIFAR-10, batch 16, {args.seconds:.0f} s of training each; H from "
          f"{args.sweep_seconds:.0f} s runs")
    print("| sync | H (sweep: accuracy) | learners | lr | images/s | epochs | test accuracy |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        sweep = ", ".join(f"{h}: {'diverged' if a is None else f'{100 * a:.1f}%'}"
                          for h, a in r["sweep"].items())
        if r.get("diverged"):
            print(f"| {r['sync']} | {sweep} | | | | | diverged |")
            continue
        print(f"| {r['sync']} | {r['sync_period']}{f' ({sweep})' if sweep else ''} | "
              f"{r['learners']} | {r['lr']} | {r['images_per_s']:.0f} | {r['epochs']:.2f} | "
              f"{100 * r['accuracy']:.1f}% |")
    print("wrote", plot(paths, args.output, labels))


def seconds(text):
    """A duration flag's value: a finite number of seconds > 0."""
    value = float(text)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text}")
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("hardware", "statistical", "compare"))
    ap.add_argument("--work", default="/tmp/crossbow_bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=seconds, default=60)
    ap.add_argument("--output", default=os.path.join(ROOT, "docs", "sync_comparison.png"))
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="the peer's threads")
    peer.add_argument(ap)
    ap.add_argument("--modes", nargs="+", choices=peer.MODES,
                    help="the peer's configurations (hardware, statistical; default: all, "
                         "eager alone in a dry run)")
    ap.add_argument("--peer-batches", type=int, nargs="+", default=[16, 32],
                    help="hardware: the peer's batch sizes")
    ap.add_argument("--syncs", nargs="+", choices=tuple(COMPARED), default=list(COMPARED),
                    help="compare: the algorithms")
    ap.add_argument("--sweep-seconds", type=float, default=45,
                    help="compare: seconds of each run of the sweep over H")
    ap.add_argument("--workers", type=int, default=2, help="loader workers, both sides")
    peer.add_loader_arguments(ap)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="hardware, statistical: both sides (Crossbow's --precision; the peer's "
                         "bf16 is torch.autocast around forward and loss); bf16 needs a CPU "
                         "with AVX512-BF16 or AMX")
    ap.add_argument("--window", type=float, default=5.0, help="seconds per measured window")
    bench_nets.add_arguments(ap)
    ap.add_argument("--learners", default="auto", type=lambda v: v if v == "auto" else int(v),
                    help="hardware: Crossbow's learners (default auto: the autotuner's choice, "
                         "searched once before the rounds)")
    ap.add_argument("--images", help="hardware: a JPEG folder (train/, one class per "
                                     "sub-folder) in place of the net's data set")
    tta.add_arguments(ap)
    from crossbow import archives
    archives.add_argument(ap)
    args = ap.parse_args()
    if args.precision == "bf16":
        peer.require_crossbow_bf16("bench_train", "--precision")
    if args.mode != "hardware" and (args.net != "resnet32" or args.input_size or args.images):
        ap.error(f"--net, --input-size and --images are for hardware; {args.mode} runs its own "
                 "nets on CIFAR-10")
    if args.mode == "statistical":
        chosen = tta.settle(args)
        os.makedirs(args.work, exist_ok=True)
        tta.statistical(args, chosen, *prepare(args.work, SAMPLE if args.dry_run else None,
                                               args.data_dir))
        return
    if args.mode == "compare":
        os.makedirs(args.work, exist_ok=True)
        compare(args, *prepare(args.work, None, args.data_dir))
        return
    try:
        net = hardware_net(args)
    except ValueError as e:
        ap.error(str(e))
    if net["imagenet"] and args.peer_augment != "sample":
        ap.error(f"--peer-augment {args.peer_augment} is for the CIFAR nets; {args.net}'s peer "
                 "augments each image (scripts/peer/torch_imagenette.py)")
    os.makedirs(args.work, exist_ok=True)
    info = peer.describe(args.peer_python)
    args.modes, notes = peer.modes(info, args.modes or peer.MODES)
    print(peer.banner(info), *notes, sep="\n", flush=True)
    folder, dbs = (prepare_imagenet if net["imagenet"] else prepare)(args.work, args.images,
                                                                     args.data_dir)
    hardware(args, net, folder, dbs)


def hardware_net(args):
    """bench_nets.resolve's net, with its data set: CIFAR-10 for the CIFAR nets, Imagenette for
    the ImageNet nets (their presets); a ValueError for a net of another preset."""
    from crossbow import nets
    from crossbow.trainer import checked_options
    net = bench_nets.resolve(args.net, args.classes, args.input_size)
    checked_options(dict(input_size=args.input_size, time_limit=args.seconds))  # the range
    preset = nets.PRESETS[args.net]
    if preset not in ("cifar", "imagenet"):
        raise ValueError(f"bench_train hardware runs the nets of preset cifar (on CIFAR-10) and "
                         f"imagenet (on Imagenette); {args.net}'s preset is {preset}")
    data = args.images or ("Imagenette" if preset == "imagenet" else "CIFAR-10")
    return dict(net, imagenet=preset == "imagenet", data=data)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except FileNotFoundError as e:  # an archive missing from the data folder
        sys.exit(f"bench_train: {e}")
