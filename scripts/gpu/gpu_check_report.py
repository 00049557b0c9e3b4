#!/usr/bin/env python3
"""The summary of a scripts/gpu/gpu_check.sh run: reads its folder (steps.jsonl, gpu.csv,
parity.json and gpu_tests/NAME.json from GoogleTest, torch.json and torch_half.json,
bench/b{batch}_l{learners}.json, logs/), writes gpu_check.json there, prints a short table
last and exits with the check's code (0 passed, 1 tests failed, 2 incomplete programs, 3 no
GPU, 4 a benchmark failed or did not complete, or a target is unmeasured; 5 this report failed;
6 everything measured, a target not met). Stdlib only.

    python3 scripts/gpu/gpu_check_report.py OUT
"""
import json
import os
import re
import sys

TARGETS = (("auto_b32_over_torch_b32", 3.0), ("auto_b32_over_torch_b512", 0.8))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def log_tail(out, step, chars=400):
    try:
        with open(os.path.join(out, "logs", f"{step}.log"), errors="replace") as f:
            return f.read()[-chars:]
    except OSError:
        return ""


def add_gtest(result, data):
    """Adds one GoogleTest JSON document's counts and failed and skipped names to `result`."""
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = f"{suite['name']}.{t['name']}"
            if t.get("failures"):
                result["failed"].append(name)
            elif t.get("result") == "SKIPPED":
                result["skipped"].append(name)
    result["tests"] += data.get("tests", 0)


def finish_gtest(result, need_tests):
    """Passed if it ran, exited 0, failed none (and ran at least one test that was not skipped,
    where `need_tests`: a parity run whose every case skipped, as on a machine where the GPU is
    unusable, checked nothing)."""
    result["ran"] = result["tests"] - len(result["skipped"])
    result["passed"] = (result["status"] == "ok" and not result["failed"]
                        and (result["ran"] > 0 or not need_tests))
    if need_tests and result["status"] == "ok" and result["ran"] <= 0:
        result["why"] = "no case ran (every one skipped, or none selected)"
    return result


def gtest(out, step, steps, need_tests):
    """One GoogleTest run (step STEP, its JSON in STEP.json) as counts and names."""
    data, status = load(os.path.join(out, f"{step}.json")), steps.get(step, {})
    result = {"status": status.get("status", "not run"), "tests": 0, "failed": [], "skipped": []}
    if data:
        add_gtest(result, data)
    elif step in steps:
        result["log"] = log_tail(out, step)
    return finish_gtest(result, need_tests)


def gtest_each(out, steps, prefix="gpu_test_"):
    """The tests run one per process (steps PREFIX + NAME, their JSON in gpu_tests/NAME.json)
    as one run: a test whose process ended badly without saying which test failed (a crash, a
    timeout) counts as failed, with the end of its log under "logs"; one the budget skipped is
    listed under "not_run"."""
    result = {"status": "not run", "tests": 0, "failed": [], "skipped": [], "not_run": [],
              "logs": {}}
    mine = {step[len(prefix):]: record for step, record in steps.items()
            if step.startswith(prefix)}
    for name, record in mine.items():
        data = load(os.path.join(out, "gpu_tests", f"{name}.json"))
        failed_before = len(result["failed"])
        if data:
            add_gtest(result, data)
        if record["status"] == "skipped":
            result["not_run"].append(name)
        elif record["status"] != "ok" and len(result["failed"]) == failed_before:
            result["failed"].append(name)
            result["logs"][name] = log_tail(out, prefix + name)
    if mine:
        statuses = {record["status"] for record in mine.values()}
        result["status"] = "ok" if statuses == {"ok"} else "failed"
    return finish_gtest(result, False)


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def bench_runs(out, steps):
    """One entry per benchmark point (batch, learners): the median images/s of its rounds
    (crossbow_bench's JSON line of each round), or an error when a round failed or none ran."""
    rounds = {}
    for step, record in steps.items():
        m = re.fullmatch(r"bench_b(\d+)_l(\w+?)(?:_r(\d+))?", step)
        if not m:
            continue
        name = f"b{m[1]}_l{m[2]}" + (f"_r{m[3]}" if m[3] else "")
        try:
            with open(os.path.join(out, "bench", f"{name}.json")) as f:
                run = json.loads([line for line in f if line.startswith("{")][-1])
        except (OSError, ValueError, IndexError):
            why = {"skipped": "the time budget was spent",
                   "timeout": f"killed after {record.get('seconds')} s"}.get(record["status"], "")
            run = {"error": f"{record['status']}: {why} {log_tail(out, step)}".strip(),
                   "skipped": record["status"] == "skipped"}
        rounds.setdefault((int(m[1]), m[2]), []).append(run)
    runs = []
    for (batch, learners), results in rounds.items():
        good = [r for r in results if "error" not in r]
        bad = [r for r in results if "error" in r and not (good and r.get("skipped"))]
        if bad:
            run = {"error": bad[0]["error"]}
        else:
            run = dict(min(good, key=lambda r: abs(r["images_per_s"] - median(
                [g["images_per_s"] for g in good]))))
            run["images_per_s"] = median([r["images_per_s"] for r in good])
            run["rounds"] = [r["images_per_s"] for r in good]
        run.update(batch_size=batch, learners=learners)
        runs.append(run)
    return runs


