"""ONNX export: the inference graph of a builder's forward NetDef with one model's weights
(for a trained run, the average model z), written with the ``onnx`` package's helper API.

The graph takes the builder's input (``data``, [N, C, H, W], N dynamic) and gives its output
(``prob``, the class probabilities that Model.predict returns). Batch norm is ONNX's
BatchNormalization with the running statistics; SoftmaxWithLoss becomes Softmax; what only
training needs (the loss, Accuracy, the labels, MaxPool's workspace) is left out. Every
operator on the path to the output needs a rule in CONVERTERS, else export fails naming them.
"""
import numpy as np

from crossbow.builder import op_shapes

OPSET = 17


def _spatial(args):
    k, s, p, d = (int(args.get(n, v)) for n, v in
                  (("kernel", 1), ("stride", 1), ("pad", 0), ("dilation", 1)))
    return dict(kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p]), d


def _conv(g, op, ins, outs):
    spatial, d = _spatial(op["args"])
    g.node("Conv", ins, outs[:1], op, dilations=[d, d], group=int(op["args"].get("group", 1)),
           **spatial)


def _fc(g, op, ins, outs):
    x = ins[0]
    if len(g.shape(op["inputs"][0])) != 2:
        x = g.node("Flatten", [x], [g.fresh(op["name"] + "_flat")], op, axis=1)[0]
    g.node("Gemm", [x, ins[1], ins[2]], outs[:1], op, transB=1)


def _max_pool(g, op, ins, outs):
    g.node("MaxPool", ins[:1], outs[:1], op, **_spatial(op["args"])[0])


def _avg_pool(g, op, ins, outs):
    g.node("AveragePool", ins[:1], outs[:1], op,
           count_include_pad=int(op["args"].get("count_include_pad", 0)),
           **_spatial(op["args"])[0])


