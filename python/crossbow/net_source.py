"""What ``--net`` names, for every command and for Trainer: a zoo net (``lenet``), a function in
a Python file (``path/to/nets.py:my_net``) or in an importable module (``mypkg.nets:my_net``)
that returns a ModelBuilder. The builder's ``source`` says where it came from (a file made
absolute); the learner spec carries it into training checkpoints, so that ``crossbow eval`` and
``export`` rebuild the same net without being told again."""
import importlib
import importlib.util
import inspect
import os
import sys

from crossbow import _native, nets
from crossbow.builder import ModelBuilder
from crossbow.names import did_you_mean

HELP = ("a zoo net ({names}), or FILE.py:FUNCTION or MODULE:FUNCTION: a function that returns a "
        "crossbow.ModelBuilder (called with num_classes=N where --num-classes is given)")


def help_text():
    return HELP.format(names=", ".join(nets.NAMES))


def builder(net, num_classes=None, input_size=None, zero_init_residual=False):
    """The ModelBuilder `net` names (or `net` itself, a ModelBuilder), with ``source`` set."""
    if isinstance(net, ModelBuilder):
        _zoo_only(zero_init_residual, input_size, "a ModelBuilder")
        return net
    if not isinstance(net, str):
        raise TypeError(f"net must be a zoo net name, FILE.py:FUNCTION, MODULE:FUNCTION or a "
                        f"ModelBuilder, got {type(net).__name__}")
    if ":" not in net:
        b = nets.builder(net, num_classes, input_size, zero_init_residual)
        b.source = net
        return b
    _zoo_only(zero_init_residual, input_size, f"'{net}'")
    where, _, name = net.rpartition(":")
    is_file = where.endswith(".py") or os.sep in where
    source = f"{os.path.abspath(where)}:{name}" if is_file else net
    function = _function(_load_file(where) if is_file else _import(where), name, where)
    kwargs = {} if num_classes is None else {"num_classes": int(num_classes)}
    _check_call(function, kwargs, f"--net {net}: {name}")
    b = function(**kwargs)
    if not isinstance(b, ModelBuilder):
        raise TypeError(f"--net {net}: {name}() returned {type(b).__name__}, not a "
                        f"crossbow.ModelBuilder")
    b.source = source
    return b


def checkpoint_builder(net, checkpoint, num_classes=None, input_size=None):
    """The builder of `net` (see crossbow.net_source), or where None, of the net the training
    checkpoint records; a ValueError where the checkpoint is of another net."""
    recorded, source = _native.load().checkpoint_net(checkpoint)
    if net is None:
        if not source:
            raise ValueError(f"checkpoint '{checkpoint}' does not record where its net "
                             f"'{recorded}' came from: give --net")
        net = source
    b = builder(net, num_classes, input_size)
    if b.name != recorded:
        origin = f" ({source})" if source not in ("", recorded) else ""
        raise ValueError(f"checkpoint '{checkpoint}' is of net '{recorded}'{origin}, not "
                         f"'{b.name}' (--net {net})")
    return b


def _check_call(function, kwargs, what):
    try:
        signature = inspect.signature(function)
    except ValueError:
        return  # a built-in without a signature: the call says what is wrong
    try:
        signature.bind(**kwargs)
    except TypeError as e:
        given = f"num_classes={kwargs['num_classes']} (--num-classes)" if kwargs else "no arguments"
        raise TypeError(f"{what}{signature} cannot be called with {given}: {e}") from None


def _zoo_only(zero_init_residual, input_size, what):
    if zero_init_residual:
        raise ValueError(f"zero_init_residual (--zero-init-residual) is for the zoo's ResNets, not "
                         f"{what}: a ModelBuilder sets the initial scale of its batch norms itself "
                         f"(spatial_bn's scale_init)")
    if input_size is not None:
        raise ValueError(f"input_size (--input-size) is for the zoo's ImageNet nets, not {what}: "
                         f"its builder fixes the input shape")


def _load_file(path):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--net: no Python file '{path}'")
    name = "crossbow_net_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # so that pickling and dataclasses in the file work
    spec.loader.exec_module(module)
    return module


def _import(module):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(f"--net: cannot import module '{module}' ({e}); a file is "
                                  f"named by its path, ending in .py") from None


def _function(module, name, where):
    functions = sorted(n for n, v in vars(module).items()
                       if callable(v) and not n.startswith("_") and not inspect.isclass(v))
    if not hasattr(module, name):
        raise ValueError(f"--net: '{where}' has no function '{name}'"
                         f"{did_you_mean(name, functions)} (its functions: "
                         f"{', '.join(functions) or 'none'})")
    function = getattr(module, name)
    if not callable(function):
        raise TypeError(f"--net: '{name}' in '{where}' is a {type(function).__name__}, not a "
                        f"function")
    return function
