"""ONNX export: the checker accepts every zoo net's graph and onnxruntime (CPU) gives
Model.predict's probabilities, each within a small fraction of itself (compared as
logarithms), at two batch sizes (the batch is dynamic)."""
import numpy as np
import pytest

import crossbow
from crossbow import ModelBuilder, cli, nets, onnx_export
from crossbow import _native
from conftest import assert_same_log_probabilities, needs_C, small_variance_bn_net

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (setup.sh)")
ort = pytest.importorskip("onnxruntime", reason="the parity check needs onnxruntime (setup.sh)")


def _trained_looking(model, seed=0):
    """Weights and batch-norm statistics away from their initial values, so that every
    blob (running mean and variance included) changes the output."""
    rng = np.random.default_rng(seed)
    for name in model.builder.params + model.builder.state:
        shape = model.builder.shapes[name]
        value = model.get_param(name)
        if name.endswith("_rv"):
            value = rng.uniform(0.5, 2.0, shape)
        elif name.endswith(("_rm", "_b")):
            value = rng.normal(0, 0.1, shape)
        elif name.endswith("_s"):
            value = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("_g"):  # self-attention's gain, 0 at first
            value = rng.uniform(0.5e-5, 1.5e-5, shape)
        model.set_param(name, np.asarray(value, dtype=np.float32))
    return model


def _moderate_logits(model, x, spread=10.0):
    """Scales the layer that makes the logits so that they spread over at most `spread` on x:
    random statistics through 16 squeeze-excitation blocks (xse_resnext50) spread them over
    hundreds, and a log-probability's fp32 rounding grows with them past the tolerance."""
    ops = model.builder.ops
    logits = next(op["inputs"][0] for op in ops if op["type"] == "SoftmaxWithLoss")
    now = float(np.ptp(model.forward(x, [logits])[logits]))
    if now > spread:
        layer = next(op for op in ops if op["outputs"][0] == logits)
        for name in layer["inputs"][1:]:
            model.set_param(name, model.get_param(name) * np.float32(spread / now))
    return model


def _session(path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@needs_C
@pytest.mark.parametrize("net", crossbow.nets.NAMES)
def test_every_zoo_net_exports_and_matches_predict(tmp_path, net):
    # fastai's nets at 64 px: random statistics through 50 layers, and at 224 px an attention over
    # 3,136 positions, grow the activations until fp32 rounding passes the tolerance
    size = 64 if net in crossbow.nets.FASTAI else None
    model = _trained_looking(crossbow.nets.build(net, input_size=size))
    probe = np.random.default_rng(2).normal(0, 1, (3,) + model.input_shape).astype(np.float32)
    _moderate_logits(model, probe)
    path = model.export_onnx(tmp_path / f"{net}.onnx")
    graph = onnx.load(str(path))
    onnx.checker.check_model(graph, full_check=True)
    assert graph.opset_import[0].version >= 17
    types = {n.op_type for n in graph.graph.node}
    assert "Softmax" in types and (net in ("lenet",) or "BatchNormalization" in types)
    session = _session(path)
    rng = np.random.default_rng(1)
    for batch in (1, 3):
        x = rng.normal(0, 1, (batch,) + model.input_shape).astype(np.float32)
        got = session.run(None, {"data": x})[0]
        want = model.predict(x)
        assert got.shape == (batch, model.num_classes)
        assert_same_log_probabilities(got, want, 1e-4)
        assert np.abs(want - want.mean()).max() > 1e-3  # the output depends on the input


@needs_C
def test_a_non_default_batch_norm_epsilon_is_exported(tmp_path):
    model = small_variance_bn_net(epsilon=1e-3)
    graph = onnx.load(str(model.export_onnx(tmp_path / "bn.onnx")))
    [bn] = [n for n in graph.graph.node if n.op_type == "BatchNormalization"]
    assert [(a.name, a.f) for a in bn.attribute] == [("epsilon", pytest.approx(1e-3))]
    x = np.random.default_rng(5).normal(0, 1, (4, 3, 8, 8)).astype(np.float32)
    want = model.predict(x)
    assert_same_log_probabilities(_session(tmp_path / "bn.onnx").run(None, {"data": x})[0],
                                  want, 1e-4)
    assert np.ptp(np.log(want)) > 1  # the logits are far apart: the net is not near uniform


@needs_C
def test_crossbow_export_writes_a_checkpoints_average_model(tmp_path, capsys):
    """From a Trainer checkpoint: the graph holds z, which `crossbow eval` would evaluate."""
    from test_trainer import _blobs
    ckpt = tmp_path / "ckpt"
    crossbow.Trainer(net="lenet", train_db=_blobs(), batch_size=16, learners=2, iterations=5,
                     lr=0.02, checkpoint_dir=str(ckpt), progress=False).fit()
    out = tmp_path / "lenet.onnx"
    assert cli.main(["export", "--net", "lenet", "--checkpoint", str(ckpt), "--output",
                     str(out)]) == 0
    assert "input data [N, 1, 28, 28]" in capsys.readouterr().out
    tensors = _native.load().load_tensors(str(ckpt / "checkpoint.cbt"))
    stored = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(out)).graph.initializer}
    np.testing.assert_array_equal(stored["ip2_w"], tensors["z/ip2_w"])
    assert not np.array_equal(tensors["z/ip2_w"], tensors["learner0/ip2_w"])
    z = nets.build("lenet").load_weights(ckpt)  # the checkpoint's z as a Model
    x = _blobs(8, 2)[0]
    assert_same_log_probabilities(_session(out).run(None, {"data": x})[0], z.predict(x), 1e-4)
    assert cli.main(["export", "--net", "resnet20", "--checkpoint", str(ckpt), "--output",
                     str(tmp_path / "wrong.onnx")]) == 1
    assert ("checkpoint.cbt' is of net 'lenet', not 'resnet20' (--net resnet20)"
            in capsys.readouterr().err)


