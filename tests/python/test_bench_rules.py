"""The benchmarks' measurement rule (scripts/bench/bench_train.py), one function for both sides: a
slow start counts in the overall rate and not in the steady one; a rate that changes half way
is measured on the later half."""
import importlib.util
import json

import pytest

from conftest import script

spec = importlib.util.spec_from_file_location(
    "bench_train", script("bench_train.py"))
bench_train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_train)


def log_of(rates, step=0.1):
    """(seconds, cumulative images) every `step` s for a list of (seconds, images/s) phases."""
    log, t, n = [], 0.0, 0.0
    for seconds, rate in rates:
        for _ in range(round(seconds / step)):
            t, n = t + step, n + rate * step
            log.append((t, n))
    return log


def test_steady_ignores_a_slow_start_that_overall_counts():
    steady, overall = bench_train.rates(log_of([(2, 10.0), (18, 100.0)]), 0, 1.0)
    assert steady == pytest.approx(100.0)
    assert overall == pytest.approx((20 + 1800) / 20)


def test_steady_is_the_later_half_of_the_measured_phase():
    log = log_of([(5, 1000.0), (10, 50.0), (10, 80.0)])
    assert bench_train.rates(log, 50, 1.0)[0] == pytest.approx(80.0)


def test_crossbow_log_counts_images_from_its_first_record(tmp_path):
    records = [dict(iteration=i, time=0.5 + i / 10, learners_per_device=2) for i in (7, 17, 27)]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert bench_train.crossbow_log(str(path), 16) == [(1.2, 0), (2.2, 320), (3.2, 640)]
