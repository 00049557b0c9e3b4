#!/usr/bin/env python3
"""PyTorch's training throughput of the CIFAR ResNet-32 on one GPU at several batch sizes: the
peer of crossbow_bench in scripts/gpu/gpu_check.sh. Needs torch only.

The peer runs with PyTorch's defaults, said in its output: float32, TF32 as torch sets it
(cuDNN convolutions may use TF32 unless --tf32 off), cudnn.benchmark on; synthetic data already
on the device; SGD with momentum 0.9 and weight decay 1e-4. --modes says how the fp32 step runs,
each a result of its own with its "mode": eager; channels_last (model and batch in NHWC);
compile (torch.compile's default mode; the first step, which compiles, is timed apart as
"compile_s"); graph (the whole step, forward, backward and SGD, captured once as a CUDA graph and
replayed: PyTorch's recipe for small batches, whose eager steps are bound by launching kernels;
GPUs only). --precisions adds bf16 and fp16 in eager mode: the forward pass and loss under
torch.autocast of that type, fp16 with a GradScaler (PyTorch's mixed-precision recipe), each a
result with its "precision". Each point: warm-up iterations, then as many as fit in --seconds,
timed to the GPU's completion; --rounds rounds over all the points (3), and each point's
images/s is the median of its rounds, as gpu_check.sh reports Crossbow's. Prints one JSON line
per point and writes {"meta", "results"} to --output.

    python3 scripts/gpu/bench_torch_gpu.py [--batches 16 32 64 512] [--seconds 3] [--rounds 3]
                                       [--modes eager channels_last compile graph]
                                       [--precisions fp32 bf16 fp16] [--output FILE]
"""
import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "scripts", "peer"), os.path.join(ROOT, "python")]

import peer  # noqa: E402  (stdlib only)

# The CPU benchmarks' peer modes (scripts/peer/torch_modes.py), and graph, which needs a GPU.
MODES = peer.MODES + ("graph",)


def graphed(step, zero_grad, torch):
    """`step` captured as one CUDA graph (PyTorch's whole-network capture: warm-up on a side
    stream, gradients left to the graph's own memory); returns the graph's replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            zero_grad()
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    zero_grad()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def measure(batch, args, device, precision="fp32", mode="eager"):
    import torch
    import torch.nn.functional as F
    from torch_modes import prepare, timed
    from crossbow.torch_resnet import cifar_resnet

    cuda = device.type == "cuda"
    if mode == "graph" and not cuda:
        raise ValueError("mode graph needs a GPU (CUDA graphs)")
    torch.manual_seed(0)
    model = cifar_resnet(args.depth).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    forward, layout = prepare(model, "eager" if mode == "graph" else mode)
    x = layout(torch.randn(batch, 3, 32, 32, device=device))
    y = torch.randint(0, 10, (batch,), device=device)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None

    def zero_grad():
        opt.zero_grad(set_to_none=True)

    def update():
        with torch.autocast(device.type, dtype=half, enabled=half is not None):
            loss = F.cross_entropy(forward(x), y)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

    def step():
        zero_grad()
        update()

    def synchronised_step():
        step()
        if cuda:
            torch.cuda.synchronize(device)

    compile_s = timed(synchronised_step)  # the first step compiles, in mode compile
    if mode == "graph":
        step = graphed(update, zero_grad, torch)
    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    iterations, start = 0, time.perf_counter()
    while iterations == 0 or time.perf_counter() - start < args.seconds:
        step()
        iterations += 1
    if cuda:
        torch.cuda.synchronize(device)  # the host ran ahead: the time ends when the GPU is done
    seconds = time.perf_counter() - start
    return {"bench": "torch", "net": f"resnet{args.depth}", "batch_size": batch,
            "precision": precision, "mode": mode, "images_per_s": iterations * batch / seconds,
            "iterations": iterations, "seconds": seconds,
            **({"compile_s": compile_s} if mode == "compile" else {}),
            "max_memory_bytes": torch.cuda.max_memory_allocated(device) if cuda else None}


def summarise(rounds):
    """A batch size's rounds as one result: the median round's, with the rates of all."""
    errors = [r for r in rounds if "error" in r]
    if errors:
        return errors[0]
    ordered = sorted(rounds, key=lambda r: r["images_per_s"])
    result = dict(ordered[len(ordered) // 2])
    if len(ordered) % 2 == 0:
        result["images_per_s"] = (ordered[len(ordered) // 2 - 1]["images_per_s"]
                                  + ordered[len(ordered) // 2]["images_per_s"]) / 2
    result["rounds"] = [r["images_per_s"] for r in rounds]
    return result


def meta(device):
    import torch
    info = {"torch": torch.__version__, "device": str(device),
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "tf32_matmul": getattr(torch.backends.cuda.matmul, "allow_tf32", None),
            "tf32_cudnn": getattr(torch.backends.cudnn, "allow_tf32", None)}
    if device.type == "cuda" and torch.cuda.is_available():
        info.update(cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                    gpu=torch.cuda.get_device_name(device))
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, nargs="+", default=[16, 32, 64, 512])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=int, default=10, help="iterations before timing")
    p.add_argument("--rounds", type=int, default=3, help="rounds over the batch sizes")
    p.add_argument("--depth", type=int, default=32)
    p.add_argument("--device", default="cuda", help="cuda, cuda:N (or cpu, to try the script)")
    p.add_argument("--tf32", choices=["default", "off"], default="default",
                   help="off: no TF32 in matmuls and convolutions")
    p.add_argument("--modes", nargs="+", choices=MODES, default=["eager"],
                   help="how the fp32 step runs (each a result): " + ", ".join(MODES))
    p.add_argument("--precisions", nargs="+", choices=["fp32", "bf16", "fp16"], default=["fp32"],
                   help="fp32 (in each of --modes), and bf16 or fp16 under torch.autocast, eager")
    p.add_argument("--output", help="JSON file with every result")
    args = p.parse_args()
    import torch
    device = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    if args.tf32 == "off":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    points = [(batch, precision, mode) for precision in args.precisions
              for mode in (args.modes if precision == "fp32" else ["eager"])
              for batch in args.batches]
    rounds = {point: [] for point in points}
    for _ in range(args.rounds):
        for batch, precision, mode in points:
            failed = {"bench": "torch", "batch_size": batch, "precision": precision, "mode": mode}
            if device.type == "cuda" and not torch.cuda.is_available():
                result = dict(failed, error="torch sees no CUDA device")
            else:
                try:
                    result = measure(batch, args, device, precision, mode)
                except Exception as e:  # one point failing (out of memory) leaves the others
                    result = dict(failed, error=f"{type(e).__name__}: {e}")
            rounds[batch, precision, mode].append(result)
    results = [summarise(rounds[point]) for point in points]
    for result in results:
        print(json.dumps(result), flush=True)
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"meta": meta(device), "results": results}, f, indent=1)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
