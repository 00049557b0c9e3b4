"""scripts/soak/soak.py's verdict: a skipped case is reported apart from the passes, with its own
exit status, and never under "all cases passed". The cases themselves are replaced (the real
ones take a quarter of an hour); main's wiring of them into the verdict is what runs."""
import importlib.util

import pytest

from conftest import script

spec = importlib.util.spec_from_file_location("soak", script("soak.py"))
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)


def _cases(monkeypatch, full_disk, soak_learners=1):
    monkeypatch.setattr(soak, "VERDICTS", [])
    monkeypatch.setattr(soak, "convert", lambda *args: None)
    monkeypatch.setattr(soak, "soak", lambda dbs, work: (
        soak.say("PASS" if soak_learners else "FAIL", "soak", "-"), soak_learners, 0.4))
    monkeypatch.setattr(soak, "kill_and_resume", lambda *args: soak.say("PASS", "kills", "-"))
    monkeypatch.setattr(soak, "bad_data", lambda dbs, work: soak.say("PASS", "bad data", "-"))
    monkeypatch.setattr(soak, "full_disk", lambda dbs, work: soak.say(full_disk, "full disk", "-"))
    monkeypatch.setattr(soak, "many_learners", lambda dbs: soak.say("PASS", "64 learners", "-"))


@pytest.mark.parametrize("full_disk, status, last", [
    ("PASS", 0, "all 5 cases passed in "),
    ("SKIP", 2, "NOT ALL CASES RAN (4 passed, 0 failed, 1 skipped; skipped: full disk) in "),
    ("FAIL", 1, "SOME CASES FAILED (4 passed, 1 failed, 0 skipped) in "),
])
def test_a_skip_is_not_a_pass(monkeypatch, tmp_path, capsys, full_disk, status, last):
    _cases(monkeypatch, full_disk)
    monkeypatch.setattr("sys.argv", ["soak.py", "--work", str(tmp_path)])
    assert soak.main() == status
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(last), out[-1]
    assert any(line.startswith(f"{full_disk:4}  full disk ") for line in out)


def test_cases_that_could_not_run_after_a_failed_soak_are_skips_not_silence(
        monkeypatch, tmp_path, capsys):
    _cases(monkeypatch, "PASS", soak_learners=0)
    monkeypatch.setattr("sys.argv", ["soak.py", "--work", str(tmp_path)])
    assert soak.main() == 1
    out = capsys.readouterr().out
    assert "SKIP  kill -9 and --resume" in out and "1 failed, 1 skipped" in out
