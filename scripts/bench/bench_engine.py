#!/usr/bin/env python3
"""Benchmark: engine throughput (images/s) of ResNet-32 at one batch size with 1..N learners on
one CPU device (SMA), on random in-memory CIFAR-sized data. A short run, not a timed test.

    PYTHONPATH=python python3 scripts/bench/bench_engine.py [--batch 16] [--learners 1 2 3 4]
        [--iterations 20] [--devices cpu]
"""
import argparse
import json
import time

import numpy as np

import crossbow.nets
from crossbow import _native


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--learners", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--devices", default="cpu")
    p.add_argument("--net", default="resnet32")
    args = p.parse_args()
    _C = _native.load()
    spec = json.dumps(crossbow.nets.builder(args.net, 10).to_spec(lr=0.05, weight_decay=1e-4))
    rng = np.random.default_rng(0)
    n = 32 * args.batch
    images = rng.standard_normal((n, 3, 32, 32), dtype=np.float32)
    labels = rng.integers(0, 10, n).astype(np.int32)
    for k in args.learners:
        options = _C.EngineOptions(devices=args.devices, learners=k)
        engine = _C.Engine(spec, options, _C.ArraySource(images, labels, args.batch))
        for _ in range(args.warmup):
            engine.iterate()
        start, seen = time.perf_counter(), 0
        for _ in range(args.iterations):
            seen += engine.iterate().images
        rate = seen / (time.perf_counter() - start)
        print(json.dumps({"net": args.net, "batch": args.batch, "devices": args.devices,
                          "learners_per_device": k, "images_per_second": round(rate, 1)}),
              flush=True)


if __name__ == "__main__":
    main()