@needs_C
def test_input_size_sets_the_graph_input_and_is_checked(tmp_path):
    builder = crossbow.nets.builder("resnet20")
    arrays = {n: np.zeros(builder.shapes[n], np.float32) for n in builder.params + builder.state}
    graph = onnx_export.to_onnx(builder, arrays, input_size=64)
    dims = graph.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["N", 3, 64, 64]
    vgg = crossbow.nets.builder("vgg16")
    arrays = {n: np.zeros(vgg.shapes[n], np.float32) for n in vgg.params + vgg.state}
    with pytest.raises(ValueError, match="net 'vgg16' does not take input \\[3, 64, 64\\]: "
                                         "operator 'fc'"):
        onnx_export.to_onnx(vgg, arrays, input_size=64)


def test_an_operator_without_onnx_counterpart_is_named(fake_C):
    m = ModelBuilder("odd")
    x = m.op("Square", m.input("data", shape=(1, 4, 4)), name="sq")
    m.softmax_loss(m.fc(x, 3, name="fc"), "label")
    arrays = {n: np.zeros(m.shapes[n], np.float32) for n in m.params}
    with pytest.raises(ValueError, match="cannot export net 'odd' to ONNX: no ONNX counterpart "
                                         "for Square \\(operator 'sq'\\)"):
        onnx_export.to_onnx(m, arrays)
    assert onnx_export.unsupported(m) == [("Square", "sq")]


@needs_C
def test_the_registry_has_no_forward_operator_without_an_onnx_rule():
    """A new operator needs an ONNX rule in onnx_export.CONVERTERS, or a place in
    TRAINING_ONLY (it needs labels, so no inference graph has it)."""
    names = {n for n, _ in crossbow.operators() if not n.endswith(("Gradient", "Fill"))}
    solver = {"MomentumSGD", "AdamW", "Lookahead"}  # the optimisers (optimizer_ops.cc), not nets
    assert names - solver - set(onnx_export.CONVERTERS) - set(onnx_export.TRAINING_ONLY) == set()


@needs_C
def test_in_place_and_generic_operators_export(tmp_path):
    """Relu in place (ONNX names each value once), Copy, Reshape, ReshapeLike, Concat, Sum,
    Dropout, AveragePool and ChannelPad, checked against predict."""
    m = ModelBuilder("mixed")
    x = m.input("data", shape=(2, 6, 6))
    a = m.relu(m.conv(x, 4, kernel=3, pad=1, name="c1"), inplace=True)
    b = m.op("Copy", a, name="copy")
    y = m.concat([m.channel_pad(a, before=1, after=1, name="pad"),
                  m.sum(b, a, b, name="s")], name="cat")
    y = m.avg_pool(m.dropout(y, 0.3, name="drop"), 2, name="avg")
    flat = m.reshape(y, [0, -1], name="flat")
    back = m.op("ReshapeLike", [flat, y], name="back")
    m.softmax_loss(m.fc(back, 5, name="fc"), "label")
    model = crossbow.Model(m)
    _trained_looking(model)
    session = _session(model.export_onnx(tmp_path / "mixed.onnx"))
    x = np.random.default_rng(0).normal(0, 1, (4, 2, 6, 6)).astype(np.float32)
    assert_same_log_probabilities(session.run(None, {"data": x})[0], model.predict(x), 1e-5)
