"""The published version of `crossbow reproduce fastai-imagenette-5ep` (and -20ep) in PyTorch on
the same JPEGs, for the ceiling of the net and data beside Crossbow's runs (docs/reproduction.md):
the zoo net's twin (torch_zoo.py), RAdam with decoupled weight decay off biases and batch norms
inside Lookahead, flat then cosine per iteration, label smoothing, random-resized crops with
mirroring, and the `imagenet` preset's validation crop (shorter side to size / 0.875, centre).
Every number comes from the recipe (python/crossbow/recipes.py), so both sides train the same
one. Runs under the peer's Python (needs torch and torchvision):

    python torch_fastai_imagenette.py --images DIR [--recipe fastai-imagenette-5ep]
        [--epochs E] [--net NET] [--precision bf16|fp32] [--seed 0] [--threads 2]
        [--workers 2] [--checkpoint FILE]

DIR holds train/ and val/ with a sub-folder per class (imagenette2-160 unpacked). Prints a JSON
line per epoch: epoch, time (training seconds), accuracy, loss (training, mean over the epoch),
images_per_s, lr. With --checkpoint the run saves model, optimiser and evaluations after each
epoch (written whole, then renamed) and goes on from the file where it finds one.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torchvision import datasets, transforms as T

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

from crossbow.recipes import RECIPES  # noqa: E402 (pure Python: no extension needed)
from torch_cifar import test_accuracy  # noqa: E402 (Crossbow's scoring rule)
from torch_imagenette import MEAN, STD, train_loader  # noqa: E402
from torch_modes import autocast, prepare  # noqa: E402
from torch_zoo import twin  # noqa: E402


class Lookahead:
    """Zhang et al. 2019: every k steps of the inner optimiser the slow weights move alpha of the
    way to the fast ones, and the fast weights restart from them."""

    def __init__(self, inner, k, alpha):
        self.inner, self.k, self.alpha, self.steps = inner, k, alpha, 0
        self.slow = [p.detach().clone() for g in inner.param_groups for p in g["params"]]

    def step(self):
        self.inner.step()
        self.steps += 1
        if self.steps % self.k:
            return
        with torch.no_grad():
            fast = [p for g in self.inner.param_groups for p in g["params"]]
            for s, p in zip(self.slow, fast):
                s.add_(p - s, alpha=self.alpha)
                p.copy_(s)

    def state_dict(self):
        return dict(inner=self.inner.state_dict(), slow=self.slow, steps=self.steps)

    def load_state_dict(self, state):
        self.inner.load_state_dict(state["inner"])
        self.slow, self.steps = state["slow"], state["steps"]


def flat_cosine(base, flat, t):
    """The rate at fraction t of the run: `base` for the fraction `flat`, then cosine to 0."""
    if t < flat:
        return base
    return base * 0.5 * (1 + math.cos(math.pi * min(1.0, (t - flat) / (1 - flat))))


def test_loader(folder, size, workers):
    """`folder`/val with the `imagenet` preset's crop: shorter side to size / 0.875, centre."""
    crop = T.Compose([T.Resize(round(size / 0.875)), T.CenterCrop(size), T.ToTensor(),
                      T.Normalize(MEAN, STD)])
    return torch.utils.data.DataLoader(datasets.ImageFolder(os.path.join(folder, "val"), crop),
                                       100, num_workers=workers)


def optimiser(net, o):
    """RAdam (decoupled weight decay on the weights of rank > 1 only when bias_decay is off)
    inside Lookahead, as the recipe's `--optimizer radam --lookahead-k K`."""
    if o["optimizer"] != "radam" or not o.get("lookahead_k"):
        raise ValueError(f"this script trains RAdam + Lookahead, not {o['optimizer']}")
    decayed = [p for p in net.parameters() if p.ndim > 1 or o["bias_decay"]]
    others = [p for p in net.parameters() if not (p.ndim > 1 or o["bias_decay"])]
    inner = torch.optim.RAdam(
        [dict(params=decayed, weight_decay=o["weight_decay"]),
         dict(params=others, weight_decay=0.0)],
        lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"], decoupled_weight_decay=True)
    return Lookahead(inner, o["lookahead_k"], o["lookahead_alpha"])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", required=True, help="folder with train/ and val/")
    p.add_argument("--recipe", default="fastai-imagenette-5ep", choices=[
        name for name in RECIPES if name.startswith("fastai-")])
    p.add_argument("--epochs", type=int, help="default: the recipe's")
    p.add_argument("--net", help="a zoo net with a twin in place of the recipe's")
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp32"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--checkpoint")
    args = p.parse_args(argv)
    recipe = RECIPES[args.recipe]
    epochs = args.epochs or recipe.epochs
    o = recipe.options("published", epochs)
    o["net"] = args.net or o["net"]
    # One process takes the whole batch that the published version splits over its learners.
    batch = o["batch_size"] * int(o["learners"])
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    net, layout = prepare(twin(o["net"], o["num_classes"]), "channels_last")
    opt = optimiser(net, o)
    train = train_loader(args.images, o["input_size"], batch, args.workers, o["min_crop_area"])
    test = test_loader(args.images, o["input_size"], args.workers)
    done = []
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, weights_only=False)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        done = state["evaluations"]
        for line in done:
            print(json.dumps(line), flush=True)
    print(json.dumps({"recipe": args.recipe, "net": o["net"], "batch": batch, "epochs": epochs,
                      "options": o, "torch": torch.__version__,
                      "threads": torch.get_num_threads()}), flush=True)
    steps = epochs * len(train)
    elapsed = done[-1]["time"] if done else 0.0
    for epoch in range(len(done), epochs):
        start, loss_sum = time.perf_counter(), 0.0
        for i, (x, y) in enumerate(train):
            lr = flat_cosine(o["lr"], o["flat_fraction"], (epoch * len(train) + i) / steps)
            for group in opt.inner.param_groups:
                group["lr"] = lr
            with autocast(args.precision):
                out = net(layout(x))
                loss = F.cross_entropy(out.float(), y, label_smoothing=o["label_smoothing"])
            opt.inner.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.item()
        took = time.perf_counter() - start
        elapsed += took
        done.append({"epoch": epoch + 1, "time": elapsed,
                     "accuracy": test_accuracy(net, layout, test, autocast(args.precision)),
                     "loss": loss_sum / len(train),
                     "images_per_s": len(train) * batch / took, "lr": lr})
        if args.checkpoint:
            partial = args.checkpoint + ".partial"
            torch.save(dict(model=net.state_dict(), optimizer=opt.state_dict(),
                            evaluations=done), partial)
            os.replace(partial, args.checkpoint)
        print(json.dumps(done[-1]), flush=True)


if __name__ == "__main__":
    main()
