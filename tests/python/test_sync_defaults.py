"""Every synchroniser trains with its own defaults at any learner count: LeNet on the bundled
MNIST sample, 200 iterations, nothing but the learner count and --sync given."""
import math
import os

import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import crossbow  # noqa: E402
from crossbow import cli  # noqa: E402
from crossbow.datasets import load_mnist  # noqa: E402
from crossbow.plot import read_metrics  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "samples", "mnist")
ITERATIONS = 200


@pytest.fixture(scope="module")
def mnist():
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no MNIST sample at {SAMPLE}")
    images, labels, _, _ = load_mnist(SAMPLE)
    return (images - images.mean()) / images.std(), labels  # standardised, as the preset does


def losses(tmp_path, mnist, **options):
    """The training loss of every iteration (each the mean of the learners')."""
    metrics = tmp_path / "metrics.jsonl"
    crossbow.Trainer("lenet", mnist, iterations=ITERATIONS, lr=0.01, log_every=1,
                     progress=False, metrics=str(metrics), **options).fit()
    return [r["loss"] for r in read_metrics(str(metrics)) if "loss" in r]


def assert_trains(curve):
    """Finite throughout, and the last 20 iterations well below the first few (each a mean over
    many images: the drop is several times what batches vary by)."""
    assert len(curve) == ITERATIONS and all(math.isfinite(x) for x in curve), curve
    first, last = np.mean(curve[:5]), np.mean(curve[-20:])
    assert last < 0.7 * first, (first, last)


@pytest.mark.parametrize("learners", [1, 16, 64])
def test_sma_trains_without_alpha_at_any_learner_count(tmp_path, mnist, learners):
    # 64 learners at the former fixed alpha 0.1 diverge by iteration 12. (Batch 8: at batch 4
    # even one learner of plain SGD diverges at this rate.)
    assert_trains(losses(tmp_path, mnist, learners=str(learners), batch_size=8))


def test_diloco_trains_with_its_own_period(tmp_path, mnist):
    # At a period of 1 its outer momentum made this diverge within 30 iterations.
    assert_trains(losses(tmp_path, mnist, learners="2", batch_size=16, sync="diloco"))


def test_help_shows_each_synchronisers_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "auto: the synchroniser's own (diloco 64, easgd 1, localsgd 4, sma 1)" in text
    assert "auto: 1/N for N >= 2 learners (N of the whole job, again whenever the autotuner changes it), 0.1 for one" in text
