#!/usr/bin/env python3
"""The summary of a scripts/gpu/gpu_tta.sh run: test accuracy against training time for each run
in OUT/runs/ (Crossbow: NAME/metrics.jsonl of crossbow_train, beside NAME/settings.json;
PyTorch: NAME.jsonl of scripts/gpu/gpu_tta_torch.py), and from them, for the best run of each side:
time to 90% and to 91%, accuracy at equal budgets of training time, and the ratio of
Crossbow's time to the goal (the lower of 91% and PyTorch's best final accuracy) to PyTorch's.
Writes $OUT/tta.json and $OUT/tta.md, and $OUT/tta.png where matplotlib is installed; prints the
table. Exit: 0 the target met (ratio <= 0.5 and Crossbow ahead at every budget); 4 a side has no
evaluation; 6 measured, the target not met. Stdlib only (matplotlib for the plot).

    python3 scripts/gpu/gpu_tta_report.py OUT [--budgets 60 120 240]
"""
import argparse
import json
import os
import sys

LEVELS = (0.90, 0.91)
GOAL_CAP, RATIO_TARGET = 0.91, 0.5


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_runs(out):
    """{name: {"side", "settings", "curve": [(seconds, accuracy)]}} for every run in OUT/runs."""
    runs, folder = {}, os.path.join(out, "runs")
    for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, entry)
        if entry.endswith(".jsonl"):
            lines = read_jsonl(path)
            side, settings, evals = "pytorch", (lines[0] if lines else {}), lines[1:]
        elif os.path.isfile(os.path.join(path, "settings.json")):
            with open(os.path.join(path, "settings.json")) as f:
                settings = json.load(f)
            metrics = os.path.join(path, "metrics.jsonl")
            side, evals = "crossbow", read_jsonl(metrics) if os.path.isfile(metrics) else []
        else:
            continue
        curve = sorted((r["time"], r["accuracy"]) for r in evals
                       if r.get("accuracy") is not None and r.get("time") is not None)
        runs[entry.removesuffix(".jsonl")] = {"side": side, "settings": settings,
                                              "curve": curve}
    return runs


def time_to(curve, level):
    return next((t for t, a in curve if a >= level), None)


def accuracy_at(curve, budget):
    """The accuracy of the last evaluation within `budget` seconds of training."""
    within = [a for t, a in curve if t <= budget]
    return within[-1] if within else None


def describe(run, budgets):
    curve = run["curve"]
    return {"final_accuracy": curve[-1][1] if curve else None,
            "best_accuracy": max((a for _, a in curve), default=None),
            "seconds": curve[-1][0] if curve else None,
            "time_to": {f"{level:.2f}": time_to(curve, level) for level in LEVELS},
            "accuracy_at": {str(b): accuracy_at(curve, b) for b in budgets}}


def best_time(runs, level):
    """(name, seconds) of the run that reaches `level` first; (None, None) when none does."""
    times = [(time_to(r["curve"], level), name) for name, r in runs.items()]
    reached = [(t, name) for t, name in times if t is not None]
    return (min(reached)[1], min(reached)[0]) if reached else (None, None)


def best_at(runs, budget):
    values = [accuracy_at(r["curve"], budget) for r in runs.values()]
    return max((v for v in values if v is not None), default=None)


def compare(runs, budgets):
    sides = {s: {n: r for n, r in runs.items() if r["side"] == s and r["curve"]}
             for s in ("crossbow", "pytorch")}
    summary = {"runs": {n: dict(describe(r, budgets), side=r["side"], settings=r["settings"])
                        for n, r in runs.items()},
               "missing": [s for s, rs in sides.items() if not rs]}
    if summary["missing"]:
        return summary
    torch_final = max(r["curve"][-1][1] for r in sides["pytorch"].values())
    goal = min(GOAL_CAP, torch_final)
    ours, theirs = best_time(sides["crossbow"], goal), best_time(sides["pytorch"], goal)
    ratio = ours[1] / theirs[1] if ours[1] is not None and theirs[1] else None
    at = {str(b): {s: best_at(sides[s], b) for s in sides} for b in budgets}
    ahead = all(v["crossbow"] is not None and (v["pytorch"] is None or
                                               v["crossbow"] > v["pytorch"]) for v in at.values())
    summary.update(goal=goal, crossbow_run=ours[0], pytorch_run=theirs[0],
                   crossbow_seconds=ours[1], pytorch_seconds=theirs[1], ratio=ratio,
                   accuracy_at=at, ahead_at_every_budget=ahead,
                   target_met=ratio is not None and ratio <= RATIO_TARGET and ahead)
    return summary


