"""`crossbow reproduce`: the recipes' schedules, and a whole run on a tiny archive laid out as
../shared/data's CIFAR-10 JPEGs (converted, trained, resumed, tabulated)."""
import io
import json
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

from crossbow import recipes, reproduce


def test_compressing_keeps_the_drops_at_the_same_fractions():
    o = recipes.get("he-resnet20").options("published", epochs=60)
    assert o["steps"] == [30, 45] and o["epochs"] == 60
    assert (o["batch_size"], o["learners"], o["sync"], o["lr"]) == (64, "2", "ssgd", 0.1)
    full = recipes.get("goyal-resnet18-imagenette").options("published")
    assert full["steps"] == [30, 60, 80] and full["warmup"] == 5 and full["epochs"] == 90
    assert recipes.get("goyal-resnet18-imagenette").options("published", 18)["steps"] == \
        [6, 12, 16]


def test_the_sma_version_scales_the_rate_by_the_square_root_of_the_batch_ratio():
    cifar = recipes.get("he-resnet56").options("sma", 40)
    assert cifar["lr"] == pytest.approx(0.1 * (16 / 128) ** 0.5, abs=1e-4)
    assert (cifar["batch_size"], cifar["learners"], cifar["sync"]) == (16, "auto", "sma")
    assert cifar["weight_decay"] == 1e-4 and cifar["warmup"] == 1.0 and cifar["steps"] == [20, 30]
    # SMA's learners at sqrt(N) times that (docs/design/engine.md); the published S-SGD as given.
    assert cifar["lr_learner_scaling"] == "sqrt"
    assert "lr_learner_scaling" not in recipes.get("he-resnet56").options("published")
    assert recipes.get("goyal-resnet50-imagenette").options("sma")["lr"] == 0.025


def test_only_goyals_published_recipe_starts_each_residual_branch_at_zero():
    assert recipes.get("goyal-resnet18-imagenette").options("published")["zero_init_residual"]
    assert "zero_init_residual" not in recipes.get("goyal-resnet18-imagenette").options("sma")
    for variant in recipes.VARIANTS:
        assert "zero_init_residual" not in recipes.get("he-resnet20").options(variant)


def test_every_recipe_passes_the_option_table_in_both_variants():
    from crossbow.trainer import checked_options
    for recipe in recipes.RECIPES.values():
        for variant in recipes.VARIANTS:
            o = recipe.options(variant, epochs=4)
            checked_options({k: v for k, v in o.items() if k != "net"})


def test_the_fastai_leaderboard_recipe_is_ranger_with_flat_then_cosine():
    five = recipes.get("fastai-imagenette-5ep")
    assert five.published_top1 == 0.8577 and recipes.get("fastai-imagenette-20ep").epochs == 20
    o = five.options("published")
    assert (o["lr"], o["batch_size"] * int(o["learners"]), o["optimizer"], o["lookahead_k"],
            o["lookahead_alpha"], o["betas"], o["eps"]) == (8e-3, 64, "radam", 6, 0.5,
                                                              [0.95, 0.99], 1e-6)
    assert (o["lr_policy"], o["flat_fraction"], o["warmup"]) == ("flatcos", 0.75, 0)
    assert (o["weight_decay"], o["bias_decay"], o["label_smoothing"]) == (1e-2, False, 0.1)
    sma = five.options("sma", epochs=20)
    assert sma["lr"] == pytest.approx(8e-3 * (16 / 64) ** 0.5) and sma["sync"] == "sma"
    assert (sma["lr_policy"], sma["flat_fraction"], sma["warmup"]) == ("flatcos", 0.75, 1.0)


def test_published_figures_are_the_papers():
    top1 = {n: recipes.get(f"he-{n}").published_top1
            for n in ("resnet20", "resnet32", "resnet56", "resnet110")}
    assert top1 == {"resnet20": 0.9125, "resnet32": 0.9249, "resnet56": 0.9303,
                    "resnet110": 0.9357}
    # ResNet-110's 400 iterations at a tenth of the rate, as a warm-up of 400 of 64k.
    assert recipes.get("he-resnet110").options("published")["warmup"] == \
        pytest.approx(164 * 400 / 64000, abs=1e-3)


def test_bad_recipe_variant_and_epochs_are_refused():
    with pytest.raises(ValueError, match="unknown recipe 'he-resnet2'; did you mean"):
        recipes.get("he-resnet2")
    with pytest.raises(ValueError, match="unknown variant 'paper'"):
        recipes.get("he-resnet20").options("paper")
    with pytest.raises(ValueError, match=r"epochs \(--epochs\) must be > 0"):
        recipes.get("he-resnet20").options("sma", 0)


