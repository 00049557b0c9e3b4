"""crossbow_train, the C++ trainer for machines without our Python module: it trains what
`crossbow train --export` / `crossbow reproduce --export` describe exactly as the Python
Trainer does, refuses what it cannot honour, and reads raw and JPEG records without OpenCV's
codecs."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, script
from crossbow import _native, cli, convert, trainer

pytestmark = pytest.mark.skipif(not _native.available(), reason="crossbow._C is not built")

BUILD = os.path.join(ROOT, "build")
TOOL = os.path.join(BUILD, "crossbow_train")
SAMPLE = os.path.join(ROOT, "data", "samples", "cifar10")
needs_tool = pytest.mark.skipif(not os.path.exists(TOOL), reason="build/crossbow_train not built")

OPTIONS = dict(batch_size=8, learners="2", sync="sma", iterations=6, eval_every=6, lr=0.05,
               workers=1, progress=False, seed=3)


@pytest.fixture(scope="module")
def dbs(tmp_path_factory):
    """The CIFAR-10 sample as raw and as encoded (JPEG) records, train and test."""
    out = tmp_path_factory.mktemp("dbs")
    for encoded in (False, True):
        for split in ("train", "test"):
            convert.image_folders(os.path.join(SAMPLE, split) + "/",
                                  out / f"{split}_{'jpeg' if encoded else 'raw'}",
                                  encoded=encoded, progress=False)
    return out


def spec_file(folder):
    path = folder / "spec.json"
    path.write_text(json.dumps(trainer.Trainer("resnet20", None, iterations=1).learner_spec()))
    return path


def run_tool(*args, env=None):
    """(exit code, the JSON line, stderr) of crossbow_train."""
    done = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env, cwd="/")
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}"
    return done.returncode, json.loads(line), done.stderr


@needs_tool
def test_an_exported_run_trains_as_the_python_trainer_does(dbs, tmp_path):
    train, test = dbs / "train_raw", dbs / "test_raw"
    t = trainer.Trainer("resnet20", str(train), str(test), label_smoothing=0.1, **OPTIONS)
    command = t.export(str(tmp_path / "run"))
    expected = t.fit()
    words = command.split()
    assert words[0] == "crossbow_train" and words[words.index("--train_db") + 1] == str(train)
    rc, got, err = run_tool(*words[1:])
    assert rc == 0, err
    for key in ("iterations", "epochs", "learners_per_device", "stop_reason"):
        assert got[key] == expected[key], key
    # The same learners on the same batches: the same numbers, bit for bit or nearly.
    assert got["test_loss"] == pytest.approx(expected["test_loss"], rel=1e-5)
    assert got["accuracy"] == pytest.approx(expected["accuracy"])
    options = json.loads((tmp_path / "run" / "options.json").read_text())
    assert options["augment"] == "cifar" and options["num_classes"] == 10  # the net's, filled in
    assert json.loads((tmp_path / "run" / "spec.json").read_text())["net"]


@needs_tool
def test_flags_override_the_options_file_and_the_nets_options_are_refused(dbs, tmp_path):
    t = trainer.Trainer("resnet20", str(dbs / "train_raw"), None, **OPTIONS)
    words = t.export(str(tmp_path / "run")).split()[1:]
    rc, got, err = run_tool(*words, "--iterations", "2", "--learners=1")
    assert rc == 0, err
    assert got["iterations"] == 2 and got["learners_per_device"] == 1
    rc, got, err = run_tool(*words, "--momentum", "0.5")
    assert rc == 2 and "--momentum is the net's: it is set in the spec" in err
    rc, got, err = run_tool(*words, "--tensorboard", str(tmp_path / "tb"))
    assert rc == 2 and "--tensorboard is crossbow train's alone" in err
    rc, got, err = run_tool(*words, "stray")
    assert rc == 2 and "unexpected argument 'stray'" in err


@needs_tool
@pytest.mark.parametrize("args, message", [
    ((), "--spec is required"),
    (("--spec", "/nonexistent.json"), "cannot read --spec '/nonexistent.json'"),
    (("--augment", "auto"), "--augment auto means the net's preset, and a spec does not name it"),
    (("--augment", "cifr"), "unknown input preset 'cifr'; did you mean 'cifar'?"),
    (("--batch_size", "0"), "batch_size (--batch-size) must be > 0, got 0"),
])
def test_bad_input_is_an_error_line_naming_it(dbs, tmp_path, args, message):
    spec = spec_file(tmp_path)
    base = ("--spec", spec, "--train_db", dbs / "train_raw", "--augment", "cifar",
            "--iterations", "1")
    rc, got, err = run_tool(*(base[2:] if args == () else base), *args)
    assert rc == 1, err
    assert message in got["error"]


@needs_tool
def test_raw_and_jpeg_records_train_without_the_codecs_library_and_png_ones_say_it_is_missing(
        dbs, tmp_path):
    # A folder with libcrossbow_data.so and no libcrossbow_codecs.so beside it, found first.
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(os.path.join(BUILD, "libcrossbow_data.so"), lib)
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
    spec = spec_file(tmp_path)
    common = ("--spec", spec, "--augment", "cifar", "--iterations", "1", "--batch_size", "4",
              "--learners", "1", "--no-progress")
    # JPEGs decode through libjpeg-turbo itself (data/jpeg_region.h).
    for db in ("train_raw", "train_jpeg"):
        rc, got, err = run_tool(*common, "--train_db", dbs / db, env=env)
        assert rc == 0 and got["iterations"] == 1, (db, err)
    png = tmp_path / "train_png"
    convert.image_folders(os.path.join(SAMPLE, "train") + "/", png, encoded=True,
                          encode_type="png", progress=False)
    rc, got, err = run_tool(*common, "--train_db", png, env=env)
    assert rc == 1
    assert "the first record of the DB is unreadable" in got["error"]
    assert f"{lib}/libcrossbow_codecs.so, which does not load" in got["error"]
    assert "OpenCV's imgcodecs" in got["error"]


def test_reproduce_exports_a_recipe_without_converting_its_data(tmp_path, capsys):
    out = tmp_path / "export"
    assert cli.main(["reproduce", "he-resnet32", "--epochs", "30", "--devices", "cuda:0",
                     "--cache-dir", str(tmp_path / "cache"), "--export", str(out)]) == 0
    command = capsys.readouterr().out.strip()
    assert command.startswith(f"crossbow_train --spec {out}/spec.json --options "
                              f"{out}/options.json --train_db {tmp_path}/cache/cifar10_train")
    options = json.loads((out / "options.json").read_text())
    assert options["devices"] == "cuda:0" and options["steps"] == [15.0, 22.5]
    assert json.loads((out / "spec.json").read_text())["device"] == "cuda:0"
    assert not (tmp_path / "cache").exists()
    # The row's settings, less what the machine that trains says (crossbow/machine.py fills it).
    settings = json.loads((out / "reproduce.json").read_text())
    assert settings["recipe"] == "he-resnet32" and settings["options"]["epochs"] == 30
    assert settings["machine"] is None and settings["train_images"] is None
    filled = subprocess.run([sys.executable, os.path.join(ROOT, "python", "crossbow", "machine.py"),
                             str(out / "reproduce.json"), "50000"], capture_output=True,
                            text=True, check=True, env={"PATH": os.environ["PATH"]}, cwd="/")
    filled = json.loads(filled.stdout)
    assert filled["train_images"] == 50000 and "cores" in filled["machine"]["cpu"]


def test_pillow_decoded_binaries_make_the_db_that_the_folders_make(dbs, tmp_path):
    pytest.importorskip("PIL", reason="scripts/datagen/cifar_binary.py decodes with Pillow")
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "cifar_binary", script("cifar_binary.py"))
    cifar_binary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cifar_binary)
    binary = str(tmp_path / "train.bin")
    assert cifar_binary.main([os.path.join(SAMPLE, "train"), binary]) == 0
    convert.cifar10(tmp_path / "db", [binary], progress=False)
    made, expected = ([datum for _, datum in convert.records(db)]
                      for db in (tmp_path / "db", dbs / "train_raw"))
    assert len(made) == len(expected) > 0
    for a, b in zip(made, expected):
        assert (a["label"], a["channels"], a["height"], a["width"]) == (
            b["label"], b["channels"], b["height"], b["width"])
        assert a["data"] == b["data"]  # Pillow's pixels are OpenCV's
    assert cifar_binary.main([os.path.join(SAMPLE, "nope"), binary]) == 1