def cell(value, fmt):
    return "-" if value is None else fmt.format(value)


def table(summary, budgets):
    head = ["run", "side", "final", "best", "seconds"] + [f"to {lv:.0%}" for lv in LEVELS] + [
        f"at {b} s" for b in budgets]
    rows = [head, ["---"] * len(head)]
    for name, r in summary["runs"].items():
        rows.append([name, r["side"], cell(r["final_accuracy"], "{:.4f}"),
                     cell(r["best_accuracy"], "{:.4f}"), cell(r["seconds"], "{:.0f}")]
                    + [cell(r["time_to"][f"{lv:.2f}"], "{:.0f} s") for lv in LEVELS]
                    + [cell(r["accuracy_at"][str(b)], "{:.4f}") for b in budgets])
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    if summary["missing"]:
        lines.append(f"no evaluation from: {', '.join(summary['missing'])}")
        return "\n".join(lines)
    lines.append(f"goal {summary['goal']:.4f} (the lower of {GOAL_CAP:.0%} and PyTorch's best "
                 f"final): Crossbow {cell(summary['crossbow_seconds'], '{:.0f} s')} "
                 f"({summary['crossbow_run']}), PyTorch "
                 f"{cell(summary['pytorch_seconds'], '{:.0f} s')} ({summary['pytorch_run']}), "
                 f"ratio {cell(summary['ratio'], '{:.2f}x')} (target <= {RATIO_TARGET}x)")
    lines.append("best accuracy at equal budgets: " + "; ".join(
        f"{b} s: Crossbow {cell(v['crossbow'], '{:.4f}')}, PyTorch {cell(v['pytorch'], '{:.4f}')}"
        for b, v in summary["accuracy_at"].items()))
    lines.append(f"target {'met' if summary['target_met'] else 'NOT met'}")
    return "\n".join(lines)


def plot(runs, path):
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, r in runs.items():
        if r["curve"]:
            ax.plot([t for t, _ in r["curve"]], [a for _, a in r["curve"]], marker=".",
                    linestyle="-" if r["side"] == "crossbow" else "--", label=name)
    for level in LEVELS:
        ax.axhline(level, color="grey", linewidth=0.5)
    ax.set(xlabel="training time (s)", ylabel="test accuracy (top-1)",
           title="ResNet-32 on CIFAR-10: test accuracy against training time")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the folder of scripts/gpu/gpu_tta.sh")
    p.add_argument("--budgets", type=float, nargs="+", default=[60, 120, 240])
    args = p.parse_args(argv)
    budgets = [int(b) if b == int(b) else b for b in args.budgets]
    runs = load_runs(args.out)
    summary = compare(runs, budgets)
    for name in ("gpu.csv", "bundle_manifest.txt"):
        path = os.path.join(args.out, name)
        if os.path.isfile(path):
            with open(path) as f:
                summary[name.split(".")[0]] = f.readline().strip()
    summary["plot"] = plot(runs, os.path.join(args.out, "tta.png"))
    text = table(summary, budgets)
    with open(os.path.join(args.out, "tta.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(args.out, "tta.md"), "w") as f:
        f.write(text + "\n")
    print(text, flush=True)
    if summary["missing"]:
        return 4
    return 0 if summary["target_met"] else 6


if __name__ == "__main__":
    sys.exit(main())
