"""Not the Python package: this folder holds the C++ runtime (core/, engine/, comm/).

Python started in the checkout root has the root first on ``sys.path``, so ``import crossbow``
finds this folder before the installed package (without this file, as an empty namespace
package). This file hands the import on: it loads the real ``crossbow`` package (the one
installed, else the checkout's python/crossbow) and puts it in ``sys.modules`` in its own
place, which the import system then returns. ``crossbow`` is the same module object, with the
same ``__file__`` and ``__path__``, as when imported from any other folder.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _real_spec():
    here = os.path.dirname(os.path.realpath(__file__))
    root = os.path.dirname(here)
    elsewhere = [p for p in sys.path if os.path.realpath(p or os.curdir) != root]
    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder:
            spec = finder.find_spec(__name__, elsewhere)
        elif hasattr(finder, "find_spec"):
            spec = finder.find_spec(__name__, None)
        else:
            continue
        if spec is not None and spec.origin not in (None, "namespace") and \
                not os.path.realpath(spec.origin).startswith(here + os.sep):
            return spec
    package = os.path.join(root, "python", "crossbow")
    return importlib.util.spec_from_file_location(
        __name__, os.path.join(package, "__init__.py"), submodule_search_locations=[package])


def _forward():
    spec = _real_spec()
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


_forward()
