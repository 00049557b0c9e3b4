"""Access to the C++ extension ``crossbow._C``, imported on first use.

``import crossbow`` works before it is built; building a net needs it (the builder asks the
operator schemas for shapes), and so does running one.
"""
import importlib

_HINT = ("crossbow's C++ extension (crossbow._C, python/crossbow/_C*.so) {what}: "
         "run scripts/setup.sh to build it")


def load():
    """Returns the ``crossbow._C`` module, or raises an ImportError that says how to build it."""
    try:
        return importlib.import_module("crossbow._C")
    except ImportError as e:
        missing = getattr(e, "name", None) == "crossbow._C"
        what = "is not built" if missing else f"failed to load ({e})"
        raise ImportError(_HINT.format(what=what), name="crossbow._C") from e


def available():
    """True when the extension imports."""
    try:
        load()
        return True
    except ImportError:
        return False