def _blur_pool(g, op, ins, outs):
    """Reflect one pixel, then the binomial filter depthwise at the stride (blur_pool.h)."""
    channels = g.shape(op["inputs"][0])[1]
    pads = g.constant(op["name"] + "_pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64))
    padded = g.node("Pad", [ins[0], pads], [g.fresh(op["name"] + "_padded")], op,
                    mode="reflect")[0]
    taps = np.array([1.0, 2.0, 1.0], dtype=np.float32)
    weight = np.tile(np.outer(taps, taps) / 16, (channels, 1, 1, 1)).astype(np.float32)
    stride = int(op["args"].get("stride", 2))
    g.node("Conv", [padded, g.constant(op["name"] + "_filter", weight)], outs[:1], op,
           kernel_shape=[3, 3], strides=[stride, stride], group=channels)


def _spatial_bn(g, op, ins, outs):
    g.node("BatchNormalization", ins[:5], outs[:1], op,
           epsilon=float(op["args"].get("epsilon", 1e-5)))


def _spatial_bn_relu(g, op, ins, outs):
    normalised = g.fresh(op["name"] + "_bn")
    _spatial_bn(g, op, ins, [normalised])
    g.node("Relu", [normalised], outs[:1], op)


def _add_relu(g, op, ins, outs):
    total = g.fresh(op["name"] + "_sum")
    g.node("Add", ins[:2], [total], op)
    g.node("Relu", [total], outs[:1], op)


def _mish(g, op, ins, outs):
    """X tanh(softplus(X)): ONNX has Mish only from opset 18."""
    softplus = g.node("Softplus", ins[:1], [g.fresh(op["name"] + "_softplus")], op)[0]
    tanh = g.node("Tanh", [softplus], [g.fresh(op["name"] + "_tanh")], op)[0]
    g.node("Mul", [ins[0], tanh], outs[:1], op)


def _batch_matmul(g, op, ins, outs):
    """MatMul of each operand transposed (its last two axes) where the operator says so."""
    operands = []
    for x, flag in zip(ins[:2], ("trans_a", "trans_b")):
        if int(op["args"].get(flag, 0)):
            x = g.node("Transpose", [x], [g.fresh(f"{op['name']}_{flag}")], op, perm=[0, 2, 1])[0]
        operands.append(x)
    g.node("MatMul", operands, outs[:1], op)


def _spectral_norm(g, op, ins, outs):
    """Inference: W / sigma, sigma = u^T W v / (|u| |v|) with the stored u and v."""
    w, u, v = ins[:3]
    rows = g.shape(op["inputs"][0])[0]
    name = op["name"]
    shape = g.constant(name + "_rows", np.array([rows, -1], dtype=np.int64))
    matrix = g.node("Reshape", [w, shape], [g.fresh(name + "_matrix")], op)[0]
    wv = g.node("MatMul", [matrix, v], [g.fresh(name + "_wv")], op)[0]
    uwv = g.node("Mul", [u, wv], [g.fresh(name + "_uwv")], op)[0]
    total = g.node("ReduceSum", [uwv], [g.fresh(name + "_sum")], op, keepdims=0)[0]
    norms = [g.node("ReduceL2", [x], [g.fresh(f"{name}_norm{i}")], op, keepdims=0)[0]
             for i, x in enumerate((u, v))]
    both = g.node("Mul", norms, [g.fresh(name + "_norms")], op)[0]
    sigma = g.node("Div", [total, both], [g.fresh(name + "_sigma")], op)[0]
    g.node("Div", [w, sigma], outs[:1], op)


def _channel_pad(g, op, ins, outs):
    rank = len(g.shape(op["inputs"][0]))
    before, after = [0] * rank, [0] * rank
    before[1], after[1] = int(op["args"].get("before", 0)), int(op["args"].get("after", 0))
    pads = g.constant(op["name"] + "_pads", np.array(before + after, dtype=np.int64))
    g.node("Pad", [ins[0], pads], outs[:1], op, mode="constant")


def _reshape(g, op, ins, outs):
    shape = g.constant(op["name"] + "_shape", np.array(op["args"]["shape"], dtype=np.int64))
    g.node("Reshape", [ins[0], shape], outs[:1], op)


def _reshape_like(g, op, ins, outs):
    shape = g.node("Shape", [ins[1]], [g.fresh(op["name"] + "_shape")], op)[0]
    g.node("Reshape", [ins[0], shape], outs[:1], op)


def _same_name(onnx_type, inputs=None, **attrs):
    """A rule for operators that are one ONNX operator of the same meaning."""
    def rule(g, op, ins, outs):
        g.node(onnx_type, ins[:inputs] if inputs else ins, outs[:1], op,
               **{k: (f(op["args"]) if callable(f) else f) for k, f in attrs.items()})
    return rule


# Crossbow operator -> rule(graph, op, ONNX input names, ONNX output names).
CONVERTERS = {
    "Conv": _conv,
    "FC": _fc,
    "Relu": _same_name("Relu"),
    "Mish": _mish,
    "Sigmoid": _same_name("Sigmoid"),
    "MaxPool": _max_pool,
    "AveragePool": _avg_pool,
    "BlurPool": _blur_pool,
    "GlobalAveragePool": _same_name("GlobalAveragePool"),
    "SpatialBN": _spatial_bn,
    "SpatialBNRelu": _spatial_bn_relu,  # what the learner fuses; a net may also name it
    "Add": _same_name("Add"),
    "Mul": _same_name("Mul"),  # ONNX's broadcast includes Mul's
    "BatchMatMul": _batch_matmul,
    "SpectralNorm": _spectral_norm,
    "AddRelu": _add_relu,  # fused by the learner, like SpatialBNRelu
    "Sum": _same_name("Sum"),
    "Concat": _same_name("Concat", axis=lambda a: int(a.get("axis", 1))),
    "Flatten": _same_name("Flatten", axis=1),
    "Reshape": _reshape,
    "ReshapeLike": _reshape_like,
    "Copy": _same_name("Identity"),
    "ChannelPad": _channel_pad,
    "Dropout": _same_name("Identity", inputs=1),  # inference: X passes unchanged
    "Softmax": _same_name("Softmax", axis=1),
    "SoftmaxWithLoss": _same_name("Softmax", inputs=1, axis=1),  # prob only; loss is training's
}
# Operators with no ONNX counterpart by design: they need labels, so never reach the output.
TRAINING_ONLY = ("Accuracy",)


class _Graph:
    """ONNX nodes in order, with Crossbow blob names made single-assignment (in-place
    operators write a blob again; ONNX names each value once)."""

    def __init__(self, helper, numpy_helper, blob_shapes):
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.initializers = [], []
        self.current, self.used, self.blob_shapes = {}, set(), blob_shapes

    def shape(self, blob):
        return self.blob_shapes[blob]

    def fresh(self, name):
        candidate, i = name, 0
        while candidate in self.used:
            i += 1
            candidate = f"{name}__{i}"
        self.used.add(candidate)
        return candidate

    def define(self, blob):
        self.current[blob] = self.fresh(blob)
        return self.current[blob]

    def constant(self, name, array):
        name = self.fresh(name)
        self.initializers.append(self.numpy_helper.from_array(array, name))
        return name

    def node(self, onnx_type, inputs, outputs, op, **attrs):
        self.nodes.append(self.helper.make_node(onnx_type, list(inputs), list(outputs),
                                                name=self.fresh(op["name"] + "_" + onnx_type),
                                                **attrs))
        return list(outputs)


def _needed(ops, output):
    """The operators that the output depends on, in net order."""
    wanted, keep = {output}, []
    for op in reversed(ops):
        if wanted & set(op["outputs"]):
            keep.append(op)
            wanted.update(op["inputs"])
    return keep[::-1]


def _shapes(builder, input_shape, ops):
    """Every blob's shape for an input of ``input_shape``, from the C++ schemas."""
    known = dict(builder.shapes)
    known[builder.input_name] = (None,) + tuple(input_shape)
    for op in ops:
        try:
            out = op_shapes(op, [known[x] for x in op["inputs"]], [builder.label_name])
        except ValueError as e:
            raise ValueError(f"net '{builder.name}' does not take input {list(input_shape)}: "
                             f"operator '{op['name']}' ({op['type']}): {e}") from None
        for blob, s in zip(op["outputs"], out):
            known[blob] = s
    return known


def unsupported(builder):
    """[(operator type, op name)] on the path to the output that have no ONNX rule."""
    ops = _needed(builder.ops, builder.output)
    return [(op["type"], op["name"]) for op in ops if op["type"] not in CONVERTERS]


def to_onnx(builder, arrays, input_size=None):
    """An onnx.ModelProto of ``builder``'s inference graph holding ``arrays`` ({blob: array},
    every parameter and state blob); ``input_size`` overrides the image height and width."""
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as e:
        raise ImportError("ONNX export needs the onnx package: pip install onnx "
                          "(scripts/setup.sh installs it)") from e
    if builder.output is None:
        raise ValueError(f"model '{builder.name}' has no output: call m.softmax_loss(...)")
    missing = unsupported(builder)
    if missing:
        listed = ", ".join(f"{t} (operator '{n}')" for t, n in missing)
        raise ValueError(f"cannot export net '{builder.name}' to ONNX: no ONNX counterpart for "
                         f"{listed}; ONNX export knows {', '.join(sorted(CONVERTERS))}")
    c, h, w = builder.input_shape
    if input_size is not None:
        if int(input_size) < 1:
            raise ValueError(f"input_size must be >= 1, got {input_size}")
        h = w = int(input_size)
    ops = _needed(builder.ops, builder.output)
    g = _Graph(helper, numpy_helper, _shapes(builder, (c, h, w), ops))
    inputs = [helper.make_tensor_value_info(g.define(builder.input_name), onnx.TensorProto.FLOAT,
                                            ["N", c, h, w])]
    for name in list(builder.params) + list(builder.state):
        if name not in arrays:
            raise ValueError(f"no weights for blob '{name}' of net '{builder.name}'")
        value = np.ascontiguousarray(arrays[name], dtype=np.float32)
        if tuple(value.shape) != tuple(builder.shapes[name]):
            raise ValueError(f"blob '{name}': shape {value.shape}, net '{builder.name}' expects "
                             f"{tuple(builder.shapes[name])}")
        g.initializers.append(numpy_helper.from_array(value, g.define(name)))
    for op in ops:
        ins = [g.current[x] for x in op["inputs"] if x != builder.label_name]
        outs = [g.define(y) for y in op["outputs"]]
        CONVERTERS[op["type"]](g, op, ins, outs)
    classes = g.shape(builder.output)[1]
    outputs = [helper.make_tensor_value_info(g.current[builder.output], onnx.TensorProto.FLOAT,
                                             ["N", classes])]
    graph = helper.make_graph(g.nodes, builder.name, inputs, outputs, g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="crossbow")
    model.ir_version = min(model.ir_version, 8)  # readable by onnxruntime releases since 1.14
    onnx.checker.check_model(model, full_check=True)
    return model


def export(builder, arrays, path, input_size=None):
    """Writes the ONNX model to ``path``; returns ``path``."""
    import onnx
    onnx.save(to_onnx(builder, arrays, input_size), path)
    return path
