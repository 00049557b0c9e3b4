"""A run's settings beside its metrics file (``m.jsonl`` -> ``m.run.json``), so that plots and
TensorBoard can say what was run: net, sync, batch size, learners, devices, learning rate.

The C++ loop owns the metrics file (it truncates or appends it); the settings are Python's, so
they live in a file of their own, written by rank 0 when ``Trainer.fit`` starts.
"""
import json
import os

# What a label or a title names, in this order: (setting, how it reads).
LABELLED = (("net", "{}"), ("sync", "{}"), ("batch_size", "batch {}"),
            ("learners", "{} learner(s)"), ("devices", "{}"), ("ranks", "{} ranks"))
KEPT = ("net", "sync", "batch_size", "learners", "devices", "lr", "lr_policy", "epochs",
        "iterations", "time_limit", "alpha", "seed")


def path_for(metrics_path):
    """Where the settings of the run that writes ``metrics_path`` go."""
    return os.path.splitext(os.fspath(metrics_path))[0] + ".run.json"


def of_trainer(options, net_name, ranks=1):
    """The settings of a run from the Trainer's options and its net's name."""
    settings = {k: options[k] for k in KEPT if k in options and k != "net"}
    settings["net"] = net_name
    settings["learners"] = str(options.get("learners"))
    if ranks > 1:
        settings["ranks"] = ranks
    return settings


def write(metrics_path, settings):
    path = path_for(metrics_path)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(settings, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return path


def read(metrics_path):
    """The settings written beside ``metrics_path``, or {} where there are none."""
    path = path_for(metrics_path)
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        try:
            settings = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not a JSON object of run settings ({e.msg})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: expected a JSON object of run settings")
    return settings


def describe(settings, keys=None):
    """'resnet20, sma, batch 16, auto learner(s)': the LABELLED settings among ``keys``."""
    keys = [k for k, _ in LABELLED] if keys is None else keys
    return ", ".join(form.format(settings[k]) for k, form in LABELLED
                     if k in keys and settings.get(k) not in (None, ""))


def labels_and_title(runs):
    """For [(name, settings)]: one label per run from the settings that differ between them,
    and a title from those they share. A run without settings is labelled by its name."""
    known = [s for _, s in runs if s]
    keys = [k for k, _ in LABELLED]
    shared = [k for k in keys if known and len({json.dumps(s.get(k)) for s in known}) == 1
              and len(known) == len(runs)]
    differ = [k for k in keys if k not in shared]
    labels = [describe(s, differ) or name if s else name for name, s in runs]
    if len(set(labels)) < len(labels):  # the settings do not tell them apart: add the name
        labels = [f"{name}: {label}" if label != name else name
                  for (name, _), label in zip(runs, labels)]
    title = describe(known[0], shared) if shared else ""
    if len(runs) > 1:
        title = (title + ": " if title else "") + " vs ".join(labels)
    return labels, title
