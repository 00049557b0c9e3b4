"""The model zoo: parameter counts, structure and summaries (shapes from the C++ schemas)."""
import pytest

import crossbow
from crossbow import nets
from conftest import hide_C, needs_C

PARAMS = {  # 10 classes (ImageNet ResNets: 1000), BN scale+bias counted, running stats not
    "lenet": 431_080,       # Caffe's examples/mnist LeNet
    "resnet20": 269_722,    # He et al. 2016, option A: 0.27M
    "resnet32": 464_154,    # 0.46M
    "resnet56": 853_018,    # 0.85M
    "resnet110": 1_727_962,  # 1.7M
    "vgg16": 14_728_266,    # conv bias + BN, one FC 512 -> 10
    "resnet18": 11_689_512,  # torchvision resnet18
    "resnet34": 21_797_672,  # torchvision resnet34
    "resnet50": 25_557_032,  # torchvision resnet50
    # timm's, and torchvision's plus the deep stem's 19,232 (3*32*9 + 32*32*9 + 32*64*9 convs,
    # 2*(32+32+64) BN, less the 7x7 stem's 3*64*49 + 2*64)
    "resnet18d": 11_708_744,
    "resnet50d": 25_576_264,
    # MaxBlurPool's blur is fixed: no parameter added
    "resnet18d_maxblur": 11_708_744,
    "resnet50d_maxblur": 25_576_264,
    # fastai's own counts (fastai.vision.models.xresnet, n_out=1000): ResNet-D's, and ResNeXt
    # 32x4d with SE; self-attention adds C^2 + 1 (64 and 256 channels)
    "xresnet18": 11_708_744,
    "xresnet34": 21_816_904,
    "xresnet50": 25_576_264,
    "xse_resnext50": 27_579_128,
    "xresnet18_mish_sa": 11_712_841,
    "xse_resnext50_mish_sa": 27_644_665,
}


def test_every_net_is_listed_and_counted():
    assert set(nets.NAMES) == set(PARAMS)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_parameter_count(name):
    m = nets.builder(name)
    assert m.num_params() == PARAMS[name]
    assert f"Total params: {PARAMS[name]:,}" in m.summary()


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_every_net_makes_a_consistent_spec(name):
    m = nets.builder(name)
    spec = m.to_spec()
    produced = set(spec["net"]["external_inputs"])
    for op in spec["net"]["ops"]:
        assert set(op["inputs"]) <= produced, (name, op)
        produced |= set(op["outputs"])
    assert {spec["loss"], spec["output"]} <= produced
    assert sorted(spec["init_net"]["external_outputs"]) == sorted(spec["params"] + spec["state"])
    assert m.shape(spec["output"]) == (None, m.num_classes)


def test_num_classes_changes_only_the_last_layer():
    assert nets.builder("resnet32", num_classes=100).num_params() == 464_154 + 90 * 65
    assert nets.builder("resnet50").num_classes == 1000
    assert nets.builder("resnet50", num_classes=10).num_classes == 10
    with pytest.raises(ValueError, match="num_classes"):
        nets.builder("lenet", num_classes=1)


@pytest.mark.parametrize("name", ["resnet18", "resnet34", "resnet50"])
def test_imagenet_nets_take_an_input_size(name):
    m = nets.builder(name, num_classes=10, input_size=128)
    assert m.input_shape == (3, 128, 128)
    assert m.shape("pool") == (None, 2048 if name == "resnet50" else 512, 1, 1)
    assert m.num_params() == nets.builder(name, num_classes=10).num_params()
    with pytest.raises(ValueError, match=r"input_size \(--input-size\) of .* got 16"):
        nets.builder(name, input_size=16)


def test_the_cifar_nets_refuse_an_input_size():
    with pytest.raises(ValueError, match="resnet20 has a fixed input size"):
        nets.builder("resnet20", input_size=64)


def test_unknown_net_suggests_a_name():
    with pytest.raises(ValueError, match="did you mean 'resnet32'"):
        nets.builder("resnt32")


def test_lenet_layers():
    m = nets.builder("lenet")
    assert [(op["name"], op["type"]) for op in m.ops[:7]] == [
        ("conv1", "Conv"), ("pool1", "MaxPool"), ("conv2", "Conv"), ("pool2", "MaxPool"),
        ("ip1", "FC"), ("relu1", "Relu"), ("ip2", "FC")]
    assert m.shape("pool2") == (None, 50, 4, 4) and m.input_shape == (1, 28, 28)


