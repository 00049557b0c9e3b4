"""Where a command's oneDNN time goes: runs it with ONEDNN_VERBOSE=1 and sums the execution
times oneDNN reports by primitive kind and propagation kind (convolution forward_training,
convolution backward_weights, batch_normalization backward, reorder ...), as milliseconds per
step and as shares of the whole. The first --warmup steps are left out, as is primitive
creation: the first execution of a GEMM-based primitive alone can take longer than a whole
step. --steps is the number of steps the command runs, warm-up included (scripts/bench/bench_step.py's
worker: 3 warm-up steps, then 8 at batch 16).

    python3 scripts/bench/onednn_breakdown.py --steps 11 --warmup 3 -- \\
        python3 scripts/bench/bench_step.py --worker crossbow --batches 16

--by-shape splits the table by implementation and problem (the shapes oneDNN prints), with the
GFLOP/s of each convolution and matrix product: which shapes run on which kernel, and how fast.
"""
import argparse
import collections
import math
import os
import re
import subprocess
import sys


def by_pass(fields, at):
    """(primitive, propagation) of an execution line whose "exec" field is at `at`."""
    return fields[at + 2], fields[at + 4]


def by_shape(fields, at):
    """(primitive, propagation, implementation, problem) of an execution line."""
    return fields[at + 2], fields[at + 4], fields[at + 3], fields[-2]


def flops(kind, problem):
    """Floating-point operations of one execution: a convolution's from its problem descriptor
    ("g2mb16_ic64oc64_ih32oh32kh3sh1dh0ph1_iw32ow32kw3sw1dw0pw1", per pass the same), a matrix
    product's from its dimensions ("256x64:64x128:256x128", batch dimensions in front); None
    for other primitives."""
    if kind == "convolution":
        d = {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", problem)}
        return 2 * d["mb"] * d["ic"] // d.get("g", 1) * d["oc"] * d["oh"] * d["ow"] * d["kh"] * d["kw"]
    if kind == "matmul":
        src, weights = (part.split("x") for part in problem.split(":")[:2])
        return 2 * math.prod(int(v) for v in src) * int(weights[-1])
    return None


def breakdown(lines, steps=1, warmup=0, key=by_pass):
    """{key: (milliseconds, executions)} from ONEDNN_VERBOSE lines of a command that ran `steps`
    steps, the first `warmup` of them left out, key (by_pass or by_shape) naming each line's
    group: a line (a primitive with its shapes and layouts) seen n times ran n / steps times a
    step, so its first warmup * n / steps executions were the warm-up's."""
    runs = collections.defaultdict(list)  # (line but its time, (kind, propagation)): times
    for line in lines:
        fields = line.strip().split(",")
        # oneDNN 2: dnnl_verbose,exec,cpu,KIND,IMPL,PROP,...,MS; 3: onednn_verbose,primitive,exec,...;
        # 3.5 on: onednn_verbose,v1,primitive,exec,...
        if fields[0] not in ("onednn_verbose", "dnnl_verbose") or "exec" not in fields[:4]:
            continue
        at = fields.index("exec")
        if len(fields) < at + 5:
            continue
        try:
            ms = float(fields[-1])
        except ValueError:
            continue
        runs[tuple(fields[:-1]), key(fields, at)].append(ms)
    totals = collections.defaultdict(lambda: [0.0, 0])
    for (_, key), times in runs.items():
        kept = times[round(warmup * len(times) / steps):]
        totals[key][0] += sum(kept)
        totals[key][1] += len(kept)
    return {k: tuple(v) for k, v in totals.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, required=True, help="steps the command runs")
    ap.add_argument("--warmup", type=int, default=0, help="the first steps, left out")
    ap.add_argument("--by-shape", action="store_true",
                    help="one row per implementation and problem, with GFLOP/s")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the command after --")
    if not 0 <= args.warmup < args.steps:
        ap.error(f"need 0 <= --warmup < --steps, got --warmup {args.warmup} --steps {args.steps}")
    env = dict(os.environ, ONEDNN_VERBOSE="1", DNNL_VERBOSE="1")
    run = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"onednn_breakdown: {' '.join(command)} exited with {run.returncode}")
    totals = breakdown(run.stdout.splitlines(), args.steps, args.warmup,
                       by_shape if args.by_shape else by_pass)
    steps = args.steps - args.warmup
    if not totals:
        sys.exit("onednn_breakdown: the command printed no oneDNN executions (does it use "
                 "oneDNN, and does its oneDNN honour ONEDNN_VERBOSE?)")
    whole = sum(ms for ms, _ in totals.values())
    if args.by_shape:
        print(f"{'ms/step':>9} {'share':>7} {'runs/step':>9} {'GFLOP/s':>8}  primitive propagation "
              "implementation problem")
        for (kind, prop, impl, problem), (ms, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
            work = flops(kind, problem)
            rate = f"{work * n / ms / 1e6:8.0f}" if work else f"{'':>8}"
            print(f"{ms / steps:9.2f} {ms / whole:7.1%} {n / steps:9.1f} {rate}  {kind} {prop} "
                  f"{impl} {problem}")
    else:
        print(f"{'primitive':<22} {'propagation':<18} {'ms/step':>9} {'share':>7} {'runs/step':>9}")
        for (kind, prop), (ms, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
            print(f"{kind:<22} {prop:<18} {ms / steps:9.2f} {ms / whole:7.1%} {n / steps:9.1f}")
    print(f"{'all':<41} {whole / steps:9.2f}")


if __name__ == "__main__":
    main()
