"""docs/reproduction.md's tables are what their generators make of the files kept under
docs/reproduction/: Crossbow's runs (scripts/docs/reproduction_table.py) and fastai's on the same
data (scripts/docs/fastai_runs_table.py)."""
import json

import pytest

import fastai_runs_table
import reproduction_table


@pytest.mark.parametrize("generator", [reproduction_table, fastai_runs_table])
def test_each_table_is_regenerated_from_the_committed_runs(generator):
    _, (text, _) = reproduction_table.between(generator.PAGE, generator.BEGIN, generator.END)
    assert text.strip() == generator.table()


def test_a_fastai_metrics_file_without_a_header_is_refused(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"epoch": 1, "accuracy": 0.5}) + "\n")
    with pytest.raises(ValueError, match="no header line"):
        fastai_runs_table.read_run(path)


def test_a_resumed_fastai_run_keeps_its_last_header_and_each_epochs_last_line(tmp_path):
    path = tmp_path / "m.jsonl"
    lines = [{"recipe": "tutorial", "epochs": 2, "seed": 0}, {"epoch": 1, "accuracy": 0.1},
             {"recipe": "tutorial", "epochs": 2, "seed": 1},
             {"epoch": 1, "accuracy": 0.1, "resumed": True}, {"epoch": 2, "accuracy": 0.2}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    header, epochs = fastai_runs_table.read_run(path)
    assert header["seed"] == 1 and [e["accuracy"] for e in epochs] == [0.1, 0.2]
