"""fastai itself as the peer of the Imagenette recipes: fastai's own Learner, xresnet models,
optimisers, schedules and transforms on the imagenette2-160 folders, on this machine's cores.
Nothing is re-implemented here; the one addition is a callback that runs the forward pass under
CPU bf16 autocast (fastai's MixedPrecision targets CUDA). Runs under the peer's Python
(scripts/peer/setup_peer.sh installs fastai):

    python fastai_imagenette.py --images DIR --recipe tutorial|record|record-resize
        [--net xresnet34] [--epochs 5] [--seed 0] [--mode bf16] [--threads 2] [--workers 2]
        [--output FILE.jsonl] [--checkpoint FILE]
    python fastai_imagenette.py --images DIR --recipe R --bench 30 [--modes fp32 ...]

Recipes (the fastai tutorial's and the Imagenette leaderboard's, as fastai writes them):
  tutorial       xresnet34 (or --net xresnet50), Adam, fit_one_cycle(lr 1e-3), batch 64,
                 RandomResizedCrop(128, min_scale=0.35) and FlipItem
  record         xse_resnext50 with Mish and sa=1, ranger(mom 0.95, sqr_mom 0.99, eps 1e-6),
                 fit_flat_cos(lr 8e-3, wd 1e-2), label smoothing, batch 64, the same crops
  record-resize  the record recipe at batch 32 with Resize(128) in place of the crops

Writes JSON lines to stdout (and --output): a header (versions, recipe, mode, threads), then one
line per epoch: epoch, accuracy, top5, train_loss, valid_loss, time (training seconds summed,
evaluation excluded), wall (seconds since the first epoch began), images_per_s (training), lr.
With --checkpoint the model, optimiser and epoch lines are saved after every epoch (written
whole, then renamed) and a run started again goes on from the last complete epoch.
--bench N times N training steps after 3 warm-up steps in each of --modes and prints one line
per mode (median step seconds, images/s), for choosing the fastest configuration.
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import fastai
    import torch
except ImportError as e:
    raise SystemExit(f"fastai_imagenette.py: {e.name} is missing: run it under the peer's Python "
                     "(scripts/peer/setup_peer.sh prints it)") from e
from fastai.callback.core import Callback, CancelFitException
from fastai.callback.progress import ProgressCallback
from fastai.learner import Learner
from fastai.losses import LabelSmoothingCrossEntropy
from fastai.metrics import accuracy, top_k_accuracy
from fastai.optimizer import Adam, ranger
from fastai.torch_core import set_seed
from fastai.vision.all import (CategoryBlock, DataBlock, FlipItem, GrandparentSplitter,
                               ImageBlock, Normalize, RandomResizedCrop, Resize,
                               get_image_files, imagenet_stats, parent_label)
from fastai.vision.models.xresnet import xresnet34, xresnet50, xse_resnext50
from torch.nn import Mish

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
from crossbow.machine import describe  # noqa: E402 (standard library only)

NETS = {"xresnet34": xresnet34, "xresnet50": xresnet50}
MODES = ("fp32", "channels_last", "bf16", "bf16_compile")


def recipe(name, net):
    """(model, Learner keyword arguments, fit method name, fit keyword arguments, item
    transforms, batch) of a recipe, every value as fastai's tutorial or leaderboard sets it."""
    crops = [RandomResizedCrop(128, min_scale=0.35), FlipItem(0.5)]
    if name == "tutorial":
        return (NETS[net](n_out=10), dict(opt_func=Adam), "fit_one_cycle", dict(lr_max=1e-3),
                crops, 64)

    def opt_func(params, lr):
        return ranger(params, lr, mom=0.95, sqr_mom=0.99, eps=1e-6)
    model = xse_resnext50(n_out=10, act_cls=Mish, sa=1)
    learner = dict(opt_func=opt_func, loss_func=LabelSmoothingCrossEntropy())
    fit = dict(lr=8e-3, wd=1e-2)
    if name == "record":
        return model, learner, "fit_flat_cos", fit, crops, 64
    return model, learner, "fit_flat_cos", fit, [Resize(128), FlipItem(0.5)], 32


class CpuAutocast(Callback):
    """The forward pass and the loss under torch.autocast('cpu', bf16); the loss in fp32."""
    order = 10

    def before_batch(self):
        self.context = torch.autocast("cpu", dtype=torch.bfloat16)
        self.context.__enter__()

    def after_pred(self):
        self.learn.pred = self.pred.float()

    def after_loss(self):
        self.context.__exit__(None, None, None)


class ChannelsLastInput(Callback):
    """Each batch's images in channels_last, as the model's weights are."""
    order = 9

    def before_batch(self):
        self.learn.xb = tuple(x.contiguous(memory_format=torch.channels_last) for x in self.xb)