def _cli(*args, cwd="/"):
    return subprocess.run([sys.executable, "-m", "crossbow", "reproduce", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_dry_run_prints_the_train_command_from_anywhere():
    r = _cli("he-resnet20", "--epochs", "60", "--dry-run", "--lr", "0.05", "--cache-dir", "/c")
    assert r.returncode == 0, r.stderr
    command = r.stdout.splitlines()[-1]
    assert command.startswith("crossbow train --net resnet20 --train-db /c/cifar10_train "
                              "--test-db /c/cifar10_test --batch-size 16 --learners auto "
                              "--sync sma --epochs 60 --lr 0.05 --lr-policy multistep "
                              "--steps 30 45 --warmup 1")


def test_net_overrides_the_recipes_and_is_checked_first(tmp_path):
    r = _cli("he-resnet20", "--dry-run", "--net", "docs/examples/small_net.py:small_net",
             cwd=os.path.join(os.path.dirname(__file__), "..", ".."))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith(
        "crossbow train --net docs/examples/small_net.py:small_net --train-db")
    r = _cli("he-resnet20", "--net", str(tmp_path / "none.py:f"), "--data-dir", str(tmp_path),
             "--cache-dir", str(tmp_path / "c"))
    assert r.returncode == 1 and "no Python file" in r.stderr and "none.py" in r.stderr
    assert not (tmp_path / "c").exists()


def test_a_bad_override_is_refused_before_any_data_is_converted(tmp_path):
    r = _cli("he-resnet20", "--lr", "-3", "--data-dir", str(tmp_path), "--cache-dir",
             str(tmp_path / "c"), "--output", str(tmp_path / "o"))
    assert r.returncode == 1 and "lr (--lr) must be finite and >= 0, got -3" in r.stderr
    assert not (tmp_path / "c").exists() and not (tmp_path / "o").exists()
    r = _cli("he-resnet20", "--dry-run", "--sync", "sam")
    assert r.returncode == 1 and "did you mean 'sma'" in r.stderr


def test_unknown_recipe_and_missing_data_are_clear_errors(tmp_path):
    r = _cli("vgg-cifar")
    assert r.returncode == 1 and "unknown recipe 'vgg-cifar'; did you mean 'vgg16-cifar'" in r.stderr
    r = _cli("he-resnet20", "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "c"),
             "--output", str(tmp_path / "o"))
    assert r.returncode == 1
    assert f"no cifar10-jpg.tar.gz in '{tmp_path}'" in r.stderr and "--data-dir" in r.stderr


def _tiny_cifar_archive(folder, per_class=(12, 4)):
    """cifar10-jpg.tar.gz with two classes of 32x32 JPEGs, brighter for class b."""
    from PIL import Image
    rng = np.random.default_rng(0)
    path = folder / "cifar10-jpg.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for split, n in zip(("train", "test"), per_class):
            for label, base in (("airplane", 40), ("bird", 200)):
                for i in range(n):
                    pixels = np.clip(base + rng.normal(0, 20, (32, 32, 3)), 0, 255)
                    buf = io.BytesIO()
                    Image.fromarray(pixels.astype(np.uint8)).save(buf, "JPEG")
                    info = tarfile.TarInfo(f"cifar10-jpg/{split}/{label}/{i:04d}.jpg")
                    info.size = buf.tell()
                    buf.seek(0)
                    tar.addfile(info, buf)
    return path


def test_a_run_converts_trains_writes_its_row_and_resumes(tmp_path):
    _tiny_cifar_archive(tmp_path)
    out = tmp_path / "run"
    args = ("he-resnet20", "--epochs", "2", "--data-dir", str(tmp_path), "--cache-dir",
            str(tmp_path / "cache"), "--output", str(out), "--learners", "1", "--batch-size",
            "4", "--no-progress")
    r = _cli(*args)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "converting" in r.stderr and "result:" in r.stdout
    settings = json.loads((out / "reproduce.json").read_text())
    assert settings["options"]["steps"] == [1, 1.5] and settings["options"]["learners"] == "1"
    assert settings["train_images"] == 24
    row = json.loads((out / "result.json").read_text())
    assert row["complete"] and row["epochs_done"] == 2 and row["compressed"]
    assert row["published_top1"] == 0.9125 and 0 <= row["best_top1"] <= 1
    assert row["final_top1"] is not None and row["cpu"] and row["images_per_s"] > 0
    assert (out / "curves.png").stat().st_size > 0
    assert sorted(os.listdir(tmp_path / "cache")) == ["cifar10-jpg", "cifar10_test",
                                                      "cifar10_train"]

    again = _cli(*args)  # the same command: nothing converted, the finished run resumed
    assert again.returncode == 0, again.stderr[-3000:]
    assert "converting" not in again.stderr and "resumed from" in again.stderr
    assert json.loads((out / "result.json").read_text())["epochs_done"] == 2


def test_a_resumed_run_counts_each_epoch_once(tmp_path):
    lines = [{"epoch": 1.0, "accuracy": 0.5, "time": 10}, {"epoch": 1.5, "loss": 1.0, "time": 15},
             {"epoch": 2.0, "accuracy": 0.6, "time": 20}, {"epoch": 2.0, "accuracy": 0.7,
                                                           "time": 21}]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert [r["accuracy"] for r in reproduce.evaluations(str(path))] == [0.5, 0.7]
    assert reproduce.evaluations(str(tmp_path / "none.jsonl")) == []
