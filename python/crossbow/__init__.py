"""Crossbow: train deep networks with small batches (SMA, Koliousis et al., VLDB 2019).

Python describes nets (builder, model zoo, summaries); the C++ extension ``crossbow._C``,
imported on first use (``scripts/setup.sh`` builds it), gives their shapes and runs them.
"""
import importlib
import importlib.abc
import importlib.util
import os
import sys

from crossbow import _native
from crossbow.builder import ModelBuilder
from crossbow.model import Model

__version__ = "0.1.0"
__all__ = ["ModelBuilder", "Model", "Trainer", "nets", "data", "operators", "operator_doc"]


def operators():
    """[(operator type, description)] of every registered operator."""
    return [(str(name), str(doc)) for name, doc in _native.load().operators()]


def operator_doc(name):
    """The schema doc of one operator; ValueError with a suggestion for unknown names."""
    return _native.load().operator_doc(name)


def __getattr__(name):
    if name in ("nets", "data"):
        return importlib.import_module(f"crossbow.{name}")
    if name == "Trainer":
        return importlib.import_module("crossbow.trainer").Trainer
    raise AttributeError(f"module 'crossbow' has no attribute '{name}'")


class _SourceTreeNets(importlib.abc.MetaPathFinder):
    """In a source checkout, crossbow.nets lives in the top-level nets/ folder
    (pyproject.toml maps it there when installing)."""

    def __init__(self, folder):
        self.folder = folder

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "crossbow.nets":
            return None
        return importlib.util.spec_from_file_location(
            fullname, os.path.join(self.folder, "__init__.py"),
            submodule_search_locations=[self.folder])


def _install_nets_finder():
    here = os.path.dirname(os.path.abspath(__file__))
    nets = os.path.join(os.path.dirname(os.path.dirname(here)), "nets")
    if os.path.isdir(os.path.join(here, "nets")) or not os.path.isfile(
            os.path.join(nets, "__init__.py")):
        return  # installed layout, or no source tree
    if not any(isinstance(f, _SourceTreeNets) for f in sys.meta_path):
        sys.meta_path.append(_SourceTreeNets(nets))


_install_nets_finder()
