"""The data folder (crossbow.archives): one setting, --data-dir else $CROSSBOW_DATA else the
checkout's ../shared/data, read the same way by every command that reads archives, and an
absent archive is one line that names the folder and the setting."""
import io
import os
import re
import subprocess
import sys
import tarfile

import pytest

import bench_train
from conftest import ROOT, script
from crossbow import archives

SETTING = "give the folder of the data archives with --data-dir or $CROSSBOW_DATA"


def test_the_flag_wins_then_the_environment_then_the_checkouts_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("CROSSBOW_DATA", raising=False)
    assert archives.data_dir() == os.path.join(os.path.dirname(ROOT), "shared", "data")
    monkeypatch.setenv("CROSSBOW_DATA", str(tmp_path / "env"))
    assert archives.data_dir() == str(tmp_path / "env")
    assert archives.data_dir(str(tmp_path / "flag")) == str(tmp_path / "flag")


def test_an_absent_archive_names_the_folder_and_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBOW_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        archives.path("cifar10-jpg.tar.gz")
    assert str(e.value) == f"no cifar10-jpg.tar.gz in '{tmp_path}': {SETTING}"


def _archive(folder, name="cifar10-jpg"):
    path = folder / f"{name}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/train/a/0.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return path


def test_extract_once_and_start_again_after_an_interruption(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBOW_DATA", str(tmp_path))
    _archive(tmp_path)
    into = tmp_path / "cache"
    (into / "cifar10-jpg.partial" / "left").mkdir(parents=True)  # an interrupted extraction
    lines = []
    folder = archives.extract("cifar10", str(into), log=lines.append)
    assert folder == str(into / "cifar10-jpg") and len(lines) == 1
    assert (into / "cifar10-jpg" / "train" / "a" / "0.txt").read_text() == "hi"
    assert sorted(os.listdir(into)) == ["cifar10-jpg"]
    assert archives.extract("cifar10", str(into), log=lines.append) == folder and len(lines) == 1


def test_the_benchmarks_read_the_same_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBOW_DATA", str(tmp_path / "nowhere"))
    for given, folder in ((None, "nowhere"), (str(tmp_path / "given"), "given")):
        with pytest.raises(FileNotFoundError,
                           match=re.escape(f"'{tmp_path / folder}': {SETTING}")):
            bench_train.prepare(str(tmp_path / "work"), None, given)


def _run(args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


def test_the_mnist_demo_and_shell_scripts_read_the_same_setting(tmp_path):
    r = _run([script("demo_mnist.py")], {"CROSSBOW_DATA": str(tmp_path)})
    assert r.returncode == 1 and r.stderr == f"demo_mnist: no mnist in '{tmp_path}': {SETTING}\n"
    _archive(tmp_path)
    r = _run(["-m", "crossbow.archives", "--data-dir", str(tmp_path), "cifar10-jpg.tar.gz"])
    assert r.returncode == 0 and r.stdout == f"{tmp_path / 'cifar10-jpg.tar.gz'}\n"
    r = _run(["-m", "crossbow.archives", "imagenette2-160.tar.gz"],
             {"CROSSBOW_DATA": str(tmp_path)})
    assert r.returncode == 1 and r.stderr == (f"crossbow.archives: no imagenette2-160.tar.gz in "
                                              f"'{tmp_path}': {SETTING}\n")
