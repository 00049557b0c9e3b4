"""`crossbow reproduce fastai-tutorial` and `fastai-record`: fastai's two Imagenette recipes as
Crossbow's, with fastai's schedules, optimisers and evaluation crop (each of those checked
against fastai in test_fastai_{schedule,optimizer,crops}.py), and their nets from the zoo."""
import pytest

from crossbow import nets, recipes

FASTAI = ("fastai-tutorial", "fastai-record")


def test_the_tutorial_is_adam_with_one_cycle_at_fastais_batch():
    o = recipes.get("fastai-tutorial").options("published")
    assert (o["net"], o["lr"], o["batch_size"] * int(o["learners"]), o["sync"]) == \
        ("xresnet34", 1e-3, 64, "ssgd")
    assert (o["optimizer"], o["betas"][1], o["eps"], o["weight_decay"], o["bias_decay"]) == \
        ("adamw", 0.99, 1e-5, 1e-2, False)
    assert (o["lr_policy"], o["warmup"], o["warmup_start"], o["lr_end"], o["momentum_cycle"]) == \
        ("onecycle", 5 / 4, 1 / 25, 1e-5, [0.95, 0.85, 0.95])
    assert (o["min_crop_area"], o["eval_crop"], o["input_size"]) == (0.35, "squash", 128)
    assert "label_smoothing" not in o
    # The one-cycle keeps its quarter-run warm-up in 20 epochs and in the SMA version.
    sma = recipes.get("fastai-tutorial").options("sma", epochs=20)
    assert (sma["warmup"], sma["warmup_start"], sma["sync"], sma["batch_size"]) == \
        (5.0, 1 / 25, "sma", 16)
    assert sma["lr"] == pytest.approx(1e-3 * (16 / 64) ** 0.5)


def test_the_record_recipe_is_ranger_with_flat_cos():
    o = recipes.get("fastai-record").options("published")
    assert (o["net"], o["lr"], o["batch_size"] * int(o["learners"]), o["label_smoothing"]) == \
        ("xse_resnext50_mish_sa", 8e-3, 64, 0.1)
    assert (o["optimizer"], o["radam_eps"], o["lookahead_k"], o["lookahead_alpha"], o["betas"],
            o["eps"], o["weight_decay"], o["bias_decay"]) == \
        ("radam", "corrected", 6, 0.5, [0.95, 0.99], 1e-6, 1e-2, False)
    assert (o["lr_policy"], o["flat_fraction"], o["lr_end"], o["warmup"]) == \
        ("flatcos", 0.75, 1e-5, 0)
    assert "momentum_cycle" not in o and o["eval_crop"] == "squash"


@pytest.mark.parametrize("name", FASTAI)
def test_the_recipes_pass_the_option_table(name):
    pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")
    from crossbow.trainer import checked_options
    for variant in recipes.VARIANTS:
        o = recipes.get(name).options(variant, epochs=4)
        checked_options({k: v for k, v in o.items() if k != "net"})


@pytest.mark.parametrize("name", FASTAI)
def test_the_recipes_net_is_in_the_zoo(name):
    net = recipes.get(name).net
    assert net in nets.NAMES
    pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")
    o = recipes.get(name).options("published")
    m = nets.builder(net, num_classes=o["num_classes"], input_size=o["input_size"])
    assert m.input_shape == (3, 128, 128) and m.num_classes == 10
    assert nets.PRESETS[net] == "imagenet"  # the preset whose evaluation eval_crop replaces