def precision_of(torch_result):
    return torch_result.get("precision", "fp32")


def peer_column(torch_result):
    """A PyTorch result's column: "PyTorch", then its mode and precision where not eager fp32."""
    mode, precision = torch_result.get("mode", "eager"), precision_of(torch_result)
    return " ".join(["PyTorch"] + [mode] * (mode != "eager") + [precision] * (precision != "fp32"))


def targets(runs, torch):
    """Auto-tuned Crossbow at batch 32 against PyTorch's best fp32 mode at each target's batch."""
    rate = {(r["batch_size"], r["learners"]): r.get("images_per_s") for r in runs}
    best = {}
    for r in torch:
        if precision_of(r) == "fp32" and r.get("images_per_s"):
            if r["images_per_s"] > best.get(r["batch_size"], {}).get("images_per_s", 0):
                best[r["batch_size"]] = r
    auto = rate.get((32, "auto"))
    out = {}
    for (name, goal), batch in zip(TARGETS, (32, 512)):
        peer = best.get(batch, {})
        ratio = auto / peer["images_per_s"] if auto and peer else None
        out[name] = {"ratio": ratio, "target": goal, "peer_mode": peer.get("mode", "eager"),
                     "met": None if ratio is None else ratio >= goal}
    return out


def gpu_name(out):
    try:
        with open(os.path.join(out, "gpu.csv")) as f:
            return f.read().strip().splitlines()[0]
    except (OSError, IndexError):
        return None


def exit_code(steps, parity, tests, runs, torch, goals):
    if steps.get("programs", {}).get("status") == "incomplete":
        return 2
    if steps.get("gpu", {}).get("status") == "absent":
        return 3
    if not (parity["passed"] and tests["passed"]):
        return 1
    if (not runs or not torch or any("error" in r for r in runs + torch)
            or any(t["met"] is None for t in goals.values())):
        return 4
    return 0 if all(t["met"] for t in goals.values()) else 6


