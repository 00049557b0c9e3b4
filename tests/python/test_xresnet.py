"""The xresnet family's structure and init as fastai's (nets/xresnet.py), without fastai:
test_xresnet_fastai.py compares with fastai's objects themselves where the peer's venv has it."""
import numpy as np
import pytest

from crossbow import nets
from conftest import needs_C


def _inits(m):
    return {op["outputs"][0]: op for op in m.init_ops}


@needs_C
def test_init_is_fastais_init_cnn():
    m = nets.builder("xse_resnext50_mish_sa", num_classes=10, input_size=64)
    inits = _inits(m)
    weights = [b for b in m.params if b.endswith("_w")]
    assert weights and all(inits[w]["type"] == "MSRAFill" and inits[w]["args"]["mode"] == "fan_in"
                           for w in weights)
    biases = [b for b in m.params if b.endswith("_b")]
    assert all(inits[b]["type"] == "ConstantFill" and inits[b]["args"]["value"] == 0
               for b in biases)
    scales = {b: inits[b]["args"]["value"] for b in m.params if b.endswith("_bn_s")}
    last = {b for b in scales if b.endswith("c_bn_s")}  # the end of each bottleneck's branch
    assert len(last) == 16 and all(scales[b] == 0 for b in last)
    assert all(scales[b] == 1 for b in set(scales) - last)
    assert [inits[b]["args"]["value"] for b in m.params if b.endswith("_gain_g")] == [0]


@needs_C
def test_weights_start_kaiming_normal_with_fan_in():
    model = nets.build("xresnet50", num_classes=10, input_size=32, seed=1)
    w = model.get_param("stage1_1c_conv_w")  # 1x1, 64 -> 256: fan_in 64, fan_out 256
    assert w.shape == (256, 64, 1, 1)
    assert abs(w.std() / np.sqrt(2 / 64) - 1) < 0.05
    assert abs(w.mean()) < 0.01


@needs_C
def test_xse_resnext50_has_groups_squeeze_excitation_and_one_attention():
    m = nets.builder("xse_resnext50_mish_sa", num_classes=10, input_size=64)
    grouped = [op for op in m.ops if op["type"] == "Conv" and op["name"].endswith("b_conv")]
    assert len(grouped) == 16 and all(op["args"]["group"] == 32 for op in grouped)
    assert [m.shape(op["outputs"][0])[1] for op in grouped[:4]] == [128, 128, 128, 256]
    assert m.shape("stage1_1_se_reduce_conv") == (None, 16, 1, 1)  # ceil(256 // 16 / 8) * 8
    assert m.shape("stage4_1_se_reduce_conv") == (None, 128, 1, 1)
    assert sum(op["type"] == "Sigmoid" for op in m.ops) == 16
    assert [op["name"] for op in m.ops if op["type"] == "SpectralNorm"] == ["stage1_3_sa_sn"]
    assert not any(op["type"] == "Relu" for op in m.ops)
    assert sum(op["type"] == "Mish" for op in m.ops) == 3 + 16 * 3 + 16  # stem, blocks, SE


@needs_C
def test_shortcuts_average_pool_then_project():
    m = nets.builder("xresnet18", num_classes=10, input_size=64)
    types = {op["name"]: op["type"] for op in m.ops}
    assert types["stage2_1_down"] == "AveragePool" and types["stage2_1_proj_conv"] == "Conv"
    assert "stage1_1_proj_conv" not in types  # 64 -> 64 at stride 1: the identity
    assert m.shape("stem_pool") == (None, 64, 16, 16) and m.shape("pool") == (None, 512, 1, 1)


def test_bad_names_and_sizes_are_refused():
    from crossbow.nets.xresnet import parse, xresnet
    assert parse("xse_resnext50_mish_sa") == ("xse_resnext50", "mish", True)
    assert parse("xresnet34_sa") == ("xresnet34", "relu", True)
    with pytest.raises(ValueError, match="unknown xresnet 'xresnet19'"):
        parse("xresnet19")
    with pytest.raises(ValueError, match="must be a multiple of 32"):
        xresnet("xresnet18", input_size=100)
    with pytest.raises(ValueError, match="already"):
        nets.builder("xresnet18", zero_init_residual=True)
