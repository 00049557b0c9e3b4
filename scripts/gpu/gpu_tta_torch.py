#!/usr/bin/env python3
"""PyTorch's side of the time-to-accuracy comparison (scripts/gpu/gpu_tta.sh): the CIFAR ResNet of
python/crossbow/torch_resnet.py trained on CIFAR-10's binary records (the files that
`crossbow_convert cifar10` turns into Crossbow's LMDBs: the same pixels on both sides), held on
the device as uint8 and augmented there (pad 4, random 32x32 crop, mirror, normalise, as
Crossbow's loader), with SGD (momentum 0.9, weight decay 1e-4) in one of two recipes over
--epochs, the He schedule's drops (/10) at the same fractions (1/2 and 3/4) of the run:

  he      He et al. 2016: lr 0.1 at batch 128, no warm-up;
  goyal   Goyal et al. 2017's linear scaling: lr 0.1 x batch / 128, warmed up linearly from 0.1
          over 5/90 of the run (their 5 of 90 epochs).

--mode says how a step runs (eager, channels_last, compile, or graph: the forward and backward
captured as CUDA graphs by torch.cuda.make_graphed_callables, GPUs only); --precision bf16 puts
the forward pass and loss under torch.autocast. Training stops after --epochs or --time-limit
seconds of training, whichever comes first. The clock runs while training (compiling and
capturing included: they are part of the time to accuracy) and stops while the test set is
scored after every epoch and at the end. Writes one JSON line per evaluation (epoch, time,
accuracy, lr, images) to --output, after a first line with the settings and versions.

    python3 scripts/gpu/gpu_tta_torch.py --train train.bin --test test.bin --recipe goyal --batch 512 \
        --mode graph --epochs 60 --time-limit 240 --output torch_goyal_b512.jsonl
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "scripts", "peer"), os.path.join(ROOT, "python")]

from torch_cifar import MEAN, STD, hits  # noqa: E402
from torch_modes import prepare  # noqa: E402
from crossbow.torch_resnet import cifar_resnet  # noqa: E402

RECORD = 1 + 3 * 32 * 32  # a label byte, then the red, green and blue planes
DROPS = (0.5, 0.75)
GOYAL_WARMUP = 5 / 90


def records(path, device):
    """Images (uint8 NCHW) and labels (int64) of a CIFAR-10 binary file, on `device`."""
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size == 0 or raw.size % RECORD:
        raise ValueError(f"{path}: {raw.size} bytes is not a whole number of {RECORD}-byte "
                         "CIFAR-10 records")
    raw = raw.reshape(-1, RECORD)
    x = torch.from_numpy(raw[:, 1:].reshape(-1, 3, 32, 32).copy()).to(device)
    return x, torch.from_numpy(raw[:, 0].astype(np.int64)).to(device)


def normalise(x):
    return (x.float() / 255 - MEAN.to(x.device)) / STD.to(x.device)


def augment(x):
    """Pad 4 (zeros), a random 32x32 crop and a random mirror per image, then normalise."""
    n = x.shape[0]
    padded = F.pad(x, (4, 4, 4, 4))
    offsets = torch.randint(0, 9, (2, n), device=x.device)
    span = torch.arange(32, device=x.device)
    rows = (offsets[0][:, None] + span)[:, None, :, None]
    cols = (offsets[1][:, None] + span)[:, None, None, :]
    mirror = torch.rand(n, device=x.device) < 0.5
    cols = torch.where(mirror[:, None, None, None], cols.flip(-1), cols)
    crop = padded[torch.arange(n, device=x.device)[:, None, None, None],
                  torch.arange(3, device=x.device)[None, :, None, None], rows, cols]
    return normalise(crop)


def learning_rate(recipe, batch, position, epochs):
    """The rate at `position` (epochs done, fractional) of a run of `epochs`."""
    if recipe == "he":
        peak, warmup = 0.1, 0.0
    else:
        peak, warmup = 0.1 * batch / 128, GOYAL_WARMUP * epochs
    if position < warmup:
        return 0.1 + (peak - 0.1) * position / warmup
    return peak * 0.1 ** sum(position >= f * epochs for f in DROPS)


def score(model, layout, x, y, half):
    model.eval()
    correct = 0
    with torch.no_grad(), torch.autocast(x.device.type, dtype=half, enabled=half is not None):
        for i in range(0, len(y), 1000):
            correct += hits(model(layout(normalise(x[i:i + 1000]))).float(), y[i:i + 1000])
    model.train()
    return correct / len(y)


def graphed(model, batch, device, half):
    """The model's forward and backward as CUDA graphs for batches of `batch` (eval unchanged)."""
    if device.type != "cuda":
        raise ValueError("mode graph needs a GPU (CUDA graphs)")
    sample = torch.randn(batch, 3, 32, 32, device=device)
    with torch.autocast("cuda", dtype=half, enabled=half is not None, cache_enabled=False):
        return torch.cuda.make_graphed_callables(model, (sample,))


