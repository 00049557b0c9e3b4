"""The stated sweep of bench_train.py statistical: the recipes each side is tried with, the
same number on each side, each over every budget of epochs the sweep is given (their
schedules are fractions of it), ResNet-20, momentum 0.9 and weight decay 1e-4 throughout.

PyTorch (each in every --modes configuration: eager, channels_last, torch.compile):
  he-b128        He et al. 2016: batch 128, lr 0.1, /10 at 1/2 and 3/4 of the run.
  cos-b128       He's batch and rate, a cosine from lr 0.1 to 0 at the end of the run (the
                 schedule of Loshchilov & Hutter 2017 without restarts, as Bag of Tricks uses).
  goyal-b128     Goyal et al. 2017: lr 0.1 x batch / 128 (the linear-scaling rule from He's
  goyal-b256     0.1 at 128), warm-up from 0.1 over 5/90 of the run, /10 at 30, 60 and 80 of 90
  goyal-b512     (at batch 128 He's rate with Goyal's drops: Crossbow's sma-b16 drops, no warm-up).
  onecycle-b512  One cycle as fast CIFAR recipes run it (Smith 2018; Page's DAWNBench ResNet):
                 batch 512, lr linearly from 0 to 0.4 over the first 1/5 of the run and back to
                 0 at its end, Nesterov momentum.
Crossbow (crossbow.recipes.small_batch: the rate by the square-root rule from He's 0.1 at 128,
one epoch of warm-up, central momentum 0.9, alpha at its default; /10 at Goyal's fractions of the
run, 1/3, 2/3 and 8/9: small batches reach the high rate's plateau in fewer epochs, see
docs/design/engine.md):
  sma-b16        SMA, batch 16 per learner, auto-tuned learners.
  sma-b16-cos    the same with cos-b128's schedule: a cosine to 0 at the end of the run from
                 the end of the warm-up, instead of the drops.
  sma-b16-he     the same with he-b128's drops, at 1/2 and 3/4 of the run: a longer first phase,
                 whose higher plateau after the drop reached 85% sooner
                 (docs/history/results-0.1.0.md).
  sma-b32        SMA, batch 32 per learner, auto-tuned learners.
  sgd-b16        one learner, batch 16.
  localsgd-b16   local SGD, averaging every 4 iterations (the best H of the comparison in
                 docs/history/results-0.1.0.md), batch 16, auto-tuned learners.

Needs neither torch nor Crossbow to import (the peer reads lr_factor from here); the Crossbow
recipes import crossbow when asked for.
"""
import math

HE_DROPS = (1 / 2, 3 / 4)
GOYAL_DROPS = (30 / 90, 60 / 90, 80 / 90)
HE_LR, HE_BATCH = 0.1, 128
COMMON = dict(momentum=0.9, weight_decay=1e-4)


def lr_factor(schedule, t):
    """The factor of the base rate at training position t (epochs, fractional: images seen /
    training images, as Crossbow's policies count). `schedule`: warmup (epochs) and
    warmup_start (the factor it starts from); then decay "step" (/10 at each of drops, in
    epochs), "linear" or "cosine" (to 0 at end, in epochs, from the end of the warm-up: the
    cosine as Crossbow's lr_policy cosine has it)."""
    warmup, start = schedule.get("warmup", 0), schedule.get("warmup_start", 0.1)
    if t < warmup:
        return start + (1 - start) * t / warmup
    if schedule["decay"] == "step":
        return 0.1 ** sum(1 for d in schedule["drops"] if t >= d)
    if schedule["decay"] in ("linear", "cosine"):
        left = max(0.0, (schedule["end"] - t) / (schedule["end"] - warmup))
        return left if schedule["decay"] == "linear" else 0.5 * (1 - math.cos(math.pi * left))
    raise ValueError(f"unknown decay {schedule['decay']!r}, expected step, linear or cosine")


def _torch(batch, lr, about, schedule, nesterov=False):
    return dict(side="pytorch", batch=batch, about=about,
                options=dict(COMMON, lr=lr, nesterov=nesterov, schedule=schedule))


def torch_recipes(epochs):
    """{name: {side, batch, about, options}}: the peer's recipes over `epochs`."""
    def steps(drops):
        return [round(f * epochs, 3) for f in drops]

    out = {"he-b128": _torch(128, HE_LR, "lr 0.1, /10 at 1/2 and 3/4",
                             dict(decay="step", drops=steps(HE_DROPS))),
           "cos-b128": _torch(128, HE_LR, "lr 0.1, cosine to 0",
                              dict(decay="cosine", end=epochs))}
    for batch in (128, 256, 512):
        # The warm-up starts from He's rate, so at He's batch there is none.
        warmup = (dict(warmup=round(5 / 90 * epochs, 3), warmup_start=HE_BATCH / batch)
                  if batch > HE_BATCH else {})
        out[f"goyal-b{batch}"] = _torch(
            batch, HE_LR * batch / HE_BATCH,
            f"lr {HE_LR * batch / HE_BATCH:g} (linear scaling)"
            f"{', warm-up 5/90' if warmup else ''}, /10 at 30, 60, 80 of 90",
            dict(decay="step", drops=steps(GOYAL_DROPS), **warmup))
    out["onecycle-b512"] = _torch(
        512, 0.4, "one cycle: 0 to lr 0.4 over 1/5, linear to 0, Nesterov",
        dict(decay="linear", end=epochs, warmup=round(epochs / 5, 3), warmup_start=0.0),
        nesterov=True)
    return out


def crossbow_recipes(epochs):
    """{name: {side, batch, about, options}}: Crossbow's recipes over `epochs`, options for
    crossbow.Trainer by the one rule of crossbow.recipes.small_batch."""
    from crossbow import recipes

    drops = (recipes.multistep(epochs, GOYAL_DROPS), "/10 at 1/3, 2/3, 8/9")
    cosine = (recipes.flat_cosine(epochs, 0.0), "cosine to 0")
    he_drops = (recipes.multistep(epochs, HE_DROPS), "/10 at 1/2 and 3/4")

    def rule(batch, sync, learners, about, schedule=drops, **extra):
        options = {**COMMON, **schedule[0],
                   **recipes.small_batch(batch, sync, learners, HE_LR, HE_BATCH), **extra}
        return dict(side="crossbow", batch=batch, options=options,
                    about=f"{about}, lr {options['lr']:g}, warm-up 1 epoch, {schedule[1]}")

    return {"sma-b16": rule(16, "sma", "auto", "SMA, auto-tuned learners"),
            "sma-b16-cos": rule(16, "sma", "auto", "SMA, auto-tuned learners", cosine),
            "sma-b16-he": rule(16, "sma", "auto", "SMA, auto-tuned learners", he_drops),
            "sma-b32": rule(32, "sma", "auto", "SMA, auto-tuned learners"),
            "sgd-b16": rule(16, "sgd", 1, "one learner"),
            "localsgd-b16": rule(16, "localsgd", "auto", "local SGD H=4, auto-tuned learners",
                                 sync_period=4)}


def sweep(epochs, names=None):
    """The recipes named in `names` (all by default), Crossbow's first; ValueError naming an
    unknown one."""
    every = {**crossbow_recipes(epochs), **torch_recipes(epochs)}
    names = list(every) if names is None else names
    unknown = [n for n in names if n not in every]
    if unknown:
        raise ValueError(f"unknown recipe '{unknown[0]}' (--recipes); the sweep's recipes: "
                         f"{', '.join(every)}")
    return {n: every[n] for n in every if n in names}

