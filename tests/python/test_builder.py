"""ModelBuilder: shape tracking, names, parameters and their fillers, the spec JSON."""
import json

import pytest

from crossbow import ModelBuilder
from crossbow.builder import FLOAT_ARGS
from conftest import needs_C


def small(name="small"):
    m = ModelBuilder(name)
    x = m.input("data", shape=(3, 32, 32))
    x = m.relu(m.spatial_bn(m.conv(x, 8, kernel=3, pad=1, bias=False)))
    x = m.max_pool(x, 2)
    x = m.dropout(m.fc(x, 20), ratio=0.25)
    prob, loss = m.softmax_loss(m.fc(x, 10), "label")
    m.accuracy(prob, "label", top_k=1)
    m.accuracy(prob, "label", top_k=5)
    return m


def op_named(m, name):
    return next(op for op in m.ops if op["name"] == name)


def test_conv_and_pool_shapes_follow_the_standard_formulas():
    m = ModelBuilder("t")
    x = m.input("data", shape=(3, 227, 227))
    assert m.shape(m.conv(x, 96, kernel=11, stride=4)) == (None, 96, 55, 55)
    assert m.shape(m.conv(x, 8, kernel=3, pad=2, dilation=2)) == (None, 8, 227, 227)
    assert m.shape(m.max_pool("conv1", kernel=3, stride=2)) == (None, 96, 27, 27)
    assert m.shape(m.avg_pool("conv1", kernel=2)) == (None, 96, 27, 27)  # stride = kernel
    assert m.shape(m.max_pool("conv1", kernel=3, stride=2, pad=1)) == (None, 96, 28, 28)
    assert m.shape(m.global_avg_pool("conv1")) == (None, 96, 1, 1)
    g = m.conv("conv2", 16, kernel=1, group=4)
    assert m.shape(f"{g}_w") == (16, 2, 1, 1)


def test_other_operator_shapes():
    m = ModelBuilder("t")
    x = m.input("data", shape=(4, 6, 6))
    assert m.shape(m.channel_pad(x, before=1, after=3)) == (None, 8, 6, 6)
    assert m.shape(m.concat([x, "pad1"], axis=1)) == (None, 12, 6, 6)
    assert m.shape(m.flatten(x)) == (None, 144)
    assert m.shape(m.reshape(x, [0, 2, 72])) == (None, 2, 72)
    assert m.shapes[m.reshape(x, [-1, 36])] is None  # [4N, 36]: not batch-shaped
    with pytest.raises(ValueError, match="'reshape2' is unknown"):
        m.conv("reshape2", 4)
    assert m.shape(m.reshape(x, [0, -1])) == (None, 144)
    assert m.shape(m.add(x, x)) == (None, 4, 6, 6)
    assert m.shape(m.sum(x, x, x)) == (None, 4, 6, 6)
    assert m.shape(m.sum([x, x])) == (None, 4, 6, 6)
    assert m.shape(m.softmax(m.fc(x, 5))) == (None, 5)
    with pytest.raises(ValueError, match="Add needs equal shapes"):
        m.add(x, "pad1")
    with pytest.raises(ValueError, match="keep the batch"):
        m.reshape(x, [144])


def test_reshape_minus_one_taking_the_batch():
    m = ModelBuilder("t")
    x = m.input("data", shape=(4, 6, 6))
    assert m.shape(m.reshape(x, [-1, 4, 36])) == (None, 4, 36)


def test_fc_flattens_its_input():
    m = ModelBuilder("t")
    y = m.fc(m.input("data", shape=(50, 4, 4)), 500)
    assert m.shape(y) == (None, 500) and m.shape("fc1_w") == (500, 800)


def test_kernel_larger_than_input_is_an_error_naming_the_shape():
    m = ModelBuilder("t")
    x = m.input("data", shape=(1, 4, 4))
    with pytest.raises(ValueError, match=r"kernel 5.*\[N, 1, 4, 4\]"):
        m.conv(x, 4, kernel=5)


def test_a_failed_layer_leaves_the_builder_unchanged():
    m = ModelBuilder("t")
    x = m.input("data", shape=(1, 4, 4))
    before = (len(m.params), len(m.init_ops), len(m.ops), set(m.shapes))
    with pytest.raises(ValueError):
        m.conv(x, 4, kernel=5)
    assert (len(m.params), len(m.init_ops), len(m.ops), set(m.shapes)) == before
    assert m.conv(x, 4, kernel=3) == "conv1"  # the name was not burnt either


