"""The net a CPU benchmark compares (bench_step.py, bench_train.py): `--net`, `--input-size` and
`--classes` checked and resolved once, under Crossbow's interpreter, into what both sides need:
the input shape, Crossbow's parameter count (the peer's twin, torch_zoo.py, must have the same)
and the multiply-adds per image that size the benchmarks' rounds."""
import math

import torch_zoo


def add_arguments(parser, default="resnet32"):
    parser.add_argument("--net", default=default,
                        help=f"the zoo net, both sides (default %(default)s; those with a PyTorch "
                             f"twin: {', '.join(torch_zoo.TWINS)})")
    parser.add_argument("--input-size", type=int,
                        help="the ImageNet nets' input side in pixels (default 224); the CIFAR "
                             "nets and LeNet have their own fixed size")
    parser.add_argument("--classes", type=int, default=10, help="outputs of the net")


def multiply_adds(builder):
    """Per image: each layer's parameters times its output's spatial size (a convolution's and
    a fully connected layer's multiply-adds; batch norm's few are counted alike)."""
    total = 0
    for _, _, out, params in builder.layers:
        spatial = math.prod(builder.shapes[out][2:])
        total += spatial * sum(builder.param_count(p) for p in params)
    return total


def resolve(net, classes, input_size):
    """{"net", "classes", "input_size" (as given, None for the net's own), "shape" [C, H, W],
    "params", "multiply_adds"}; a ValueError naming the flag where the net has no twin or takes
    no such size."""
    from crossbow import nets

    torch_zoo.check(net)
    builder = nets.builder(net, classes, input_size)
    return {"net": net, "classes": classes, "input_size": input_size,
            "shape": list(builder.shapes[builder.input_name][1:]),
            "params": builder.num_params(), "multiply_adds": multiply_adds(builder)}


def check_params(spec, params, who, shape=None):
    """Stops the benchmark where the net `who` ("crossbow", "torch") ran is not the one
    resolved (another parameter count: the peer's twin is another net, or a side built
    another), or, where `shape` is given, ran on inputs of another [C, H, W]."""
    if params != spec["params"]:
        raise RuntimeError(f"the {who} side ran a net of {params:,} parameters where "
                           f"Crossbow's {spec['net']} has {spec['params']:,}: not the same net")
    if shape is not None and list(shape) != spec["shape"]:
        raise RuntimeError(f"the {who} side ran {spec['net']} on inputs of {list(shape)}, not "
                           f"{spec['shape']}")
