"""ModelBuilder: define a net layer by layer, Caffe2-brew style, and emit its learner spec.

    m = ModelBuilder("mlp")
    x = m.input("data", shape=(1, 28, 28))
    x = m.relu(m.fc(x, 100))
    prob, loss = m.softmax_loss(m.fc(x, 10), "label")
    spec = m.to_spec(lr=0.1)

Every blob's shape is tracked (the batch is ``None``), each asked of the C++ operator schemas
(``op_shapes``), so building a net needs ``crossbow._C``. Parameters get filler ops in the
init net: conv weights MSRAFill (fan_out, as He et al. and torchvision's ResNets), FC
weights XavierFill (Caffe2 brew's default), biases and BN shifts 0, BN scales 1.
"""
import copy
import functools
import json
import math
import numbers
import re

from crossbow import _native
from crossbow.names import did_you_mean
from crossbow.options import library_defaults

# Arguments that the operators read as floats: JSON must carry them as 1.0, not 1.
FLOAT_ARGS = {"epsilon", "momentum", "ratio", "value", "min", "max", "mean", "std",
              "label_smoothing"}


def _set(**values):
    """The values that are not None."""
    return {k: v for k, v in values.items() if v is not None}


def op_shapes(op, in_shapes, int_inputs=()):
    """The output shapes of operator ``op`` (an OperatorDef dict) from its C++ schema, given
    its inputs' shapes (tuples, the batch ``None``); ``int_inputs`` name the int32 ones (the
    label). A shape is None where an input's is unknown, or where the output's depends on the
    batch other than as its first dimension (``_C.infer_shapes``)."""
    if any(s is None for s in in_shapes):
        return [None] * len(op["outputs"])
    net = {"name": op["name"], "ops": [op], "external_inputs": list(op["inputs"]),
           "external_outputs": list(op["outputs"])}
    fed = {x: list(s) for x, s in zip(op["inputs"], in_shapes)}
    out = _native.load().infer_shapes(json.dumps(net), fed, list(int_inputs))
    return [None if out.get(o) is None else tuple(out[o]) for o in op["outputs"]]


def format_shape(shape):
    """"[N, 3, 32, 32]" (the batch is N), or "unknown"."""
    if shape is None:
        return "unknown"
    return "[" + ", ".join("N" if d is None else str(d) for d in shape) + "]"


def check_device(device):
    """Returns ``device`` if it names one device as C++'s ParseDevice reads it: "cpu", "cuda"
    (GPU 0) or "cuda:N"; raises ValueError otherwise."""
    if isinstance(device, str) and re.fullmatch(r"cpu|cuda(:\d+)?", device):
        return device
    raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")


def _json_value(key, v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, numbers.Integral):
        return float(v) if key in FLOAT_ARGS else int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        items = [_json_value(key, e) for e in v]
        if any(isinstance(e, float) for e in items):
            items = [float(e) for e in items]
        kinds = {type(e) for e in items}
        if len(kinds) > 1:
            raise TypeError(f"argument '{key}' mixes types: {v!r}")
        return items
    raise TypeError(f"argument '{key}' has unsupported value {v!r} ({type(v).__name__})")