class EpochLog(Callback):
    """One JSON line per epoch from the Recorder's values, with training time alone."""
    order = 60  # after the Recorder (50) has the epoch's values

    def __init__(self, done, emit, checkpoint):
        self.done, self.emit, self.checkpoint = done, emit, checkpoint

    def before_fit(self):
        self.trained = self.done[-1]["time"] if self.done else 0.0
        self.wall0 = time.perf_counter() - (self.done[-1]["wall"] if self.done else 0.0)

    def before_train(self):
        self.train_start, self.items = time.perf_counter(), 0

    def after_batch(self):
        if self.training:
            self.items += self.xb[0].shape[0]

    def after_train(self):
        self.train_seconds = time.perf_counter() - self.train_start
        self.trained += self.train_seconds

    def after_epoch(self):
        if self.epoch < len(self.done):  # skipped on a resume
            return
        values = dict(zip(self.recorder.metric_names[1:-1], self.recorder.values[-1]))
        line = {"epoch": self.epoch + 1, "accuracy": values["accuracy"],
                "top5": values["top_k_accuracy"], "train_loss": values["train_loss"],
                "valid_loss": values["valid_loss"], "time": self.trained,
                "wall": time.perf_counter() - self.wall0,
                "images_per_s": self.items / self.train_seconds,
                "lr": self.opt.hypers[-1]["lr"]}
        self.done.append(line)
        if self.checkpoint:  # one file, so that model, optimiser and lines always agree
            partial = self.checkpoint + ".partial"
            torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                        "epochs": self.done}, partial)
            os.replace(partial, self.checkpoint)
        self.emit(line)


class StepTimer(Callback):
    """Times training steps after `warmup` of them; ends the fit after `steps` more."""

    def __init__(self, warmup, steps):
        self.warmup, self.steps, self.times = warmup, steps, []

    def before_batch(self):
        self.start = time.perf_counter()

    def after_batch(self):
        if self.training:
            self.times.append(time.perf_counter() - self.start)
            if len(self.times) >= self.warmup + self.steps:
                raise CancelFitException()


def learner(args, mode):
    model, learn_kwargs, fit_name, fit_kwargs, item_tfms, batch = recipe(args.recipe, args.net)
    blocks = DataBlock(blocks=(ImageBlock, CategoryBlock), get_items=get_image_files,
                       get_y=parent_label, splitter=GrandparentSplitter(valid_name="val"),
                       item_tfms=item_tfms, batch_tfms=Normalize.from_stats(*imagenet_stats))
    dls = blocks.dataloaders(args.images, bs=batch, num_workers=args.workers, device="cpu")
    cbs = []
    if mode != "fp32":
        model = model.to(memory_format=torch.channels_last)
        cbs.append(ChannelsLastInput())
    if mode.startswith("bf16"):
        cbs.append(CpuAutocast())
    if mode.endswith("compile"):
        model = torch.compile(model)
    learn = Learner(dls, model, metrics=[accuracy, top_k_accuracy], cbs=cbs, **learn_kwargs)
    learn.remove_cb(ProgressCallback)
    learn.logger = lambda *values: print(*values, file=sys.stderr)  # stdout is the JSON lines
    return learn, fit_name, fit_kwargs, batch


def bench(args, emit):
    for mode in args.modes:
        set_seed(args.seed)
        learn, fit_name, fit_kwargs, batch = learner(args, mode)
        timer = StepTimer(3, args.bench)
        getattr(learn, fit_name)(1, cbs=[timer], **fit_kwargs)
        steps = timer.times[timer.warmup:]
        emit({"mode": mode, "steps": len(steps), "warmup_s": sum(timer.times[:timer.warmup]),
              "median_step_s": statistics.median(steps), "min_step_s": min(steps),
              "max_step_s": max(steps), "images_per_s": batch / statistics.median(steps)})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", required=True, help="folder with train/ and val/")
    p.add_argument("--recipe", required=True, choices=["tutorial", "record", "record-resize"])
    p.add_argument("--net", default="xresnet34", choices=sorted(NETS),
                   help="the tutorial recipe's net (default %(default)s)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mode", default="bf16", choices=MODES)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--workers", type=int, default=os.cpu_count(),
                   help="DataLoader worker processes (default: one per core, fastai's)")
    p.add_argument("--output", help="also append the JSON lines to this file")
    p.add_argument("--checkpoint", help="save after every epoch; resume from it")
    p.add_argument("--bench", type=int, metavar="N", help="time N steps per mode and exit")
    p.add_argument("--modes", nargs="+", default=list(MODES[:3]), choices=MODES)
    args = p.parse_args(argv)
    for split in ("train", "val"):
        if not os.path.isdir(os.path.join(args.images, split)):
            raise SystemExit(f"--images: no {split}/ in {args.images} (imagenette2-160 unpacked)")
    torch.set_num_threads(args.threads)

    def emit(line):
        text = json.dumps(line)
        print(text, flush=True)
        if args.output:
            with open(args.output, "a") as f:
                f.write(text + "\n")

    emit({"recipe": args.recipe, "net": args.net if args.recipe == "tutorial" else
          "xse_resnext50", "epochs": args.epochs, "seed": args.seed, "mode": args.mode,
          "threads": torch.get_num_threads(), "workers": args.workers,
          "fastai": fastai.__version__, "torch": torch.__version__, "cpu": describe()["cpu"],
          "started": time.strftime("%Y-%m-%d %H:%M")})
    if args.bench:
        return bench(args, emit)
    set_seed(args.seed, reproducible=True)
    learn, fit_name, fit_kwargs, _ = learner(args, args.mode)
    done = []
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, weights_only=False)
        learn.model.load_state_dict(state["model"])
        learn.create_opt()
        learn.opt.load_state_dict(state["opt"])
        done = state["epochs"]
        for line in done:
            emit(dict(line, resumed=True))
    log = EpochLog(done, emit, args.checkpoint)
    getattr(learn, fit_name)(args.epochs, cbs=[log], start_epoch=len(done), **fit_kwargs)


if __name__ == "__main__":
    main()