def train(args):
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    train_x, train_y = records(args.train, device)
    test_x, test_y = records(args.test, device)
    if len(train_y) < args.batch:
        raise ValueError(f"--batch {args.batch} is more than the {len(train_y)} training images")
    half = {"bf16": torch.bfloat16, "fp32": None}[args.precision]
    model = cifar_resnet(args.depth).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    start = time.perf_counter()  # compiling and capturing count as training time
    if args.mode == "graph":
        forward, layout = graphed(model, args.batch, device, half), (lambda x: x)
    else:
        forward, layout = prepare(model, args.mode)
    per_epoch = len(train_y) // args.batch
    out = open(args.output, "w")
    meta = {"side": "pytorch", "recipe": args.recipe, "batch_size": args.batch,
            "mode": args.mode, "precision": args.precision, "epochs": args.epochs,
            "time_limit": args.time_limit, "train_images": len(train_y),
            "test_images": len(test_y), "torch": torch.__version__, "device": str(device),
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None}
    out.write(json.dumps(meta) + "\n")

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    trained, iteration, images = 0.0, 0, 0
    stop = False
    while not stop:
        order = torch.randperm(len(train_y), device=device)
        for i in range(per_epoch):
            position = iteration / per_epoch
            lr = learning_rate(args.recipe, args.batch, position, args.epochs)
            for group in opt.param_groups:
                group["lr"] = lr
            idx = order[i * args.batch:(i + 1) * args.batch]
            with torch.autocast(device.type, dtype=half, enabled=half is not None,
                                cache_enabled=args.mode != "graph"):
                loss = F.cross_entropy(forward(layout(augment(train_x[idx]))), train_y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            iteration, images = iteration + 1, images + args.batch
            clock = trained + time.perf_counter() - start
            stop = iteration >= args.epochs * per_epoch or clock >= args.time_limit
            if stop:
                break
        sync()
        trained += time.perf_counter() - start
        accuracy = score(model, layout, test_x, test_y, half)
        out.write(json.dumps({"epoch": round(iteration / per_epoch, 4), "time": trained,
                              "accuracy": accuracy, "lr": lr, "images": images}) + "\n")
        out.flush()
        start = time.perf_counter()
    out.close()
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True, help="CIFAR-10 binary file to train on")
    p.add_argument("--test", required=True, help="CIFAR-10 binary file to score")
    p.add_argument("--recipe", choices=["he", "goyal"], required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--mode", choices=["eager", "channels_last", "compile", "graph"],
                   default="eager")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--epochs", type=float, required=True)
    p.add_argument("--time-limit", type=float, required=True, help="seconds of training")
    p.add_argument("--depth", type=int, default=32)
    p.add_argument("--device", default="cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", required=True, help="JSON lines file to write")
    args = p.parse_args(argv)
    if args.batch <= 0 or args.epochs <= 0 or args.time_limit <= 0:
        p.error("--batch, --epochs and --time-limit must be > 0")
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