def _atomic(method):
    """A failing call leaves the builder as it was (no orphan parameters or names)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = {k: copy.copy(v) for k, v in self.__dict__.items()}
        try:
            return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
    return wrapper


class ModelBuilder:
    """Builds the forward net, the init net and the learner spec of one model."""

    def __init__(self, name):
        self.name = name
        self.ops = []        # forward OperatorDefs (dicts)
        self.init_ops = []   # filler OperatorDefs
        self.shapes = {}     # blob -> shape tuple (batch None) or None if unknown
        self.params = []     # trainable blobs, in creation order
        self.state = []      # persistent non-trainable blobs (BN running stats)
        self.layers = []     # summary rows: (name, type, output blob, [param blobs])
        self.input_name = self.input_shape = self.label_name = None
        self.loss = self.output = None
        self.preset = None   # input preset for LMDB data (crossbow.data.ImageDB); None: "none"
        self.source = ""     # where the net came from (crossbow.net_source), kept in checkpoints
        self.accuracy_blobs = []
        self._used = set()
        self._counters = {}
        self._checked_types = set()

    # ----- names, blobs, parameters -----

    def unique_name(self, prefix):
        """prefix1, prefix2, ...: the first that no blob or layer uses."""
        while True:
            n = self._counters.get(prefix, 0) + 1
            self._counters[prefix] = n
            if f"{prefix}{n}" not in self._used:
                return f"{prefix}{n}"

    def _claim(self, name, prefix):
        if name is None:
            name = self.unique_name(prefix)
        elif name in self._used:
            raise ValueError(f"name '{name}' is already used in model '{self.name}'")
        self._used.add(name)
        return name

    def _fresh(self, name):
        """A derived blob name (conv1_w); must not exist yet."""
        if name in self._used:
            raise ValueError(f"blob '{name}' already exists in model '{self.name}'")
        self._used.add(name)
        return name

    def shape(self, blob):
        """The blob's shape, batch None; ValueError if the blob or its shape is unknown."""
        if blob not in self.shapes:
            raise ValueError(f"unknown blob '{blob}' in model '{self.name}'"
                             f"{did_you_mean(blob, self.shapes)}")
        if self.shapes[blob] is None:
            raise ValueError(f"the shape of blob '{blob}' is unknown to the builder")
        return self.shapes[blob]

    @_atomic
    def param(self, name, shape, fill="ConstantFill", trainable=True, **fill_args):
        """Declares a persistent blob with its filler op; trainable ones are params."""
        self._check_type(fill)
        self._fresh(name)
        shape = tuple(int(d) for d in shape)
        self.init_ops.append(self._op_def(fill, [], [name], dict(shape=list(shape), **fill_args),
                                          name))
        self.shapes[name] = shape
        (self.params if trainable else self.state).append(name)
        return name

    @_atomic
    def input(self, name="data", shape=None):
        """Declares the image input of per-example shape (C, H, W)."""
        if self.input_name is not None:
            raise ValueError(f"model '{self.name}' already has input '{self.input_name}'")
        if shape is None or len(shape) != 3 or any(int(d) < 1 for d in shape):
            raise ValueError(f"input '{name}' needs shape=(C, H, W), got {shape!r}")
        self._fresh(name)
        self.input_name, self.input_shape = name, tuple(int(d) for d in shape)
        self.shapes[name] = (None,) + self.input_shape
        return name

    @_atomic
    def label(self, name="label"):
        """Declares the integer label input ([N]); softmax_loss and accuracy do it for you."""
        return self._label(name)

    def _label(self, label):
        if self.label_name is None:
            self._fresh(label)
            self.label_name = label
            self.shapes[label] = (None,)
        elif label != self.label_name:
            raise ValueError(f"model '{self.name}' already uses label '{self.label_name}', "
                             f"got '{label}'")
        return label

    # ----- operators -----

    @staticmethod
    def _op_def(op_type, inputs, outputs, args, name):
        return {"type": op_type, "inputs": list(inputs), "outputs": list(outputs),
                "args": {k: _json_value(k, v) for k, v in args.items()}, "name": name}

    def _add(self, op_type, inputs, outputs, args, name, layer=True, params=()):
        for x in inputs:
            if x not in self.shapes:
                self.shape(x)  # raises: unknown blob
        op = self._op_def(op_type, inputs, outputs, args, name)
        ints = [x for x in inputs if x == self.label_name]
        out_shapes = op_shapes(op, [self.shapes[x] for x in inputs], ints)
        for blob, s in zip(outputs, out_shapes):
            self.shapes[blob] = s
        self.ops.append(op)
        if layer:
            self.layers.append((name, op_type, outputs[0], list(params)))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def _check_type(self, op_type):
        """Checks the type against the C++ registry once (did-you-mean for a typo)."""
        if op_type not in self._checked_types:
            _native.load().operator_doc(op_type)  # ValueError: unknown ...; did you mean ...?
            self._checked_types.add(op_type)

    @_atomic
    def op(self, op_type, inputs, outputs=1, *, name=None, **args):
        """Adds any registered operator. ``outputs``: a count or the output names.

        The type is checked against the C++ registry (``_C.operator_doc``), which suggests
        the nearest name for a typo.
        """
        self._check_type(op_type)
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        name = self._claim(name, op_type.lower())
        if isinstance(outputs, int):
            outputs = [name] + [f"{name}_{i}" for i in range(1, outputs)]
            for o in outputs[1:]:
                self._fresh(o)
        else:
            outputs = [outputs] if isinstance(outputs, str) else list(outputs)
            for o in outputs:
                if o not in inputs and o != name:
                    self._fresh(o)
        return self._add(op_type, inputs, outputs, args, name)

    @_atomic
    def conv(self, x, out_channels, kernel=3, stride=1, pad=0, dilation=1, group=1, bias=True,
             name=None, weight_fill=("MSRAFill", {"mode": "fan_out"})):
        c = self.shape(x)[1]
        if c % group or out_channels % group:
            raise ValueError(f"conv: group {group} must divide the input channels ({c}) and "
                             f"the output channels ({out_channels})")
        name = self._claim(name, "conv")
        fill, fill_args = weight_fill
        w = self.param(f"{name}_w", (out_channels, c // group, kernel, kernel), fill, **fill_args)
        inputs = [x, w]
        if bias:
            inputs.append(self.param(f"{name}_b", (out_channels,), "ConstantFill", value=0.0))
        args = dict(kernel=kernel, stride=stride, pad=pad, dilation=dilation, group=group)
        return self._add("Conv", inputs, [name], args, name, params=inputs[1:])

    @_atomic
    def fc(self, x, out, name=None, weight_fill=("XavierFill", {})):
        k = math.prod(self.shape(x)[1:])
        name = self._claim(name, "fc")
        fill, fill_args = weight_fill
        w = self.param(f"{name}_w", (out, k), fill, **fill_args)
        b = self.param(f"{name}_b", (out,), "ConstantFill", value=0.0)
        return self._add("FC", [x, w, b], [name], {}, name, params=[w, b])

    @_atomic
    def relu(self, x, name=None, inplace=False):
        name = self._claim(name, "relu")
        return self._add("Relu", [x], [x if inplace else name], {}, name)

    def _pool(self, op_type, prefix, x, kernel, stride, pad, name):
        name = self._claim(name, prefix)
        args = dict(kernel=kernel, stride=kernel if stride is None else stride, pad=pad)
        outputs = [name, self._fresh(f"{name}_ws")] if op_type == "MaxPool" else [name]
        y = self._add(op_type, [x], outputs, args, name)
        return y[0] if op_type == "MaxPool" else y

    @_atomic
    def max_pool(self, x, kernel, stride=None, pad=0, name=None):
        """Max pooling; stride defaults to the kernel (as in PyTorch)."""
        return self._pool("MaxPool", "pool", x, kernel, stride, pad, name)

    @_atomic
    def avg_pool(self, x, kernel, stride=None, pad=0, name=None):
        """Average pooling; stride defaults to the kernel (as in PyTorch)."""
        return self._pool("AveragePool", "avgpool", x, kernel, stride, pad, name)

    @_atomic
    def global_avg_pool(self, x, name=None):
        name = self._claim(name, "gap")
        return self._add("GlobalAveragePool", [x], [name], {}, name)

    @_atomic
    def spatial_bn(self, x, name=None, epsilon=1e-5, momentum=0.9, scale_init=1.0):
        c = self.shape(x)[1]
        name = self._claim(name, "bn")
        s = self.param(f"{name}_s", (c,), "ConstantFill", value=scale_init)
        b = self.param(f"{name}_b", (c,), "ConstantFill", value=0.0)
        rm = self.param(f"{name}_rm", (c,), "ConstantFill", trainable=False, value=0.0)
        rv = self.param(f"{name}_rv", (c,), "ConstantFill", trainable=False, value=1.0)
        outs = [name, rm, rv, self._fresh(f"{name}_sm"), self._fresh(f"{name}_sv")]
        args = dict(epsilon=epsilon, momentum=momentum)
        return self._add("SpatialBN", [x, s, b, rm, rv], outs, args, name, params=[s, b])[0]

    @_atomic
    def add(self, a, b, name=None):
        name = self._claim(name, "add")
        return self._add("Add", [a, b], [name], {}, name)

    @_atomic
    def sum(self, *xs, name=None):
        xs = list(xs[0]) if len(xs) == 1 and not isinstance(xs[0], str) else list(xs)
        name = self._claim(name, "sum")
        return self._add("Sum", xs, [name], {}, name)

    @_atomic
    def concat(self, xs, axis=1, name=None):
        name = self._claim(name, "concat")
        return self._add("Concat", list(xs), [name], dict(axis=axis), name)

    @_atomic
    def flatten(self, x, name=None):
        name = self._claim(name, "flatten")
        return self._add("Flatten", [x], [name], {}, name)

    @_atomic
    def reshape(self, x, shape, name=None):
        """Reshape; a 0 copies the input's dimension, one -1 takes the rest."""
        name = self._claim(name, "reshape")
        return self._add("Reshape", [x], [name], dict(shape=list(shape)), name)

    @_atomic
    def channel_pad(self, x, before=0, after=0, name=None):
        name = self._claim(name, "pad")
        return self._add("ChannelPad", [x], [name], dict(before=before, after=after), name)

    @_atomic
    def dropout(self, x, ratio=0.5, name=None):
        name = self._claim(name, "dropout")
        outs = [name, self._fresh(f"{name}_mask")]
        return self._add("Dropout", [x], outs, dict(ratio=ratio), name)[0]

    @_atomic
    def softmax(self, x, name=None):
        name = self._claim(name, "softmax")
        return self._add("Softmax", [x], [name], {}, name)

    @_atomic
    def softmax_loss(self, logits, label="label", prob="prob", loss="loss"):
        """SoftmaxWithLoss; its outputs become the spec's "output" and "loss"."""
        self._label(label)
        if self.loss is not None:
            raise ValueError(f"model '{self.name}' already has a loss ('{self.loss}')")
        prob, loss = self._claim(prob, "prob"), self._claim(loss, "loss")
        self._add("SoftmaxWithLoss", [logits, label], [prob, loss], {}, loss)
        self.output, self.loss = prob, loss
        return prob, loss

    @_atomic
    def accuracy(self, prob, label="label", top_k=1, name=None):
        self._label(label)
        if name is None and f"top{top_k}" not in self._used:
            name = f"top{top_k}"
        name = self._claim(name, "accuracy")
        self._add("Accuracy", [prob, label], [name], dict(top_k=top_k), name)
        self.accuracy_blobs.append(name)
        return name

    # ----- output -----

    def net_def(self):
        """The forward NetDef: from the input to the loss, output and accuracies."""
        produced, external = set(), []
        for op in self.ops:
            for x in op["inputs"]:
                if x not in produced and x not in external:
                    external.append(x)
            produced.update(op["outputs"])
        first = [b for b in (self.input_name, self.label_name) if b in external]
        external = first + [b for b in external if b not in first]
        outputs = [b for b in [self.loss, self.output] + self.accuracy_blobs if b is not None]
        return {"name": self.name, "ops": [dict(op) for op in self.ops],
                "external_inputs": external, "external_outputs": outputs}

    def init_net_def(self):
        """The init NetDef: one filler op for every parameter and state blob."""
        return {"name": f"{self.name}_init", "ops": [dict(op) for op in self.init_ops],
                "external_inputs": [], "external_outputs": self.params + self.state}

    def net_json(self):
        return json.dumps(self.net_def())

    def to_spec(self, lr=None, momentum=None, weight_decay=None, nesterov=None, seed=None,
                threads=1, device="cpu", precision=None, label_smoothing=None, bias_decay=None,
                optimizer=None, momentum_convention=None, betas=None, eps=None, radam_eps=None,
                lookahead_k=None, lookahead_alpha=None):
        """The learner spec (a dict; ``json.dumps`` it for ``_C.Learner``); ``device`` is where
        the learner runs: "cpu", "cuda" or "cuda:N"; ``precision`` the arithmetic of its
        convolutions (fp32, bf16, tf32 or fp16: see the guide's performance notes);
        ``bias_decay=False`` exempts 1-D parameters (biases, batch-norm scales and shifts) from
        weight decay;
        ``label_smoothing`` the share of each target the loss spreads over the classes
        (SoftmaxWithLoss's argument, which checks it); ``optimizer`` sgd (momentum SGD in the
        caffe2 or pytorch ``momentum_convention``), adamw or radam (``betas``, ``eps``; radam's
        ``radam_eps`` placement, raw or corrected), with
        Lookahead where ``lookahead_k`` is set (docs/design/engine.md, "Optimisers"). None
        takes the option table's library default (``library_defaults``); for betas, eps and
        the Lookahead options, the learner's."""
        o = library_defaults(lr=lr, momentum=momentum, weight_decay=weight_decay,
                             nesterov=nesterov, seed=seed, precision=precision,
                             label_smoothing=label_smoothing, bias_decay=bias_decay,
                             optimizer=optimizer, momentum_convention=momentum_convention)
        lr, momentum, weight_decay = o["lr"], o["momentum"], o["weight_decay"]
        if self.input_name is None:
            raise ValueError(f"model '{self.name}' has no input: call m.input(name, shape=...)")
        if self.loss is None:
            raise ValueError(f"model '{self.name}' has no loss: call m.softmax_loss(...)")
        if lr < 0 or momentum < 0 or weight_decay < 0 or threads < 1:
            raise ValueError(f"solver needs lr, momentum, weight_decay >= 0 and threads >= 1, "
                             f"got lr={lr}, momentum={momentum}, weight_decay={weight_decay}, "
                             f"threads={threads}")
        net = self.net_def()
        for op in net["ops"]:
            if op["type"] == "SoftmaxWithLoss" and o["label_smoothing"]:
                op["args"] = dict(op["args"], label_smoothing=float(o["label_smoothing"]))
        return {
            "name": self.name, "source": self.source, "init_net": self.init_net_def(), "net": net,
            "input": self.input_name, "input_shape": list(self.input_shape),
            "label": self.label_name, "loss": self.loss, "output": self.output,
            "accuracy": list(self.accuracy_blobs), "params": list(self.params),
            "state": list(self.state),
            "solver": {"lr": float(lr), "momentum": float(momentum),
                       "weight_decay": float(weight_decay), "nesterov": bool(o["nesterov"]),
                       "bias_decay": bool(o["bias_decay"]), "type": str(o["optimizer"]),
                       "momentum_convention": str(o["momentum_convention"]),
                       **_set(betas=[float(b) for b in betas] if betas else None,
                              eps=eps, radam_eps=radam_eps, lookahead_k=lookahead_k,
                              lookahead_alpha=lookahead_alpha)},
            "seed": int(o["seed"]), "threads": int(threads), "device": check_device(device),
            "precision": str(o["precision"]),
        }

    @property
    def num_classes(self):
        """Width of the output blob (the classes), or None before softmax_loss."""
        s = self.shapes.get(self.output)
        return s[1] if s and len(s) == 2 else None

    def param_count(self, blob):
        return math.prod(self.shapes[blob])

    def num_params(self):
        """Trainable values (BN scale and bias count, running statistics do not)."""
        return sum(self.param_count(p) for p in self.params)

    def summary(self):
        """A per-layer table: name, type, output shape, parameters; then the totals."""
        rows = [(n, t, format_shape(self.shapes.get(out)),
                 f"{sum(self.param_count(p) for p in ps):,}") for n, t, out, ps in self.layers]
        head = ("layer", "type", "output shape", "params")
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
        line = lambda r: (f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  "
                          f"{r[3]:>{widths[3]}}").rstrip()
        rule = "-" * len(line(head))
        state = sum(self.param_count(p) for p in self.state)
        return "\n".join([f'Model "{self.name}": input {self.input_name} '
                          f"{format_shape(self.shapes.get(self.input_name))}",
                          rule, line(head), rule] + [line(r) for r in rows] + [
                          rule, f"Total params: {self.num_params():,} "
                                f"(in {len(self.params)} blobs)",
                          f"State (not trained): {state:,} (in {len(self.state)} blobs)"])
