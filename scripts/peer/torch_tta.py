"""The PyTorch peer's run of bench_train.py statistical: ResNet-20 on CIFAR-10 with one recipe
of tta_recipes.py, evaluated after every pass over the training images, until the highest
target or the end of the budget. Runs under the peer's Python (needs torch):

    python torch_tta.py SPEC_JSON

SPEC_JSON: folder, work, batch, epochs, target, threads, workers, augment (torch_cifar.AUGMENTS),
peer_mode, precision, seed, options (lr, momentum, nesterov, weight_decay, schedule) and
checkpoint (a file path or null). Prints JSON lines: the threads, workers and augment it got, compile_s (torch.compile's first step, timed
apart and never counted), then one {"epoch", "time", "accuracy", "images", "lr"} per
evaluation, where time is training time and epoch is images / training images.

With a checkpoint path the run saves model, optimiser, random-number state, training time and
the evaluations so far there after every evaluation (written whole, then renamed), and a run
that finds the file goes on from it: it prints the stored evaluations again and continues with
the same shuffling of the training images. Without loader workers the augmentations continue
too, so the resumed run ends where an uninterrupted one would; loader workers seed their own
random streams when they start, so after a resume their crops and mirrors are others.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from torch_cifar import Augmented, pixels, test_accuracy, train_loader
from torch_modes import autocast, prepare, timed
from crossbow.torch_resnet import cifar_resnet
from tta_recipes import lr_factor


def main():
    spec = json.loads(sys.argv[1])
    o = spec["options"]
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    np.random.seed(spec["seed"])  # the crops and mirrors without loader workers
    loader = train_loader(spec["folder"], spec["work"], spec["batch"], spec["workers"],
                          spec["augment"])
    test = torch.utils.data.DataLoader(
        Augmented(*pixels(spec["folder"], spec["work"], "test"), False), 500)
    n = len(loader.dataset)
    print(json.dumps({"threads": torch.get_num_threads(), "workers": spec["workers"],
                      "augment": spec["augment"]}), flush=True)
    net = cifar_resnet(20)
    opt = torch.optim.SGD(net.parameters(), o["lr"], momentum=o["momentum"],
                          nesterov=o["nesterov"], weight_decay=o["weight_decay"])
    model, layout = prepare(net, spec["peer_mode"])  # compile wraps net; the others convert it
    saved = resume(spec.get("checkpoint"), net, opt)
    for line in saved["evaluations"]:
        print(json.dumps(line), flush=True)

    def step(x, y):
        with autocast(spec["precision"]):
            loss = F.cross_entropy(model(layout(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    compiling = spec["peer_mode"] == "compile"
    elapsed, images, evaluations = saved["elapsed"], saved["images"], saved["evaluations"]
    if evaluations and evaluations[-1]["accuracy"] >= spec["target"]:
        return
    for _ in range(len(evaluations), spec["epochs"]):
        start = time.perf_counter()
        for x, y in loader:
            lr = o["lr"] * lr_factor(o["schedule"], images / n)
            for group in opt.param_groups:
                group["lr"] = lr
            if compiling:
                compile_s = timed(lambda: step(x, y))
                start += compile_s
                compiling = False
                print(json.dumps({"compile_s": compile_s}), flush=True)
            else:
                step(x, y)
            images += len(y)
        elapsed += time.perf_counter() - start
        accuracy = test_accuracy(model, layout, test, autocast(spec["precision"]))
        evaluations.append({"epoch": images / n, "time": elapsed, "accuracy": accuracy,
                            "images": images, "lr": lr})
        save(spec.get("checkpoint"), net, opt, elapsed, images, evaluations)
        print(json.dumps(evaluations[-1]), flush=True)
        if accuracy >= spec["target"]:
            break


def resume(path, net, opt):
    """Loads the checkpoint at `path` into `net` and `opt` and the global random-number state;
    returns the training time, images and evaluations it holds (none without one)."""
    if not path or not os.path.exists(path):
        return dict(elapsed=0.0, images=0, evaluations=[])
    state = torch.load(path, weights_only=False)
    net.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    np.random.set_state(state["numpy_rng"])  # the augmentations' stream without workers
    return state


def save(path, net, opt, elapsed, images, evaluations):
    if not path:
        return
    partial = path + ".partial"
    torch.save(dict(model=net.state_dict(), optimizer=opt.state_dict(),
                    rng=torch.get_rng_state(), numpy_rng=np.random.get_state(),
                    elapsed=elapsed, images=images, evaluations=evaluations), partial)
    os.replace(partial, path)  # a run killed while saving keeps the previous checkpoint


if __name__ == "__main__":
    main()
