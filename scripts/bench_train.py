#!/usr/bin/env python3
"""Training benchmarks of issue 4, against PyTorch on the same machine in the same run.

  hardware    ResNet-32 images/s on the CIFAR-10 LMDB at batch 16 with auto-tuned learners
              (SMA), against PyTorch in one process using all cores at batch 16 and 32;
              interleaved rounds, medians reported.
  statistical time to 80% test accuracy on the full CIFAR-10: ResNet-20 with SMA at batch 16
              (lr 0.025, divided by 10 after epoch 4) against PyTorch S-SGD (batch 128, lr 0.1
              divided by 10 after epoch 8), momentum 0.9, weight decay 1e-4: the recipes of
              ../shared/REFERENCE.md. About half an hour on this machine.
  compare     SMA, S-SGD and SGD side by side: ResNet-20 at batch 16 on the full CIFAR-10 for
              the same training time each (2, 2 and 1 learners), test accuracy every half
              epoch; one PNG
              (docs/sync_comparison.png by default).

The PyTorch peer runs under /usr/bin/python3 (python3-torch) with OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE unset; it reads the same JPEGs (torchvision ImageFolder) as Crossbow's LMDB
was made from. LMDBs are made once with `crossbow convert imageset --by_folder`.

  python3 scripts/bench_train.py hardware --work /tmp/bench --rounds 3 --seconds 60
  python3 scripts/bench_train.py statistical --work /tmp/bench
  python3 scripts/bench_train.py compare --work /tmp/bench --seconds 240
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CIFAR_TAR = os.path.join(ROOT, "..", "shared", "data", "cifar10-jpg.tar.gz")

PEER = r'''
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
import torchvision, torchvision.transforms as T
mode, folder, batch, seconds, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
torch.set_num_threads(torch.get_num_threads())

from torch_resnet import cifar_resnet as resnet

norm = T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
train = torchvision.datasets.ImageFolder(folder + "/train", T.Compose([T.RandomCrop(32, 4), T.RandomHorizontalFlip(), T.ToTensor(), norm]))
loader = torch.utils.data.DataLoader(train, batch, shuffle=True, drop_last=True, num_workers=2, persistent_workers=True)
model = resnet(32 if mode == "hardware" else 20)
opt = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
if mode == "hardware":
    images, start = 0, None
    while True:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y); opt.zero_grad(); loss.backward(); opt.step()
            if start is None: start = time.perf_counter(); continue  # first batch: warm-up
            images += len(y)
            if time.perf_counter() - start >= seconds:
                print(json.dumps({"images_per_s": images / (time.perf_counter() - start)})); sys.exit(0)
test = torch.utils.data.DataLoader(torchvision.datasets.ImageFolder(folder + "/test", T.Compose([T.ToTensor(), norm])), 500)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, [8])
elapsed, epoch = 0.0, 0
while elapsed < seconds and epoch < 20:
    model.train(); start = time.perf_counter()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y); opt.zero_grad(); loss.backward(); opt.step()
    elapsed += time.perf_counter() - start; sched.step(); epoch += 1
    model.eval(); hits = n = 0
    with torch.no_grad():
        for x, y in test: hits += (model(x).argmax(1) == y).sum().item(); n += len(y)
    print(json.dumps({"epoch": epoch, "time": elapsed, "accuracy": hits / n}), flush=True)
    if hits / n >= target:
        break
'''


def prepare(work):
    """JPEG folders from the shared tarball, and Crossbow LMDBs made from them (once)."""
    folder = os.path.join(work, "cifar10-jpg")
    if not os.path.isdir(folder):
        with tarfile.open(CIFAR_TAR) as tar:
            tar.extractall(folder)
    tops = [d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))]
    if not os.path.isdir(os.path.join(folder, "train")) and len(tops) == 1:
        folder = os.path.join(folder, tops[0])
    from crossbow import convert
    dbs = {}
    for split in ("train", "test"):
        dbs[split] = os.path.join(work, f"cifar10_{split}_lmdb")
        if not os.path.isdir(dbs[split]):
            convert.image_folders(os.path.join(folder, split) + "/", dbs[split])
    return folder, dbs


def peer(mode, folder, batch, seconds, target=0.8):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["PYTHONPATH"] = os.path.join(ROOT, "scripts")  # torch_resnet
    out = subprocess.run(["/usr/bin/python3", "-c", PEER, mode, folder, str(batch), str(seconds),
                          str(target)], env=env, check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def crossbow_rate(dbs, seconds, metrics):
    import crossbow
    result = crossbow.Trainer(net="resnet32", train_db=dbs["train"], batch_size=16,
                              learners="auto", sync="sma", time_limit=seconds, lr=0.1,
                              metrics=metrics, log_every=10, progress=False).fit()
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    k = result["learners_per_device"]
    steady = [r["images_per_s"] for r in records if r["learners_per_device"] == k]
    return statistics.median(steady[len(steady) // 2:] or steady), k


def hardware(args, folder, dbs):
    rows = {"crossbow_b16": [], "torch_b16": [], "torch_b32": []}
    learners = None
    for r in range(args.rounds):
        rate, learners = crossbow_rate(dbs, args.seconds, os.path.join(args.work, f"hw{r}.jsonl"))
        rows["crossbow_b16"].append(rate)
        for b in (16, 32):
            rows[f"torch_b{b}"].append(peer("hardware", folder, b, args.seconds)[-1]["images_per_s"])
        print(json.dumps({"round": r, **{k: v[-1] for k, v in rows.items()}}), flush=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"ResNet-32, CIFAR-10, medians of {args.rounds} interleaved rounds of {args.seconds} s")
    print(f"  Crossbow SMA batch 16, {learners} learners: {med['crossbow_b16']:8.1f} images/s")
    for b in (16, 32):
        print(f"  PyTorch batch {b}:                  {med[f'torch_b{b}']:8.1f} images/s "
              f"(Crossbow is {med['crossbow_b16'] / med[f'torch_b{b}']:.2f}x)")


def statistical(args, folder, dbs):
    import crossbow
    metrics = os.path.join(args.work, "tta_crossbow.jsonl")
    result = crossbow.Trainer(net="resnet20", train_db=dbs["train"], test_db=dbs["test"],
                              batch_size=16, learners="auto", sync="sma", epochs=20, lr=0.025,
                              lr_policy="multistep", steps=[4], weight_decay=1e-4,
                              target_accuracy=0.8, metrics=metrics,
                              checkpoint_dir=os.path.join(args.work, "tta_ckpt"),
                              resume=True).fit()
    print(json.dumps({"crossbow_time_to_80": result["time_to_accuracy_s"],
                      "learners": result["learners_per_device"]}), flush=True)
    torch_log = peer("statistical", folder, 128, 1e9)
    reached = [r for r in torch_log if r["accuracy"] >= 0.8]
    print(json.dumps({"torch_time_to_80": reached[0]["time"] if reached else None}))


def compare(args, folder, dbs):
    import crossbow
    from crossbow.plot import plot
    # Two learners is what the autotuner picks on this two-core machine; S-SGD's two learners
    # make one batch of 32, so it gets twice the learning rate.
    runs = (("sma", 2, 0.025), ("ssgd", 2, 0.05), ("sgd", 1, 0.025))
    paths, labels = [], []
    for sync, learners, lr in runs:
        metrics = os.path.join(args.work, f"compare_{sync}.jsonl")
        if os.path.exists(metrics):
            os.remove(metrics)
        result = crossbow.Trainer(net="resnet20", train_db=dbs["train"], test_db=dbs["test"],
                                  batch_size=16, learners=learners, sync=sync, lr=lr,
                                  weight_decay=1e-4, time_limit=args.seconds,
                                  eval_every=25000 // (16 * learners), metrics=metrics,
                                  progress=False).fit()
        label = f"{sync.upper()} b16, {result['learners_per_device']} learner(s), lr {lr}"
        paths.append(metrics)
        labels.append(label)
        print(json.dumps({"sync": sync, "learners": result["learners_per_device"],
                          "images_per_s": result["images_per_s"],
                          "accuracy": result["accuracy"], "best": result["best_accuracy"]}),
              flush=True)
    print("wrote", plot(paths, args.output, labels))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("hardware", "statistical", "compare"))
    ap.add_argument("--work", default="/tmp/crossbow_bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--output", default=os.path.join(ROOT, "docs", "sync_comparison.png"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    folder, dbs = prepare(args.work)
    {"hardware": hardware, "statistical": statistical, "compare": compare}[args.mode](
        args, folder, dbs)


if __name__ == "__main__":
    sys.exit(main())
