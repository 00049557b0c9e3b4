#!/usr/bin/env python3
"""Benchmark: one learner's forward+backward+update time per iteration of a zoo net (--net,
default ResNet-32 on 32x32 CIFAR inputs), against PyTorch on the same machine, same
architecture, same thread count, rounds interleaved.

The peer's net is its twin (scripts/peer/torch_zoo.py): torch_resnet.py's CIFAR ResNets,
torchvision.models.resnet18/34/50(num_classes=--classes) for the ImageNet ResNets (the same
nets as Crossbow's: parameter counts equal), torch_twins.py's VGG-16, LeNet and ResNet-D; each
run checks that the twin has Crossbow's parameter count, and a net without a twin is refused.
The ImageNet nets take --input-size (224 by default; 128 is Imagenette's). Iterations per round
scale with the net's multiply-adds so that a round lasts about as long as ResNet-32's at the
same batch (ITERS: ResNet-32's iterations per batch), at least one; --iters fixes them.

Each measurement runs in its own process: Crossbow's under this interpreter, PyTorch's under
--peer-python (scripts/peer/peer.py: the venv of scripts/peer/setup_peer.sh, current PyTorch from
PyPI), once per peer mode: eager, channels_last and torch.compile (its first
step, the compile, is reported apart and never timed), in each of --precisions: fp32, and
bf16 where the CPU runs it (Crossbow's precision bf16: convolutions in bfloat16; PyTorch's
torch.autocast("cpu", torch.bfloat16) around the forward pass and loss). Prints the peer it
used, a table (medians, min-max) and JSON lines, one per batch and precision, naming the net
and input size, with Crossbow's ratio against each mode of the same precision and the best,
and Crossbow's bf16 speed-up.

    python3 scripts/bench/bench_step.py [--net resnet32] [--input-size N] [--classes 10]
        [--batches 1 16 64] [--rounds 5] [--threads 1] [--iters N]
        [--peer-python PATH] [--modes eager channels_last compile] [--precisions fp32 bf16]
    python3 scripts/bench/bench_step.py --net resnet50 --input-size 128 --batches 16
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peer"))  # peer, torch_zoo
import bench_nets  # noqa: E402
import peer  # noqa: E402
import torch_zoo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ResNet-32's iterations per round at each batch; other nets scale them by their multiply-adds.
ITERS = {1: 40, 4: 20, 16: 8, 32: 5, 64: 3, 128: 2}


def iterations(batch, multiply_adds, reference):
    """Timed iterations per round: ResNet-32's at `batch` (3 where the table has none) times
    `reference` (ResNet-32's multiply-adds) over the net's, at least one."""
    return max(1, round(ITERS.get(batch, 3) * reference / multiply_adds))


def warmups(iters):
    """Untimed steps before the timed ones: 3, fewer where a round has a single timed step."""
    return min(3, iters + 1)


def crossbow_worker(w):
    import numpy as np
    import crossbow.nets

    model = crossbow.nets.build(w["net"], w["classes"], w["input_size"], threads=w["threads"],
                                lr=0.05, momentum=0.9, weight_decay=1e-4, seed=1,
                                precision=w["precision"])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((w["batch"], *w["shape"]), dtype=np.float32)
    y = rng.integers(0, w["classes"], w["batch"]).astype(np.int32)
    for _ in range(warmups(w["iters"])):
        model.step(x, y)
    times = []
    for _ in range(w["iters"]):
        t = time.perf_counter()
        model.step(x, y)
        times.append(time.perf_counter() - t)
    stats = model.memory_stats()
    return {"times": times, "planned_bytes": stats["planned_bytes"],
            "unplanned_bytes": stats["unplanned_bytes"], "params": model.num_params(),
            "input": list(x.shape[1:])}


def torch_worker(w):
    import torch
    import torch.nn.functional as F
    from torch_modes import autocast, prepare, timed
    from torch_zoo import param_count, twin

    torch.set_num_threads(w["threads"])
    torch.manual_seed(1)
    model = twin(w["net"], w["classes"])
    params = param_count(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    model, layout = prepare(model, w["mode"])
    x = layout(torch.randn(w["batch"], *w["shape"]))
    y = torch.randint(0, w["classes"], (w["batch"],))

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast(w["precision"]):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    first_s = timed(step)
    for _ in range(warmups(w["iters"]) - 1):
        step()
    times = [timed(step) for _ in range(w["iters"])]
    return {"times": times, "threads": torch.get_num_threads(), "first_step_s": first_s,
            "params": params, "input": list(x.shape[1:])}


def run_worker(kind, work, peer_python):
    """One measurement in its own process, `work` its spec (the worker's keys below)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(work["threads"]))
    python = sys.executable
    cmd = [os.path.abspath(__file__), "--worker", kind, "--net", work["net"], "--classes",
           str(work["classes"]), "--batches", str(work["batch"]), "--threads",
           str(work["threads"]), "--precisions", work["precision"], "--iters", str(work["iters"])]
    cmd += ["--input-size", str(work["input_size"])] if work["input_size"] else []
    if kind == "torch":
        python, env = peer_python, peer.env(env)
        cmd += ["--modes", work["mode"]]
    cmd = [python] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{kind} worker failed (batch {work['batch']}):\n"
                           f"{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(net, batch, threads, precision, crossbow_s, peer_s, memory):
    """One batch size's and precision's JSON line from per-round medians: Crossbow's step
    times, each peer mode's ({mode: [seconds]}), Crossbow's (planned, unplanned) activation
    bytes. `net`: bench_nets.resolve's, named in the line with its input size and classes."""
    line = {"bench": "step", "net": net["net"], "input_size": net["shape"][-1],
            "classes": net["classes"], "batch": batch, "threads": threads,
            "precision": precision}
    for who, times in [("crossbow", crossbow_s)] + [(f"pytorch_{m}", t) for m, t in peer_s.items()]:
        line.update({f"{who}_ms_median": statistics.median(times) * 1e3,
                     f"{who}_ms_min": min(times) * 1e3, f"{who}_ms_max": max(times) * 1e3})
    line.update(peer.ratios(batch / statistics.median(crossbow_s),
                            {m: batch / statistics.median(t) for m, t in peer_s.items()}))
    line.update(activation_bytes_planned=memory[0], activation_bytes_unplanned=memory[1])
    return line


def print_table(args, net, lines, modes):
    size = "x".join(map(str, net["shape"][1:]))
    print(f"\n{net['net']} at {size}, {net['classes']} classes, forward+backward+update per "
          f"iteration, {args.threads} thread(s) each "
          f"(the peer's torch.get_num_threads() checked), {args.rounds} interleaved rounds "
          "(median, min-max); ratio: Crossbow's images/s over the peer's")
    print(f"{'batch':>5} | {'who':>22} | {'ms':>24} | {'img/s':>8} | ratio")
    for line in lines:
        b = line["batch"]
        if len(args.precisions) > 1:
            print(f"{b:>5} | precision {line['precision']}")
        for who in ["crossbow"] + [f"pytorch_{m}" for m in modes]:
            ms = [line[f"{who}_ms_{k}"] for k in ("median", "min", "max")]
            ratio = "" if who == "crossbow" else f"{line['ratio_vs_' + who[8:]]:5.2f}"
            print(f"{b:>5} | {who:>22} | {ms[0]:8.2f} ({ms[1]:6.2f}-{ms[2]:6.2f}) | "
                  f"{b / ms[0] * 1e3:8.1f} | {ratio}")
        planned, unplanned = line["activation_bytes_planned"], line["activation_bytes_unplanned"]
        print(f"{b:>5} | against the best ({line['best_mode']}): {line['ratio_vs_best']:.2f}x; "
              f"Crossbow's activation memory planned/unplanned {planned / 2**20:.1f}/"
              f"{unplanned / 2**20:.1f} MiB ({planned / unplanned:.2f})")
        if "crossbow_speedup_over_fp32" in line:
            print(f"{b:>5} | Crossbow {line['precision']} over Crossbow fp32: "
                  f"{line['crossbow_speedup_over_fp32']:.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--modes", nargs="+", choices=peer.MODES, default=list(peer.MODES),
                    help="the peer's configurations")
    ap.add_argument("--precisions", nargs="+", choices=["fp32", "bf16"], default=["fp32"],
                    help="both sides, each (bf16 needs a CPU with AVX512-BF16 or AMX)")
    ap.add_argument("--iters", type=int,
                    help="timed iterations per round (default: ITERS scaled by the net's cost)")
    bench_nets.add_arguments(ap)
    peer.add_argument(ap)
    ap.add_argument("--worker", choices=["crossbow", "torch"],
                    help="one measurement of one side, at the first of --batches, --precisions "
                         "and --modes (--iters by default ITERS, unscaled); prints JSON")
    args = ap.parse_args()

    if args.worker:
        b = args.batches[0]
        work = dict(net=args.net, classes=args.classes, input_size=args.input_size, batch=b,
                    threads=args.threads, precision=args.precisions[0], mode=args.modes[0],
                    iters=args.iters or ITERS.get(b, 3),
                    shape=torch_zoo.shape(args.net, args.input_size))
        print(json.dumps((crossbow_worker if args.worker == "crossbow" else torch_worker)(work)))
        return

    if "bf16" in args.precisions:
        peer.require_crossbow_bf16("bench_step", "--precisions")
    try:
        net = bench_nets.resolve(args.net, args.classes, args.input_size)
    except ValueError as e:
        ap.error(str(e))
    reference = bench_nets.resolve("resnet32", 10, None)["multiply_adds"]
    if args.iters is not None and args.iters < 1:
        ap.error(f"--iters must be at least 1, got {args.iters}")
    info = peer.describe(args.peer_python)
    modes, notes = peer.modes(info, args.modes)
    print(peer.banner(info), *notes, sep="\n")
    cases = [(b, p) for b in args.batches for p in args.precisions]
    results = {c: {"crossbow": [], "memory": None, **{m: [] for m in modes}} for c in cases}
    first_steps = {m: [] for m in modes}
    for r in range(args.rounds):
        for b, p in cases:
            kinds = [("crossbow", None)] + [("torch", m) for m in modes]
            for kind, mode in (kinds if r % 2 == 0 else kinds[::-1]):
                work = dict(net, batch=b, threads=args.threads, precision=p, mode=mode,
                            iters=args.iters or iterations(b, net["multiply_adds"], reference))
                res = run_worker(kind, work, args.peer_python)
                results[b, p][mode or kind].append(statistics.median(res["times"]))
                bench_nets.check_params(net, res["params"], kind, res["input"])
                if kind == "crossbow":
                    results[b, p]["memory"] = (res["planned_bytes"], res["unplanned_bytes"])
                    continue
                first_steps[mode].append(res["first_step_s"])
                if res["threads"] != args.threads:
                    raise RuntimeError(f"the peer runs {res['threads']} threads, not "
                                       f"{args.threads}")
            print(f"round {r + 1}/{args.rounds} batch {b} {p}: " + ", ".join(
                f"{k} {results[b, p][k][-1] * 1e3:.1f} ms" for k in ["crossbow"] + modes),
                file=sys.stderr)

    lines = [summary(net, b, args.threads, p, results[b, p]["crossbow"],
                     {m: results[b, p][m] for m in modes}, results[b, p]["memory"])
             for b, p in cases]
    for line in lines:
        if line["precision"] != "fp32" and (line["batch"], "fp32") in results:
            fp32 = statistics.median(results[line["batch"], "fp32"]["crossbow"])
            line["crossbow_speedup_over_fp32"] = fp32 / (line["crossbow_ms_median"] / 1e3)
    print_table(args, net, lines, modes)
    print("peer's first step (compile included in mode compile, never timed), median s: " +
          ", ".join(f"{m} {statistics.median(first_steps[m]):.1f}" for m in modes))
    for line in lines:
        print(json.dumps({**line, "peer": info,
                          "peer_first_step_s": {m: statistics.median(first_steps[m])
                                                for m in modes}}))


if __name__ == "__main__":
    main()
