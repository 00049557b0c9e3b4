"""The PyTorch peer's run of bench_train.py statistical: ResNet-20 on CIFAR-10 with one recipe
of tta_recipes.py, evaluated after every pass over the training images, until the highest
target or the end of the budget. Runs under the peer's Python (needs torch):

    python torch_tta.py SPEC_JSON

SPEC_JSON: folder, work, batch, epochs, target, threads, workers, peer_mode, precision, seed
and options (lr, momentum, nesterov, weight_decay, schedule). Prints JSON lines: the threads
and workers it got, compile_s (torch.compile's first step, timed apart and never counted),
then one {"epoch", "time", "accuracy", "images", "lr"} per evaluation, where time is training
time and epoch is images / training images.
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

from torch_cifar import Augmented, pixels, test_accuracy, train_loader
from torch_modes import autocast, prepare, timed
from torch_resnet import cifar_resnet
from tta_recipes import lr_factor


def main():
    spec = json.loads(sys.argv[1])
    o = spec["options"]
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    loader = train_loader(spec["folder"], spec["work"], spec["batch"], spec["workers"])
    test = torch.utils.data.DataLoader(
        Augmented(*pixels(spec["folder"], spec["work"], "test"), False), 500)
    n = len(loader.dataset)
    print(json.dumps({"threads": torch.get_num_threads(), "workers": spec["workers"]}),
          flush=True)
    model = cifar_resnet(20)
    opt = torch.optim.SGD(model.parameters(), o["lr"], momentum=o["momentum"],
                          nesterov=o["nesterov"], weight_decay=o["weight_decay"])
    model, layout = prepare(model, spec["peer_mode"])

    def step(x, y):
        with autocast(spec["precision"]):
            loss = F.cross_entropy(model(layout(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    compiling = spec["peer_mode"] == "compile"
    elapsed, images = 0.0, 0
    for _ in range(spec["epochs"]):
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
        print(json.dumps({"epoch": images / n, "time": elapsed, "accuracy": accuracy,
                          "images": images, "lr": lr}), flush=True)
        if accuracy >= spec["target"]:
            break


if __name__ == "__main__":
    main()
