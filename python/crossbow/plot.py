"""``crossbow plot METRICS...``: accuracy against time and epochs, images/s against learners,
from the JSON-lines metrics files that training writes; one PNG."""
import json
import os


def read_metrics(path):
    """The records of one metrics file (a list of dicts); ValueError naming the line if bad."""
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{number}: not a JSON line ({e.msg})") from None
    if not records:
        raise ValueError(f"{path}: no metrics records")
    return records


def plot(paths, output, labels=None):
    """Writes the three panels for the runs in `paths` to the PNG `output`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = labels or [os.path.splitext(os.path.basename(p))[0] for p in paths]
    if len(labels) != len(paths):
        raise ValueError(f"{len(labels)} labels for {len(paths)} metrics files")
    fig, (by_time, by_epoch, by_learners) = plt.subplots(1, 3, figsize=(16, 4.5))
    for path, label in zip(paths, labels):
        records = read_metrics(path)
        tests = [r for r in records if r.get("accuracy") is not None]
        by_time.plot([r["time"] for r in tests], [100 * r["accuracy"] for r in tests], label=label)
        by_epoch.plot([r["epoch"] for r in tests], [100 * r["accuracy"] for r in tests],
                      label=label)
        rates = {}
        for r in records:
            if r.get("images_per_s"):
                rates.setdefault(r["learners_per_device"], []).append(r["images_per_s"])
        ks = sorted(rates)
        by_learners.plot(ks, [sorted(rates[k])[len(rates[k]) // 2] for k in ks], "o-",
                         label=label)
    for ax, xlabel, ylabel in ((by_time, "training time (s)", "test accuracy (%)"),
                               (by_epoch, "epoch", "test accuracy (%)"),
                               (by_learners, "learners per device", "images/s (median)")):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output