def test_group_must_divide_channels():
    m = ModelBuilder("t")
    x = m.input("data", shape=(6, 8, 8))
    with pytest.raises(ValueError, match="group 4"):
        m.conv(x, 8, group=4)


def test_auto_names_are_unique_and_parameters_follow_them():
    m = small()
    assert [op["name"] for op in m.ops][:4] == ["conv1", "bn1", "relu1", "pool1"]
    assert m.params == ["conv1_w", "bn1_s", "bn1_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"]
    assert m.state == ["bn1_rm", "bn1_rv"]
    assert m.accuracy_blobs == ["top1", "top5"]
    with pytest.raises(ValueError, match="already used"):
        m.conv("data", 4, name="fc1")
    m2 = ModelBuilder("t")
    x = m2.input("data", shape=(1, 8, 8))
    m2.conv(x, 4, name="conv2")
    assert m2.conv(x, 4) == "conv1" and m2.conv(x, 4) == "conv3"


def test_unknown_blob_is_an_error():
    m = small()
    with pytest.raises(ValueError, match="unknown blob 'nope'"):
        m.relu("nope")
    with pytest.raises(ValueError, match="unknown blob 'conv' in model 'small'; did you mean 'conv1'"):
        m.relu("conv")


def test_spatial_bn_updates_running_stats_in_place():
    m = small()
    bn = op_named(m, "bn1")
    assert bn["inputs"][3:] == bn["outputs"][1:3] == ["bn1_rm", "bn1_rv"]
    assert len(bn["outputs"]) == 5
    assert m.shape("bn1_rm") == (8,)


def test_max_pool_and_dropout_name_both_outputs():
    m = small()
    assert op_named(m, "pool1")["outputs"] == ["pool1", "pool1_ws"]
    assert op_named(m, "dropout1")["outputs"] == ["dropout1", "dropout1_mask"]


def test_fillers():
    m = small()
    fill = {op["outputs"][0]: (op["type"], op["args"]) for op in m.init_ops}
    assert fill["conv1_w"] == ("MSRAFill", {"shape": [8, 3, 3, 3], "mode": "fan_out"})
    assert fill["fc1_w"][0] == "XavierFill"
    assert fill["fc1_b"] == ("ConstantFill", {"shape": [20], "value": 0.0})
    assert fill["bn1_s"][1]["value"] == 1.0 and fill["bn1_b"][1]["value"] == 0.0
    assert fill["bn1_rm"][1]["value"] == 0.0 and fill["bn1_rv"][1]["value"] == 1.0
    assert sorted(fill) == sorted(m.params + m.state)  # one filler per persistent blob


def _walk_args(net):
    for op in net["ops"]:
        yield from op["args"].items()


def test_spec_is_well_formed_json_with_floats_as_floats():
    m = small()
    spec = json.loads(json.dumps(m.to_spec(lr=1, momentum=0, weight_decay=0, seed=3)))
    assert spec == m.to_spec(lr=1, momentum=0, weight_decay=0, seed=3)
    for key in ("name", "init_net", "net", "input", "input_shape", "label", "loss", "output",
                "accuracy", "params", "state", "solver", "seed", "threads"):
        assert key in spec
    assert spec["input"] == "data" and spec["input_shape"] == [3, 32, 32]
    assert (spec["label"], spec["loss"], spec["output"]) == ("label", "loss", "prob")
    assert spec["accuracy"] == ["top1", "top5"]
    solver = spec["solver"]
    assert all(type(solver[k]) is float for k in ("lr", "momentum", "weight_decay"))
    assert solver["nesterov"] is False and type(spec["seed"]) is int
    for net in (spec["net"], spec["init_net"]):
        for key, value in _walk_args(net):
            if key in FLOAT_ARGS:
                assert type(value) is float, (key, value)
            elif key in ("kernel", "stride", "pad", "dilation", "group", "top_k", "axis"):
                assert type(value) is int, (key, value)
            elif key == "shape":
                assert all(type(d) is int for d in value)
        for op in net["ops"]:
            assert set(op) == {"type", "inputs", "outputs", "args", "name"}


