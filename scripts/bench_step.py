#!/usr/bin/env python3
"""Benchmark: one learner's forward+backward+update time per iteration, ResNet-32, against
PyTorch on the same machine, same architecture, same thread count, rounds interleaved.

Each measurement runs in its own process: Crossbow's under this interpreter, PyTorch's under
the interpreter that has torch (Debian's /usr/bin/python3 by default), with
OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset for the peer alone so that it runs at its best.
Prints a table (medians, min-max) and JSON lines with ratio_vs_pytorch.

    python3 scripts/bench_step.py [--batches 1 16 64] [--rounds 5] [--threads 1]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ITERS = {1: 40, 4: 20, 16: 8, 32: 5, 64: 3, 128: 2}


def crossbow_worker(batch, iters, threads):
    import numpy as np
    import crossbow.nets

    model = crossbow.nets.build("resnet32", 10, threads=threads, lr=0.05, momentum=0.9,
                                weight_decay=1e-4, seed=1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    for _ in range(3):
        model.step(x, y)
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        model.step(x, y)
        times.append(time.perf_counter() - t)
    stats = model.memory_stats()
    return {"times": times, "planned_bytes": stats["planned_bytes"],
            "unplanned_bytes": stats["unplanned_bytes"]}


def torch_worker(batch, iters, threads):
    import torch
    import torch.nn.functional as F
    from torch_resnet import cifar_resnet

    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = cifar_resnet(32)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return {"times": times, "threads": torch.get_num_threads()}


def run_worker(kind, batch, threads, peer_python):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    python = sys.executable
    if kind == "torch":
        python = peer_python
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    cmd = [python, os.path.abspath(__file__), "--worker", kind, "--batches", str(batch),
           "--threads", str(threads)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} worker failed (batch {batch}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--peer-python", default="/usr/bin/python3")
    ap.add_argument("--worker", choices=["crossbow", "torch"])
    args = ap.parse_args()

    if args.worker:
        batch = args.batches[0]
        fn = crossbow_worker if args.worker == "crossbow" else torch_worker
        print(json.dumps(fn(batch, ITERS.get(batch, 3), args.threads)))
        return

    results = {b: {"crossbow": [], "torch": [], "memory": None} for b in args.batches}
    for r in range(args.rounds):
        for b in args.batches:
            for kind in (("crossbow", "torch") if r % 2 == 0 else ("torch", "crossbow")):
                res = run_worker(kind, b, args.threads, args.peer_python)
                results[b][kind].append(statistics.median(res["times"]))
                if kind == "crossbow":
                    results[b]["memory"] = (res["planned_bytes"], res["unplanned_bytes"])
                elif res["threads"] != args.threads:
                    raise RuntimeError(f"the peer runs {res['threads']} threads, not "
                                       f"{args.threads}")
            print(f"round {r + 1}/{args.rounds} batch {b}: crossbow {results[b]['crossbow'][-1] * 1e3:.1f} ms, "
                  f"pytorch {results[b]['torch'][-1] * 1e3:.1f} ms", file=sys.stderr)

    print(f"\nResNet-32, forward+backward+update per iteration, {args.threads} thread(s) each "
          f"(the peer's torch.get_num_threads() checked), "
          f"{args.rounds} interleaved rounds (median, min-max)")
    print(f"{'batch':>5} | {'crossbow ms':>22} | {'pytorch ms':>22} | {'img/s cb':>8} | {'img/s pt':>8} | ratio | act. memory planned/unplanned")
    lines = []
    for b in args.batches:
        cb, pt = results[b]["crossbow"], results[b]["torch"]
        mcb, mpt = statistics.median(cb), statistics.median(pt)
        planned, unplanned = results[b]["memory"]
        print(f"{b:>5} | {mcb * 1e3:8.2f} ({min(cb) * 1e3:6.2f}-{max(cb) * 1e3:6.2f}) | "
              f"{mpt * 1e3:8.2f} ({min(pt) * 1e3:6.2f}-{max(pt) * 1e3:6.2f}) | {b / mcb:8.1f} | "
              f"{b / mpt:8.1f} | {mpt / mcb:5.2f} | {planned / 2**20:.1f}/{unplanned / 2**20:.1f} MiB "
              f"({planned / unplanned:.2f})")
        lines.append({"bench": "step", "net": "resnet32", "batch": b, "threads": args.threads,
                      "crossbow_ms_median": mcb * 1e3, "crossbow_ms_min": min(cb) * 1e3,
                      "crossbow_ms_max": max(cb) * 1e3, "pytorch_ms_median": mpt * 1e3,
                      "pytorch_ms_min": min(pt) * 1e3, "pytorch_ms_max": max(pt) * 1e3,
                      "ratio_vs_pytorch": mpt / mcb, "activation_bytes_planned": planned,
                      "activation_bytes_unplanned": unplanned})
    for line in lines:
        print(json.dumps(line))


if __name__ == "__main__":
    main()
