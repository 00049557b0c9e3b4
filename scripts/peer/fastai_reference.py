"""fastai's own optimisers, schedules and evaluation transforms on inputs given as JSON, for the
tests that hold Crossbow's to them (tests/python/test_fastai_*.py). Runs in the peer's venv
(scripts/peer/setup_peer.sh); nothing here re-implements fastai: the hyper-parameters' defaults
are read from fastai's own signatures.

    python fastai_reference.py optimizer IN.json OUT.json
        IN: optimizer (ranger | adam), schedule (one_cycle | flat_cos), lr, wd, eps, epochs,
        iterations (a epoch), w0 {weight, bias} and grads [{weight, bias}, ...] (one a step).
        OUT: weights [{weight, bias}, ...] after each step, and lr and mom of each step.
    python fastai_reference.py schedule IN.json OUT.json
        IN: schedule (one_cycle | flat_cos), optimizer, lr, epochs, iterations (a epoch).
        OUT: lr and mom of every iteration, as a Learner's fit records them.
    python fastai_reference.py crops IN.json OUT.json
        IN: images (paths), size. OUT: squash and square, each image's evaluation crop as
        nested lists (height, width, channel) of RandomResizedCrop(size) and Resize(size).
"""
import inspect
import json
import sys

import numpy as np
import torch
from fastai.callback.schedule import combined_cos
from fastai.data.core import DataLoaders
from fastai.data.load import DataLoader
from fastai.learner import Learner
from fastai.optimizer import Adam, ranger
from fastai.torch_core import norm_bias_params
from fastai.vision.augment import RandomResizedCrop, Resize
from fastai.vision.core import PILImage

OPTIMIZERS = {"ranger": ranger, "adam": Adam}


def defaults(function):
    return {k: p.default for k, p in inspect.signature(function).parameters.items()}


def schedules(schedule, lr):
    """The schedulers Learner.fit_one_cycle and Learner.fit_flat_cos build, at their defaults."""
    if schedule == "one_cycle":
        d = defaults(Learner.fit_one_cycle)
        moms = defaults(Learner.__init__)["moms"]
        return {"lr": combined_cos(d["pct_start"], lr / d["div"], lr, lr / d["div_final"]),
                "mom": combined_cos(d["pct_start"], *moms)}
    d = defaults(Learner.fit_flat_cos)
    return {"lr": combined_cos(d["pct_start"], lr, lr, lr / d["div_final"])}


def optimizer(cfg):
    w0 = {k: torch.tensor(v, dtype=torch.float64) for k, v in cfg["w0"].items()}
    model = torch.nn.Linear(w0["weight"].shape[1], w0["weight"].shape[0]).double()
    with torch.no_grad():
        model.weight.copy_(w0["weight"])
        model.bias.copy_(w0["bias"])
    opt = OPTIMIZERS[cfg["optimizer"]](list(model.parameters()), lr=cfg["lr"], wd=cfg["wd"],
                                       eps=cfg["eps"])
    for state in norm_bias_params(model, True).map(opt.state):  # as Learner.create_opt
        state["do_wd"] = False
    scheds = schedules(cfg["schedule"], cfg["lr"])
    out = {"weights": [], "lr": [], "mom": []}
    grads = iter(cfg["grads"])
    epochs, iterations = cfg["epochs"], cfg["iterations"]
    for epoch in range(epochs):
        pct = epoch / epochs  # TrainEvalCallback's pct_train
        for _ in range(iterations):
            for name, f in scheds.items():
                opt.set_hyper(name, f(pct))
            g = next(grads)
            model.weight.grad = torch.tensor(g["weight"], dtype=torch.float64)
            model.bias.grad = torch.tensor(g["bias"], dtype=torch.float64)
            opt.step()
            out["weights"].append({"weight": model.weight.detach().tolist(),
                                   "bias": model.bias.detach().tolist()})
            out["lr"].append(opt.hypers[-1]["lr"])
            out["mom"].append(opt.hypers[-1]["mom"])
            pct += 1.0 / (iterations * epochs)
    return out


def schedule(cfg):
    """A real fit of a linear model, the hyper-parameters as the recorder keeps them."""
    x = torch.randn(cfg["iterations"] * 2, 2)
    items = list(zip(x, x.sum(1, keepdim=True)))
    dls = DataLoaders(DataLoader(items, bs=2, shuffle=False, drop_last=True),
                      DataLoader(items[:2], bs=2))
    learn = Learner(dls, torch.nn.Linear(2, 1), loss_func=torch.nn.MSELoss(),
                    opt_func=OPTIMIZERS[cfg["optimizer"]])
    with learn.no_bar(), learn.no_logging():
        if cfg["schedule"] == "one_cycle":
            learn.fit_one_cycle(cfg["epochs"], cfg["lr"])
        else:
            learn.fit_flat_cos(cfg["epochs"], cfg["lr"])
    hps = learn.recorder.hps
    return {"lr": [float(v) for v in hps["lr"]],
            "mom": [float(v) for v in hps.get("mom", [])]}


def crops(cfg):
    size = cfg["size"]
    transforms = {"squash": RandomResizedCrop(size), "square": Resize(size)}
    out = {name: [] for name in transforms}
    for path in cfg["images"]:
        image = PILImage.create(path)
        for name, t in transforms.items():
            out[name].append(np.asarray(t(image, split_idx=1)).tolist())
    return out


if __name__ == "__main__":
    command, source, target = sys.argv[1:4]
    with open(source) as f:
        cfg = json.load(f)
    result = {"optimizer": optimizer, "schedule": schedule, "crops": crops}[command](cfg)
    with open(target, "w") as f:
        json.dump(result, f)
