"""The table of training options, read from C++ (crossbow/train/trainer_options.cc), which also
checks every value: the Trainer's keyword arguments, the ``crossbow train`` flags (and those
other commands share with it) and the library defaults of Model and ModelBuilder.to_spec.

It stands on the extension alone: the builder, the trainer and the commands import it.
"""
import json
import math
import typing

from crossbow import _native
from crossbow.names import did_you_mean

_OPTIONS = None


class Option(typing.NamedTuple):
    default: object  # the commands' (Trainer, crossbow train); None: unset; a tuple for a list
    kind: type  # of the value, or of each of a list's values
    help: str
    unit: str  # "" where it has none
    is_list: bool
    library_default: object  # Model's and ModelBuilder.to_spec's, where the table differs


_KINDS = {"int": int, "float": float, "str": str, "bool": bool, "floats": float}


def _value(text):
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


def option_table():
    """name: Option, from the C++ table of options (crossbow/train/trainer_options.cc), which
    also checks every value: the Trainer keyword arguments and the `crossbow train` flags."""
    global _OPTIONS
    if _OPTIONS is None:
        table = {}
        for o in _native.load().trainer_options():
            default, library = (_value(o[k]) for k in ("default", "library_default"))
            rule = o["rule"] if o["type"] not in ("str", "bool") else ""
            table[o["name"]] = Option(default, _KINDS[o["type"]],
                                      o["doc"] + (f" ({rule})" if rule else ""), o["unit"],
                                      o["type"] == "floats", library)
        _OPTIONS = table
    return _OPTIONS


def library_defaults(**values):
    """``values`` with each None replaced by the option's default for the Python library
    (Model, ModelBuilder.to_spec), which the table says where it differs from the commands'
    (weight_decay: none unless asked)."""
    table = option_table()
    return {k: table[k].library_default if v is None else v for k, v in values.items()}


def as_json(options):
    """The options as the JSON the C++ table reads: unset ones left out, NaN and infinities
    as the strings JSON must carry them in."""
    def value(v):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return [value(x) for x in v] if isinstance(v, (list, tuple)) else v
    return json.dumps({k: value(v) for k, v in options.items() if v is not None})


def checked_options(options):
    """Every option: the table's defaults, with `options` over them, checked by the table. An
    unknown name is a TypeError with a did-you-mean, a bad value a ValueError naming it."""
    table = option_table()
    unknown = sorted(set(options) - set(table))
    if unknown:
        raise TypeError(f"Trainer got an unknown option '{unknown[0]}'"
                        f"{did_you_mean(unknown[0], table)}")
    checked = {name: option.default for name, option in table.items()}
    checked.update(options)
    _native.load().check_trainer_options(as_json(checked))
    return checked


def checked_subset(**options):
    """``options``, some of the table's, each checked against its rule (a ValueError naming
    it), without the checks of a whole training run: for the commands that share them."""
    _native.load().check_options(as_json(options))
    return options


def add_arguments(parser, names=None, **defaults):
    """The options as flags of `crossbow train`: --batch-size, --lr-policy, --resume ...; or of
    a command that shares some (``names``), with ``defaults`` where its own differ. Without
    the C++ extension (which holds the table) the command takes any flags and says how to
    build it when it runs."""
    import argparse
    if not _native.available():
        parser.set_defaults(unchecked_flags=True)  # options_from says what is missing
        return
    for name, o in option_table().items():
        if names is not None and name not in names:
            continue
        o = o._replace(default=defaults.get(name, o.default))
        flag = "--" + name.replace("_", "-")
        metavar = (o.unit or name).upper()
        if o.kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=o.default,
                                help=o.help)
        elif o.is_list:
            parser.add_argument(flag, type=o.kind, nargs="*", default=list(o.default),
                                metavar=metavar, help=o.help)
        else:
            parser.add_argument(flag, type=o.kind, default=o.default, metavar=metavar,
                                help=o.help)


def options_from(args, names=None):
    """The options' values from parsed `crossbow train` arguments; or the ``names`` a command
    shares with it, checked (checked_subset)."""
    if getattr(args, "unchecked_flags", False):
        _native.load()  # the ImportError that says how to build the extension
    if names is not None:
        return checked_subset(**{name: getattr(args, name) for name in names})
    return {name: getattr(args, name) for name in option_table()}
