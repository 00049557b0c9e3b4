#!/usr/bin/env python3
"""Benchmark: the synchronisation across servers that SMA adds per iteration, against the
compute of one iteration. On N local ranks (mpirun), the all-reduce of ResNet-32 and ResNet-50
sized buffers (crossbow's deterministic chunked all-reduce, and MPI_Allreduce beside it), and
one learner's forward+backward+update time of the same nets at the batch sizes we train with.
Prints a table (medians, min-max) and JSON lines.

    python3 scripts/bench/bench_allreduce.py [--ranks 2] [--rounds 5]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
# (net, batch, measured steps): one learner, one thread, as in bench_step.py.
COMPUTE = [("resnet32", 16, 8), ("resnet32", 32, 5), ("resnet50", 32, 2)]


def sync_floats(net):
    """Floats the engine all-reduces per iteration: parameters, batch-norm statistics, a count."""
    import crossbow.nets
    b = crossbow.nets.builder(net, None)
    params = b.num_params()
    return params, params + sum(b.param_count(s) for s in b.state) + 1


def compute_ms(net, batch, steps):
    import numpy as np
    import crossbow.nets
    model = crossbow.nets.build(net, None, threads=1, lr=0.05, momentum=0.9, weight_decay=1e-4)
    shape = tuple(crossbow.nets.builder(net, None).input_shape)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch,) + shape, dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    model.step(x, y)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        model.step(x, y)
        times.append((time.perf_counter() - t) * 1e3)
    return times


def allreduce_ms(ranks, floats, rounds):
    tool = os.path.join(ROOT, "build", "crossbow_bench_allreduce")
    if not os.path.exists(tool) or not shutil.which("mpirun"):
        sys.exit("needs mpirun and build/crossbow_bench_allreduce (configure with MPI)")
    out = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
                          tool, "--rounds", str(rounds), "--iters", "10", "--floats",
                          *map(str, floats)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def fmt(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    sizes = {net: sync_floats(net) for net in ("resnet32", "resnet50")}
    reduce = {r["floats"]: r for r in allreduce_ms(args.ranks, [s[1] for s in sizes.values()],
                                                   args.rounds)}
    print(f"| net | parameters | floats synchronised | MB | crossbow all-reduce ms | "
          f"MPI_Allreduce ms | batch | compute ms/iter | sync / compute |")
    print("|---|---|---|---|---|---|---|---|---|")
    for net, batch, steps in COMPUTE:
        params, floats = sizes[net]
        r = reduce[floats]
        c = compute_ms(net, batch, steps)
        ours = r["deterministic"]
        row = dict(net=net, parameters=params, floats=floats, ranks=args.ranks, batch=batch,
                   allreduce=ours, mpi_allreduce=r["mpi_allreduce"],
                   compute_ms=statistics.median(c), compute_min_ms=min(c),
                   compute_max_ms=max(c))
        print(f"| {net} | {params:,} | {floats:,} | {floats * 4 / 1e6:.1f} | "
              f"{ours['median_ms']:.2f} ({ours['min_ms']:.2f}-{ours['max_ms']:.2f}) | "
              f"{r['mpi_allreduce']['median_ms']:.2f} | {batch} | {fmt(c)} | "
              f"{ours['median_ms'] / statistics.median(c):.3f} |")
        print(json.dumps(row), file=sys.stderr)


if __name__ == "__main__":
    main()
