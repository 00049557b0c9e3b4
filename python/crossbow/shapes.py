"""Shape rules of the built-in operators, in Python, so a builder knows every blob's shape.

Shapes are tuples; the batch dimension is ``None`` (``(None, 16, 32, 32)``), a scalar is
``()`` and an unknown shape is ``None``. The C++ schemas hold the same rules; the tests
compare both through ``_C.infer_shapes``.
"""
import math


def conv_out(size, kernel, stride=1, pad=0, dilation=1):
    """Output length of a convolution or pooling window along one axis (floor rounding)."""
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def _spatial(x, args, what):
    if x is None or len(x) != 4:
        raise ValueError(f"{what} expects an NCHW input, got shape {_fmt(x)}")
    k, s, p = args["kernel"], args.get("stride", 1), args.get("pad", 0)
    d = args.get("dilation", 1)
    h, w = conv_out(x[2], k, s, p, d), conv_out(x[3], k, s, p, d)
    if h < 1 or w < 1:
        raise ValueError(f"{what}: kernel {k} (stride {s}, pad {p}, dilation {d}) does not fit "
                         f"the input of shape {_fmt(x)}")
    return h, w


def _conv(ins, args):
    x, w = ins[0], ins[1]
    h, wd = _spatial(x, args, "Conv")
    return [(x[0], w[0], h, wd)]


def _pool(ins, args):
    x = ins[0]
    h, w = _spatial(x, args, "Pool")
    return [(x[0], x[1], h, w)]


def _max_pool(ins, args):
    y = _pool(ins, args)[0]
    return [y, None]  # the workspace's layout belongs to the kernel


def _fc(ins, args):
    x, w = ins[0], ins[1]
    if math.prod(x[1:]) != w[1]:
        raise ValueError(f"FC: input {_fmt(x)} flattens to {math.prod(x[1:])} features, "
                         f"weight {_fmt(w)} expects {w[1]}")
    return [(x[0], w[0])]


def _same(ins, args):
    return [ins[0]]


def _spatial_bn(ins, args):
    c = (ins[0][1],)
    return [ins[0], c, c, c, c]


def _add(ins, args):
    if ins[0] != ins[1]:
        raise ValueError(f"Add needs equal shapes, got {_fmt(ins[0])} and {_fmt(ins[1])}")
    return [ins[0]]


def _sum(ins, args):
    for s in ins[1:]:
        if s != ins[0]:
            raise ValueError(f"Sum needs equal shapes, got {', '.join(_fmt(s) for s in ins)}")
    return [ins[0]]


def _concat(ins, args):
    axis = args.get("axis", 1)
    first = list(ins[0])
    for s in ins[1:]:
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first))
                                       if i != axis):
            raise ValueError(f"Concat along axis {axis} got shapes "
                             f"{', '.join(_fmt(s) for s in ins)}")
    first[axis] = sum(s[axis] for s in ins)
    return [tuple(first)]


def _flatten(ins, args):
    x = ins[0]
    return [(x[0], math.prod(x[1:]))]


def _reshape(ins, args):
    x, shape = ins[0], list(args["shape"])
    if shape.count(-1) > 1:
        raise ValueError(f"Reshape shape {shape} has more than one -1")
    out = [x[i] if d == 0 else d for i, d in enumerate(shape)]  # 0 copies the input's dim
    known = math.prod(d for d in out if d not in (-1, None))
    size = math.prod(d for d in x if d is not None)  # per image when the batch is unknown
    if x[0] is not None or None in out:
        if -1 in out:
            out[out.index(-1)] = size // max(known, 1)
        if math.prod(d for d in out if d is not None) != size:
            raise ValueError(f"Reshape cannot turn {_fmt(x)} into {shape}")
        return [tuple(out)]
    if -1 in out:  # the -1 takes the batch (or a multiple of it: unknown)
        return [tuple(None if d == -1 else d for d in out) if known == size else None]
    raise ValueError(f"Reshape to {shape} needs a 0 or -1 to keep the batch of {_fmt(x)}")


def _channel_pad(ins, args):
    x = ins[0]
    return [(x[0], x[1] + args.get("before", 0) + args.get("after", 0)) + tuple(x[2:])]


def _dropout(ins, args):
    return [ins[0], ins[0]]


def _global_pool(ins, args):
    x = ins[0]
    return [(x[0], x[1], 1, 1)]


def _blur_pool(ins, args):
    x, s = ins[0], args.get("stride", 2)
    if len(x) != 4 or x[2] < 2 or x[3] < 2:
        raise ValueError(f"BlurPool expects [N, C, H, W] with H, W >= 2, got {_fmt(x)}")
    return [(x[0], x[1], (x[2] - 1) // s + 1, (x[3] - 1) // s + 1)]


def _softmax_loss(ins, args):
    return [ins[0], ()]


def _accuracy(ins, args):
    return [()]


def _fill(ins, args):
    return [tuple(args["shape"])]


RULES = {
    "Conv": _conv, "FC": _fc, "Relu": _same, "MaxPool": _max_pool, "AveragePool": _pool,
    "GlobalAveragePool": _global_pool, "SpatialBN": _spatial_bn, "Add": _add, "Sum": _sum,
    "Concat": _concat, "Flatten": _flatten, "Reshape": _reshape, "ChannelPad": _channel_pad,
    "Dropout": _dropout, "SoftmaxWithLoss": _softmax_loss, "Softmax": _same,
    "Accuracy": _accuracy, "ConstantFill": _fill, "UniformFill": _fill, "GaussianFill": _fill,
    "XavierFill": _fill, "MSRAFill": _fill, "BlurPool": _blur_pool,
}


def infer(op_type, in_shapes, args):
    """Output shapes of one operator, or None when the rule is unknown or an input is."""
    rule = RULES.get(op_type)
    if rule is None or any(s is None for s in in_shapes):
        return None
    return rule(in_shapes, args)


def _fmt(shape):
    if shape is None:
        return "unknown"
    return "[" + ", ".join("N" if d is None else str(d) for d in shape) + "]"


format_shape = _fmt