@pytest.mark.parametrize("depth", [20, 32, 56, 110])
def test_cifar_resnet_structure(depth):
    m = nets.builder(f"resnet{depth}")
    convs = [op for op in m.ops if op["type"] == "Conv"]
    assert len(convs) == depth - 1  # + the FC makes depth weighted layers
    assert all(len(op["inputs"]) == 2 for op in convs)  # no conv bias before BN
    assert all(op["args"]["kernel"] == 3 for op in convs)
    # option A: subsample with a 1x1 stride-2 max pool, append zero channels
    downs = [op for op in m.ops if op["type"] == "MaxPool"]
    pads = [op for op in m.ops if op["type"] == "ChannelPad"]
    assert [(op["args"]["kernel"], op["args"]["stride"]) for op in downs] == [(1, 2)] * 2
    assert [op["args"]["after"] for op in pads] == [16, 32]
    assert [op["args"]["before"] for op in pads] == [0, 0]
    assert sum(op["type"] == "Add" for op in m.ops) == 3 * (depth - 2) // 6
    assert m.shape("pool") == (None, 64, 1, 1)
    with pytest.raises(ValueError, match="6n\\+2"):
        from crossbow.nets.cifar_resnet import resnet
        resnet(21)


def test_vgg16_structure():
    m = nets.builder("vgg16")
    convs = [op for op in m.ops if op["type"] == "Conv"]
    assert [m.shape(op["outputs"][0])[1] for op in convs] == [
        64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
    assert sum(op["type"] == "SpatialBN" for op in m.ops) == 13
    assert sum(op["type"] == "MaxPool" for op in m.ops) == 5
    assert m.shape("pool5") == (None, 512, 1, 1)
    assert [op["type"] for op in m.ops].count("FC") == 1


def test_resnet50_structure():
    m = nets.builder("resnet50")
    assert m.input_shape == (3, 224, 224)
    assert m.shape("pool1") == (None, 64, 56, 56)
    assert m.shape("res2_3_relu") == (None, 256, 56, 56)
    assert m.shape("res3_4_relu") == (None, 512, 28, 28)
    assert m.shape("res4_6_relu") == (None, 1024, 14, 14)
    assert m.shape("res5_3_relu") == (None, 2048, 7, 7)
    # v1.5: the stride sits on the 3x3 conv; projections only on the first block of a stage
    assert next(op for op in m.ops if op["name"] == "res3_1b_conv")["args"]["stride"] == 2
    assert next(op for op in m.ops if op["name"] == "res3_1a_conv")["args"]["stride"] == 1
    projections = [op["name"] for op in m.ops if op["name"].endswith("_proj_conv")]
    assert projections == ["res2_1_proj_conv", "res3_1_proj_conv", "res4_1_proj_conv",
                           "res5_1_proj_conv"]
    assert sum(op["type"] == "Conv" for op in m.ops) == 53
    assert m.accuracy_blobs == ["top1", "top5"]


@pytest.mark.parametrize("name", ["resnet18d", "resnet50d"])
def test_resnet_d_has_a_deep_stem_and_average_pool_shortcuts(name):
    m = nets.builder(name, input_size=128)
    conv = {op["name"]: op["args"] for op in m.ops if op["type"] == "Conv"}
    stem = [(conv[f"conv1{c}_conv"]["kernel"], conv[f"conv1{c}_conv"]["stride"],
             m.shape(f"conv1{c}_conv")[1]) for c in "abc"]
    assert stem == [(3, 2, 32), (3, 1, 32), (3, 1, 64)]
    assert "conv1_conv" not in conv and m.shape("pool1") == (None, 64, 32, 32)
    # every stride-2 shortcut pools 2x2 and then projects with stride 1
    pools = [op for op in m.ops if op["type"] == "AveragePool"]
    assert [op["name"] for op in pools] == ["res3_1_down", "res4_1_down", "res5_1_down"]
    assert all(op["args"]["kernel"] == 2 and op["args"]["stride"] == 2 for op in pools)
    for stage in (3, 4, 5):
        assert conv[f"res{stage}_1_proj_conv"]["stride"] == 1
        assert next(op for op in m.ops if op["name"] == f"res{stage}_1_proj_conv")["inputs"][0] \
            == f"res{stage}_1_down"
    if name == "resnet50d":  # the stride on the bottleneck's 3x3, as in v1.5
        assert conv["res3_1b_conv"]["stride"] == 2 and conv["res3_1a_conv"]["stride"] == 1
        assert "res2_1_proj_conv" in conv and "res2_1_down" not in m.shapes
    assert m.shape("res5_1_relu")[2:] == (4, 4)


@pytest.mark.parametrize("name", ["resnet18d", "resnet50d"])
def test_maxblur_pools_the_stem_with_a_max_of_stride_1_then_a_blur_of_stride_2(name):
    plain, blurred = nets.builder(name, input_size=128), nets.builder(f"{name}_maxblur",
                                                                      input_size=128)
    ops = {op["name"]: op for op in blurred.ops}
    assert ops["pool1_max"]["type"] == "MaxPool"
    assert (ops["pool1_max"]["args"]["kernel"], ops["pool1_max"]["args"]["stride"]) == (2, 1)
    assert ops["pool1"]["type"] == "BlurPool" and ops["pool1"]["args"]["stride"] == 2
    assert ops["pool1"]["inputs"] == ["pool1_max"]
    assert blurred.shape("pool1_max") == (None, 64, 63, 63)
    assert blurred.shape("pool1") == plain.shape("pool1") == (None, 64, 32, 32)
    others = [op["type"] for op in blurred.ops if op["name"] not in ("pool1", "pool1_max")]
    assert others == [op["type"] for op in plain.ops if op["name"] != "pool1"]
    assert blurred.name == f"{name}_maxblur" and nets.PRESETS[blurred.name] == "imagenet"


def test_resnet_d_needs_an_input_size_of_a_multiple_of_32():
    with pytest.raises(ValueError, match=r"input_size \(--input-size\) of resnet50d must be a "
                                         r"multiple of 32, .*got 100"):
        nets.builder("resnet50d", input_size=100)


def _bn_scale_inits(m):
    return {op["outputs"][0][:-len("_bn_s")]: op["args"]["value"]
            for op in m.to_spec()["init_net"]["ops"] if op["outputs"][0].endswith("_bn_s")}


@pytest.mark.parametrize("name, last", [("resnet20", "b"), ("resnet18", "b"), ("resnet50", "c")])
def test_zero_init_residual_zeroes_the_batch_norm_that_ends_each_branch(name, last):
    assert set(_bn_scale_inits(nets.builder(name)).values()) == {1.0}
    scales = _bn_scale_inits(nets.builder(name, zero_init_residual=True))
    blocks = sum(op["type"] == "Add" for op in nets.builder(name).ops)
    zeroed = sorted(layer for layer, value in scales.items() if value == 0.0)
    assert len(zeroed) == blocks
    assert all(layer.startswith("res") and layer.endswith(last) for layer in zeroed)
    # the stem and the projection shortcuts keep scale 1
    assert scales["conv1"] == 1.0
    assert all(v == 1.0 for layer, v in scales.items() if layer.endswith("_proj"))


@pytest.mark.parametrize("name", ["lenet", "vgg16"])
def test_zero_init_residual_is_refused_by_nets_without_residual_blocks(name):
    with pytest.raises(ValueError, match=f"{name} has no residual blocks; zero_init_residual "
                                         r"\(--zero-init-residual\) is for the ResNets"):
        nets.builder(name, zero_init_residual=True)


@needs_C
def test_build_returns_a_model_whose_learner_waits_for_first_use(monkeypatch):
    model = nets.build("resnet20", lr=0.05, weight_decay=1e-4, threads=2)
    hide_C(monkeypatch)  # the builder asked C++ for shapes; no learner was made
    assert isinstance(model, crossbow.Model)
    assert model.spec["solver"] == {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-4,
                                    "nesterov": False, "bias_decay": True,
                                    "type": "sgd", "momentum_convention": "caffe2"}
    assert model.spec["threads"] == 2 and model.num_params() == 269_722
    with pytest.raises(ImportError, match="scripts/setup.sh"):
        model.learner


def test_nets_import_paths():
    import crossbow.nets as a
    from crossbow.nets import lenet
    assert crossbow.nets is a and lenet.lenet().name == "lenet"
