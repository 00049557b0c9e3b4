"""``crossbow plot METRICS...``: one PNG of the runs in JSON-lines metrics files: test accuracy
and training loss against time and epochs, the learning rate, images/s, each learner's
distance to the average model z, and images/s against learners per device. Several files are
drawn side by side, labelled by the settings that tell them apart (run_settings.py); a panel
that would show no more than one point per run is left out."""
import json
import math
import os

from crossbow import run_settings


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


def _finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def _series(records, x, y, scale=1.0):
    points = [(r[x], scale * r[y]) for r in records if _finite(r.get(x)) and _finite(r.get(y))]
    return [tuple(zip(*points))] if points else []


def _distances(records):
    width = max((len(r.get("distance_to_z") or ()) for r in records), default=0)
    lines = []
    for j in range(width):
        points = [(r["time"], r["distance_to_z"][j]) for r in records
                  if len(r.get("distance_to_z") or ()) > j and _finite(r["distance_to_z"][j])]
        if points:
            lines.append(tuple(zip(*points)))
    return lines


def _rates_by_learners(records):
    rates = {}
    for r in records:
        rate = r.get("images_per_s")
        if _finite(rate) and rate > 0 and r.get("learners_per_device"):
            rates.setdefault(r["learners_per_device"], []).append(rate)
    ks = sorted(rates)
    return [(tuple(ks), tuple(sorted(rates[k])[len(rates[k]) // 2] for k in ks))] if ks else []


TIME, EPOCH = "training time (s)", "epoch"
# (y label, x label, records -> [(xs, ys)], one line per item)
PANELS = (
    ("test accuracy (%)", TIME, lambda rs: _series(rs, "time", "accuracy", 100)),
    ("test accuracy (%)", EPOCH, lambda rs: _series(rs, "epoch", "accuracy", 100)),
    ("training loss", TIME, lambda rs: _series(rs, "time", "loss")),
    ("training loss", EPOCH, lambda rs: _series(rs, "epoch", "loss")),
    ("learning rate", EPOCH, lambda rs: _series(rs, "epoch", "lr")),
    ("images/s", TIME, lambda rs: _series(rs, "time", "images_per_s")),
    ("distance to z, each learner", TIME, _distances),
    ("images/s (median)", "learners per device", _rates_by_learners),
)


def _settings(path, records):
    """The run's settings, with the learner count that the autotuner chose."""
    settings = dict(run_settings.read(path))
    chosen = records[-1].get("learners_per_device")
    if settings and settings.get("learners") == "auto" and chosen:
        settings["learners"] = f"auto: {chosen}"
    return settings


def layout(paths, labels=None):
    """What plot() draws: (title, one label per run, [(panel, lines per run)]) where a panel
    is one of PANELS and a run's lines are [(xs, ys)]; only panels with two points or more."""
    runs = [(p, read_metrics(p)) for p in paths]
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    auto_labels, title = run_settings.labels_and_title(
        [(n, _settings(p, rs)) for n, (p, rs) in zip(names, runs)])
    labels = labels or auto_labels
    if len(labels) != len(paths):
        raise ValueError(f"{len(labels)} labels for {len(paths)} metrics files")
    drawn = [(panel, [panel[2](rs) for _, rs in runs]) for panel in PANELS]
    drawn = [(p, lines) for p, lines in drawn
             if any(len(xs) > 1 for run in lines for xs, _ in run)]
    if not drawn:
        raise ValueError(f"nothing to plot: {', '.join(paths)} hold(s) fewer than two records "
                         "of any quantity")
    return title or ", ".join(names), labels, drawn


def plot(paths, output, labels=None):
    """Writes the panels for the runs in `paths` to the PNG `output`; returns `output`."""
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError("crossbow plot needs matplotlib: pip install matplotlib "
                          "(scripts/setup.sh installs it)") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    title, labels, drawn = layout(paths, labels)
    cols = min(len(drawn), 4 if len(drawn) > 6 else 3)
    rows = -(-len(drawn) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.5 * rows + 0.6), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, ((ylabel, xlabel, _), lines) in zip(axes.flat, drawn):
        for i, (label, run) in enumerate(zip(labels, lines)):
            several = len(run) > 1
            for j, (xs, ys) in enumerate(run):
                if several and len(paths) == 1:  # one run's learners: a colour each
                    style = dict(color=colours[j % len(colours)], label=f"learner {j}")
                else:
                    style = dict(color=colours[i % len(colours)], label=None if j else label,
                                 alpha=0.6 if several else 1.0)
                ax.plot(xs, ys, "o-" if len(xs) < 12 else "-", markersize=3, linewidth=1.2,
                        **style)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if len(paths) > 1 or any(len(run) > 1 for run in lines):
            ax.legend(fontsize="small")
    for ax in list(axes.flat)[len(drawn):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output
