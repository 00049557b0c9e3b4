"""The peer's configurations (scripts/peer/peer.py MODES), applied in the peer's process: eager NCHW,
eager channels_last, and torch.compile with PyTorch's default backend (inductor). Needs torch."""
import contextlib
import time

import torch


def prepare(model, mode):
    """(model to call, function that lays out an input batch) for `mode`."""
    if mode == "eager":
        return model, lambda x: x
    if mode == "channels_last":
        return (model.to(memory_format=torch.channels_last),
                lambda x: x.contiguous(memory_format=torch.channels_last))
    if mode == "compile":
        return torch.compile(model), lambda x: x
    raise ValueError(f"unknown peer mode {mode!r}, expected eager, channels_last or compile")


def autocast(precision):
    """The context a step's forward pass and loss run in: for bf16 PyTorch's mixed-precision
    recipe on CPUs (torch.autocast to bfloat16), for fp32 nothing."""
    if precision == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def timed(step):
    """Seconds that `step()` takes: the first step of the compile mode is its compile time,
    which the benchmarks report apart and keep out of the rate."""
    start = time.perf_counter()
    step()
    return time.perf_counter() - start