def test_net_inputs_and_outputs():
    m = small()
    net, init = m.net_def(), m.init_net_def()
    assert net["external_inputs"][:2] == ["data", "label"]
    assert set(net["external_inputs"]) == {"data", "label"} | set(m.params) | set(m.state)
    assert net["external_outputs"] == ["loss", "prob", "top1", "top5"]
    assert init["external_inputs"] == [] and init["external_outputs"] == m.params + m.state
    known = set(net["external_inputs"])
    for op in net["ops"]:  # topological order
        assert set(op["inputs"]) <= known, op
        known |= set(op["outputs"])


def test_json_args_accept_numpy_scalars():
    np = pytest.importorskip("numpy")
    m = ModelBuilder("t")
    x = m.input("data", shape=(3, 8, 8))
    m.conv(x, int(np.int64(4)), kernel=np.int64(3))
    m.dropout(x, ratio=np.float32(0.5))
    args = json.loads(m.net_json())["ops"][0]["args"]
    assert args["kernel"] == 3 and type(args["kernel"]) is int


def test_to_spec_needs_input_and_loss():
    m = ModelBuilder("t")
    with pytest.raises(ValueError, match="no input"):
        m.to_spec()
    m.input("data", shape=(1, 2, 2))
    with pytest.raises(ValueError, match="no loss"):
        m.to_spec()
    with pytest.raises(ValueError, match="needs shape"):
        ModelBuilder("u").input("data", shape=(2, 2))


def test_num_params_counts_bn_scale_and_bias_not_running_stats():
    m = small()
    assert m.num_params() == 8 * 27 + 16 + (20 * 8 * 16 * 16 + 20) + (10 * 20 + 10)
    assert m.num_classes == 10


def test_summary_lists_layers_and_totals():
    text = small().summary()
    for piece in ("conv1", "SpatialBN", "[N, 8, 16, 16]", "[N, 10]", "Total params: "
                  f"{small().num_params():,}", "State (not trained): 16"):
        assert piece in text, piece


@needs_C
def test_generic_op_with_a_known_type():
    m = ModelBuilder("t")
    x = m.input("data", shape=(2, 4, 4))
    y = m.op("Relu", x)
    assert y == "relu1" and m.shape(y) == (None, 2, 4, 4)
    a, b = m.op("Dropout", y, ["d", "d_mask"], ratio=0.5)
    assert (a, b) == ("d", "d_mask") and m.ops[-1]["args"] == {"ratio": 0.5}
    assert m.op("Relu", "d", "d") == "d"  # in place


def test_every_layer_needs_the_extension_for_its_shapes(no_C):
    m = ModelBuilder("t")
    x = m.input("data", shape=(2, 4, 4))
    for layer in (lambda: m.relu(x), lambda: m.op("Relu", x), lambda: m.conv(x, 2)):
        with pytest.raises(ImportError, match="scripts/setup.sh"):
            layer()
    assert (m.ops, m.params, set(m.shapes)) == ([], [], {"data"})


def test_generic_op_with_another_type_needs_the_extension(no_C):
    m = ModelBuilder("t")
    x = m.input("data", shape=(2, 4, 4))
    with pytest.raises(ImportError, match="scripts/setup.sh"):
        m.op("Square", x)
    assert len(m.ops) == 0


def test_generic_op_unknown_type_suggests_a_name(fake_C):
    m = ModelBuilder("t")
    x = m.input("data", shape=(2, 4, 4))
    with pytest.raises(ValueError, match="did you mean 'Conv'"):
        m.op("Covn", x)
    y = m.op("Square", x)  # registered in C++ only: shapes come from _C.infer_shapes
    assert m.shape(y) == (None, 2, 4, 4)
    with pytest.raises(ValueError, match="did you mean 'MSRAFill'"):
        m.param("w", (2, 2), "MSRAfill")


def test_label_declared_once():
    m = ModelBuilder("t")
    x = m.input("data", shape=(2, 4, 4))
    assert m.label("y") == "y" and m.shape("y") == (None,)
    prob, _ = m.softmax_loss(m.fc(x, 3), "y")
    with pytest.raises(ValueError, match="already uses label 'y'"):
        m.accuracy(prob, "label")
    with pytest.raises(ValueError, match="already has a loss"):
        m.softmax_loss("fc1", "y", prob="p2", loss="l2")
