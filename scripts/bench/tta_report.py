"""What bench_train.py statistical reports from its runs, as pure functions of their curves.

A run is a dict: run (its name), side ("crossbow" or "pytorch"), recipe, mode (the peer's
configuration; None for Crossbow), epochs_budget (a run is its name and its budget), batch,
learners (None where one process, the peer), about (the recipe in words) and curve: one point
per evaluation, {"epoch", "time", "accuracy", "images"}, where time is training time
(evaluation and compilation excluded) and epoch is images / training images, so that on both
sides time = epochs x training images / (images / s): a target's time splits exactly into
statistical efficiency (epochs) and hardware efficiency (images/s). A Crossbow run whose
learners the autotuner chose holds search_s, the seconds of that search (a run of its own
before training): its time to a target is the training time plus search_s, since a user who
asks for auto-tuned learners waits for both.
"""
import json


def name_of(run):
    """The run's name with its budget: "sma-b16, 20 ep"."""
    return f"{run['run']}, {run['epochs_budget']} ep"


def first_reaching(curve, target):
    """The first point of `curve` at or above `target` accuracy; None if none is."""
    for point in curve:
        if point["accuracy"] is not None and point["accuracy"] >= target:
            return point
    return None


def rate(point):
    """Images/s from the start of the run to `point`."""
    return point["images"] / point["time"] if point["time"] > 0 else float("nan")


def at_target(run, target):
    """{"epochs", "time", "images_per_s", "search_s"} of the run's first point at `target`, time
    counting the learner search's search_s (0 where none ran); None if never."""
    point = first_reaching(run["curve"], target)
    if point is None:
        return None
    search = run.get("search_s") or 0.0
    return {"epochs": point["epoch"], "time": point["time"] + search,
            "images_per_s": rate(point), "search_s": search}


def best_accuracy(run):
    return max((p["accuracy"] for p in run["curve"] if p["accuracy"] is not None), default=0.0)


def fastest(runs, side, target):
    """(run, at_target) of the side's run that reached `target` soonest; None if none did."""
    reached = [(r, at_target(r, target)) for r in runs if r["side"] == side]
    reached = [(r, a) for r, a in reached if a is not None]
    return min(reached, key=lambda ra: ra[1]["time"], default=None)


def verdict(runs, target):
    """Crossbow's fastest run against PyTorch's at `target`: time_ratio (Crossbow's time, its
    learner search included, over PyTorch's; the target is 0.5x), epochs_ratio and speed_ratio
    (Crossbow's over PyTorch's, so that without a search time_ratio = epochs_ratio /
    speed_ratio), slower_than (the PyTorch runs that
    reached it sooner than Crossbow's fastest); where a side never reached it, its best
    accuracy and how many points it was short."""
    out = {"target": target}
    best = {side: fastest(runs, side, target) for side in ("crossbow", "pytorch")}
    for side, found in best.items():
        if found is None:
            top = max((best_accuracy(r) for r in runs if r["side"] == side), default=None)
            out[side] = None if top is None else {
                "reached": False, "best_accuracy": top, "short_points": 100 * (target - top)}
        else:
            out[side] = {"reached": True, "run": name_of(found[0]), **found[1]}
    cb, pt = best["crossbow"], best["pytorch"]
    if cb and pt:
        out.update(time_ratio=cb[1]["time"] / pt[1]["time"],
                   epochs_ratio=cb[1]["epochs"] / pt[1]["epochs"],
                   speed_ratio=cb[1]["images_per_s"] / pt[1]["images_per_s"])
        out["slower_than"] = [name_of(r) for r in runs if r["side"] == "pytorch"
                              and (a := at_target(r, target)) and a["time"] < cb[1]["time"]]
    return out


def _search(found):
    return f" ({found['search_s']:.0f} s of it the learner search)" if found["search_s"] else ""


def _cell(found):
    return "not reached" if found is None else \
        f"{found['epochs']:.2f} ep, {found['time']:.0f} s{_search(found)}"


def _side(v):
    if v is None:
        return "not run"
    if not v["reached"]:
        return f"not reached (best {100 * v['best_accuracy']:.2f}%, {v['short_points']:.2f} short)"
    return f"{v['run']}: {v['epochs']:.2f} ep, {v['time']:.0f} s{_search(v)}, " \
        f"{v['images_per_s']:.0f} img/s"


def table(runs, targets):
    """Markdown: one row per run (epochs and training time to each target, images/s over the
    whole run, best accuracy), then one row per target: each side's fastest and the ratios."""
    pct = [f"{100 * t:g}%" for t in targets]
    lines = ["| side | run | batch | images/s | " + " | ".join(pct) + " | best top-1 |",
             "|---|---|---|---|" + "---|" * len(targets) + "---|"]
    for r in runs:
        last = r["curve"][-1] if r["curve"] else None
        speed = f"{rate(last):.0f}" if last else "-"
        batch = (f"{r['batch']}, one process" if r["learners"] is None
                 else f"{r['batch']} x {r['learners']} learner(s)")
        cells = " | ".join(_cell(at_target(r, t)) for t in targets)
        lines.append(f"| {r['side']} | {name_of(r)} | {batch} | {speed} | "
                     f"{cells} | {100 * best_accuracy(r):.2f}% |")
    lines += ["", "| target | Crossbow's fastest | PyTorch's fastest | time (x PyTorch's) | "
              "epochs (x) | images/s (x) | PyTorch runs faster than Crossbow's fastest |",
              "|---|---|---|---|---|---|---|"]
    for t, p in zip(targets, pct):
        v = verdict(runs, t)
        ratios = " | ".join(f"{v[k]:.2f}" if k in v else "-"
                            for k in ("time_ratio", "epochs_ratio", "speed_ratio"))
        slower = ", ".join(v.get("slower_than", [])) or ("none" if "slower_than" in v else "-")
        lines.append(f"| {p} | {_side(v['crossbow'])} | {_side(v['pytorch'])} | {ratios} | "
                     f"{slower} |")
    return "\n".join(lines) + "\n"


def write_runs(runs, path):
    """One JSON line per run, its whole curve included."""
    with open(path, "w") as f:
        for r in runs:
            f.write(json.dumps(r) + "\n")


def read_runs(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def plot(runs, targets, output,
         title="ResNet-20 on CIFAR-10: time to accuracy, Crossbow (solid) and PyTorch (dashed)"):
    """Test accuracy against training time and against epochs, every run of both sides (Crossbow
    solid, PyTorch dashed), the targets dotted, under `title`; writes the PNG `output` and
    returns it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    colours = plt.get_cmap("tab20").colors  # a sweep over several budgets has 16 runs or more
    for i, r in enumerate(runs):
        style = dict(color=colours[i % len(colours)], marker="o", markersize=3, linewidth=1.2,
                     linestyle="-" if r["side"] == "crossbow" else "--",
                     label=f"{r['side']} {name_of(r)}")
        for ax, x in zip(axes, ("time", "epoch")):
            ax.plot([p[x] for p in r["curve"]], [100 * (p["accuracy"] or 0) for p in r["curve"]],
                    **style)
    for ax, xlabel in zip(axes, ("training time (s)", "epoch")):
        for t in targets:
            ax.axhline(100 * t, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test top-1 (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output