def table(summary):
    if summary["exit_code"] == 3:
        return ("no GPU present (nvidia-smi finds none): the programs are complete and start; "
                f"nothing was measured\nresult: {summary['result']} (exit 3)")
    lines = [f"GPU: {summary['gpu'] or 'none'}"]
    for name in ("parity", "gpu_tests"):
        t = summary[name]
        lines.append(f"{name}: {'passed' if t['passed'] else 'FAILED'} ({t['status']}, "
                     f"{t['tests']} tests, {len(t['failed'])} failed, {len(t['skipped'])} "
                     "skipped)" + (f"; failed: {', '.join(t['failed'][:5])}" if t["failed"]
                                   else "") + (f"; {t['why']}" if t.get("why") else "")
                     + (f"; {len(t['not_run'])} not run (the budget was spent)"
                        if t.get("not_run") else ""))
    runs, torch = summary["crossbow"], summary["torch"]
    if runs or torch:
        cols = sorted({r["learners"] for r in runs},
                      key=lambda k: ("_" in k, k == "auto", k.zfill(4)))
        cell = lambda r: ("error" if "error" in r else f"{r['images_per_s']:.0f}"
                          + (f" ({r['learners_per_device']})" if r["learners"] == "auto" else ""))
        lines.append("ResNet-32 training images/s on cuda:0, the median of each point's rounds; "
                     "Crossbow by learners per device (auto: the autotuner's choice; 1_bf16: one "
                     "learner in precision bf16, fp32 elsewhere), PyTorch with its defaults "
                     "in each mode (eager unless named; graph: the step as one CUDA graph; "
                     "bf16, fp16: under torch.autocast)")
        peers = sorted({peer_column(r) for r in torch if "batch_size" in r},
                       key=lambda c: (c != "PyTorch", c.endswith(("bf16", "fp16")), c))
        head = ["batch"] + [f"{k}" for k in cols] + peers
        rows = []
        for b in sorted({r["batch_size"] for r in runs + torch if "batch_size" in r}):
            row = [str(b)]
            for k in cols:
                r = [r for r in runs if r["batch_size"] == b and r["learners"] == k]
                row.append(cell(r[0]) if r else "-")
            for column in peers:
                p = [r for r in torch if r.get("batch_size") == b and peer_column(r) == column]
                row.append("-" if not p else "error" if "error" in p[0] else
                           f"{p[0]['images_per_s']:.0f}")
            rows.append(row)
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            lines.append(" | ".join(c.rjust(w) for c, w in zip(r, widths)))
    errors = sorted({r["error"].strip().splitlines()[-1][:160] for r in runs + torch
                     if r.get("error", "").strip()})
    lines += [f"error: {e}" for e in errors[:3]]
    for name, t in summary["targets"].items():
        ratio = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        verdict = "not measured" if t["met"] is None else "met" if t["met"] else "NOT met"
        lines.append(f"target {name}: {ratio} (>= {t['target']}x, against PyTorch "
                     f"{t['peer_mode']}): {verdict}")
    if summary["exit_code"] == 2:
        lines.append(f"incomplete: {log_tail(summary['out'], 'programs')}".rstrip())
    lines.append(f"result: {summary['result']} (exit {summary['exit_code']}); "
                 f"everything in {summary['json']}")
    return "\n".join(lines)


RESULTS = {0: "passed", 1: "TESTS FAILED", 2: "INCOMPLETE programs", 3: "no GPU, nothing measured",
           4: "a BENCHMARK FAILED or was not measured", 6: "measured, a TARGET NOT MET"}


def peer_results(out, steps, step, required):
    """The results of one PyTorch step (STEP.json), each peer step on its own: a step that did
    not complete (timed out, failed, skipped by the budget), or left no results, is one error
    entry, even where the other step ran. `required`: the step must have run (fp32, which the
    targets are taken against); the half-precision step only where it was started."""
    if step not in steps and not required:
        return []
    status = steps.get(step, {}).get("status", "not run")
    results = (load(os.path.join(out, f"{step}.json")) or {}).get("results", [])
    if status == "ok" and results:
        return results
    why = {"skipped": "the time budget was spent", "not run": "the step never ran"}.get(status, "")
    error = {"error": f"{step}: {status}: {why} {log_tail(out, step)}".strip()}
    return results + [error]


def main(out):
    steps = {}
    try:
        with open(os.path.join(out, "steps.jsonl")) as f:
            for line in f:
                s = json.loads(line)
                steps[s["step"]] = s
    except OSError:
        pass
    parity, tests = gtest(out, "parity", steps, True), gtest_each(out, steps)
    torch_doc = load(os.path.join(out, "torch.json")) or {}
    # PyTorch in fp32 (the targets' peer), then under autocast (torch_half), each checked alone
    torch = (peer_results(out, steps, "torch", True)
             + peer_results(out, steps, "torch_half", False))
    runs = bench_runs(out, steps)
    goals = targets(runs, torch)
    code = exit_code(steps, parity, tests, runs, torch, goals)
    summary = {"result": RESULTS[code], "exit_code": code, "gpu": gpu_name(out),
               "steps": list(steps.values()), "parity": parity, "gpu_tests": tests,
               "torch_meta": torch_doc.get("meta"), "torch": torch, "crossbow": runs,
               "targets": goals, "out": out, "json": os.path.join(out, "gpu_check.json")}
    with open(summary["json"], "w") as f:
        json.dump(summary, f, indent=1)
    print(table(summary), flush=True)
    return code


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        code = main(sys.argv[1])
    except Exception:  # a broken report must not read as a test failure (exit 1)
        import traceback
        traceback.print_exc()
        code = 5
    sys.exit(code)
