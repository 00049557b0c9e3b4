"""`crossbow plot`: panels of real runs, labels from the run settings that tell runs apart,
a title from those they share, no panel of single points."""
import json

import pytest

import crossbow
from crossbow import cli, run_settings
from crossbow.plot import layout
from test_trainer import _blobs, needs_native

PNG = b"\x89PNG\r\n\x1a\n"


def _panels(drawn):
    return [(ylabel, xlabel) for (ylabel, xlabel, _), _ in drawn]


def test_labels_name_what_differs_and_the_title_what_is_shared():
    a = dict(net="resnet20", sync="sma", batch_size=16, learners="4", devices="cpu")
    b = dict(a, sync="ssgd", learners="1")
    labels, title = run_settings.labels_and_title([("a", a), ("b", b)])
    assert labels == ["sma, 4 learner(s)", "ssgd, 1 learner(s)"]
    assert title == "resnet20, batch 16, cpu: sma, 4 learner(s) vs ssgd, 1 learner(s)"
    labels, title = run_settings.labels_and_title([("a", a)])
    assert labels == ["a"] and title == "resnet20, sma, batch 16, 4 learner(s), cpu"
    labels, title = run_settings.labels_and_title([("a", a), ("old", {})])
    assert labels[1] == "old" and "sma" in labels[0]
    labels, _ = run_settings.labels_and_title([("x", a), ("y", dict(a))])
    assert labels == ["x", "y"]  # the same settings: the file names tell them apart


def _record(i, **extra):
    r = {"iteration": 10 * i, "epoch": 0.5 * i, "time": 2.0 * i, "loss": 2.0 / (i + 1),
         "lr": 0.1, "images_per_s": 90.0 + i, "learners_per_device": 2,
         "distance_to_z": [0.1 * i, 0.2 * i]}
    r.update(extra)
    return json.dumps(r) + "\n"


def test_a_quantity_with_one_point_gets_no_panel(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text("".join(_record(i) for i in range(4)) + _record(4, accuracy=0.3, loss=None))
    title, labels, drawn = layout([str(path)])
    panels = _panels(drawn)
    assert ("test accuracy (%)", "training time (s)") not in panels  # one evaluation
    assert ("images/s (median)", "learners per device") not in panels  # one learner count
    assert ("training loss", "epoch") in panels and ("learning rate", "epoch") in panels
    distances = dict(zip(panels, (lines for _, lines in drawn)))[
        ("distance to z, each learner", "training time (s)")]
    assert len(distances[0]) == 2  # one line per learner
    assert title == "m" and labels == ["m"]
    path.write_text(_record(0))
    with pytest.raises(ValueError, match="nothing to plot"):
        layout([str(path)])


@needs_native
def test_plot_of_real_runs_side_by_side(tmp_path, capsys):
    paths = []
    for sync, learners in (("sma", 2), ("ssgd", 2), ("sgd", 1)):
        path = tmp_path / f"{sync}.jsonl"
        crossbow.Trainer(net="lenet", train_db=_blobs(), test_db=_blobs(64, 1), batch_size=16,
                         learners=learners, sync=sync, epochs=3, lr=0.02, log_every=4,
                         metrics=str(path), progress=False).fit()
        paths.append(str(path))
        assert run_settings.read(path)["sync"] == sync
    title, labels, drawn = layout(paths)
    assert labels == ["sma, 2 learner(s)", "ssgd, 2 learner(s)", "sgd, 1 learner(s)"]
    assert title.startswith("lenet, batch 16, cpu: ")
    assert {("test accuracy (%)", "training time (s)"), ("test accuracy (%)", "epoch"),
            ("training loss", "training time (s)"), ("training loss", "epoch"),
            ("learning rate", "epoch"), ("images/s", "training time (s)"),
            ("distance to z, each learner", "training time (s)")} == set(_panels(drawn))
    out = tmp_path / "runs.png"
    assert cli.main(["plot", *paths, "--output", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG and str(out) in capsys.readouterr().out
