"""fastai's fit_one_cycle and fit_flat_cos as Crossbow's onecycle and flatcos policies with the
options of crossbow.recipes.FASTAI_SCHEDULES: the rate (and one-cycle's momentum) of every
iteration of a 300-iteration run, against fastai's equations in numpy (everywhere) and against
what fastai's own Learner sets in a real fit (in the peer's venv)."""
import json

import numpy as np
import pytest

from crossbow import recipes

from fastai_peer import reference

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

EPOCHS, ITERATIONS, LR = 3, 100, 1e-3  # ITERATIONS a epoch


def crossbow_schedule(name, lr=LR):
    """Crossbow's rate and momentum at each iteration, the epoch exactly ITERATIONS batches."""
    options = dict(recipes.FASTAI_SCHEDULES[name](EPOCHS), lr=lr, optimizer="adamw")
    at = [i / ITERATIONS for i in range(EPOCHS * ITERATIONS)]
    return {k: np.array(v) for k, v in _C.schedule(json.dumps(options), at).items()}


def sched_cos(start, end, pos):
    return start + (1 + np.cos(np.pi * (1 - pos))) * (end - start) / 2


def combined_cos(pct, start, middle, end, pos):
    """fastai's combined_cos: a cosine start -> middle over [0, pct), middle -> end after."""
    return np.where(pos < pct, sched_cos(start, middle, pos / pct),
                    sched_cos(middle, end, (pos - pct) / (1 - pct)))


def fastai_equations(name, lr=LR):
    pos = np.arange(EPOCHS * ITERATIONS) / (EPOCHS * ITERATIONS)
    if name == "one_cycle":  # div 25, div_final 1e5, pct_start 0.25, moms (0.95, 0.85, 0.95)
        return {"lr": combined_cos(0.25, lr / 25, lr, lr / 1e5, pos),
                "mom": combined_cos(0.25, 0.95, 0.85, 0.95, pos)}
    return {"lr": combined_cos(0.75, lr, lr, lr / 1e5, pos)}  # fit_flat_cos: pct_start 0.75


@pytest.mark.parametrize("name", sorted(recipes.FASTAI_SCHEDULES))
def test_the_schedule_follows_fastais_equations(name):
    """Both in double: a rounding apart. Ending at 0 instead of lr / 1e5 is 1e-5 lr apart at the
    end, a linear warm-up 0.3 lr mid-way, an uncycled momentum 0.1."""
    got, want = crossbow_schedule(name), fastai_equations(name)
    np.testing.assert_allclose(got["lr"], want["lr"], rtol=0, atol=1e-9 * LR)
    if "mom" in want:
        np.testing.assert_allclose(got["momentum"], want["mom"], rtol=0, atol=1e-9)
    else:
        assert np.isnan(got["momentum"]).all()


@pytest.mark.parametrize("name,optimizer", [("one_cycle", "adam"), ("flat_cos", "ranger")])
def test_the_schedule_is_what_fastais_learner_sets(name, optimizer, tmp_path):
    """fastai's combine_scheds takes the position within a phase in float32: its rate is off by
    up to a few 1e-7 lr (about 6e-8 x the cosine's slope), well under the 1e-6 lr tolerance,
    which the 1e-5 lr of the end rate still exceeds tenfold."""
    fastai = reference("schedule", dict(schedule=name, optimizer=optimizer, lr=LR,
                                        epochs=EPOCHS, iterations=ITERATIONS), tmp_path)
    got = crossbow_schedule(name)
    assert len(fastai["lr"]) == EPOCHS * ITERATIONS
    np.testing.assert_allclose(got["lr"], fastai["lr"], rtol=0, atol=1e-6 * LR)
    if name == "one_cycle":
        np.testing.assert_allclose(got["momentum"], fastai["mom"], rtol=0, atol=1e-6)


def test_a_momentum_cycle_needs_onecycle_and_three_momenta():
    base = dict(epochs=2, lr=0.1, optimizer="adamw")
    with pytest.raises(ValueError, match=r"three momenta .* got 2 with lr policy 'onecycle'"):
        _C.schedule(json.dumps(dict(base, lr_policy="onecycle", momentum_cycle=[0.9, 0.8])), [0])
    with pytest.raises(ValueError, match=r"with lr policy onecycle, got 3 with lr policy 'cosine'"):
        _C.schedule(json.dumps(dict(base, lr_policy="cosine", momentum_cycle=[.9, .8, .9])), [0])
    with pytest.raises(ValueError, match=r"momentum_cycle \(--momentum-cycle\) moves the beta1"):
        _C.check_trainer_options(json.dumps(dict(epochs=2, lr_policy="onecycle",
                                                 momentum_cycle=[.9, .8, .9])))
