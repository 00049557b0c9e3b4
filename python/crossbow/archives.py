"""The data folder: where the data sets' archives are, one setting for every command that reads
them (``crossbow reproduce``, the benchmarks, the demos, the GPU bundle): ``--data-dir``, else
``$CROSSBOW_DATA``, else ``../shared/data`` beside the checkout (the repository's own test
data). ``python3 -m crossbow.archives [--data-dir DIR] NAME`` prints an archive's path, for
shell scripts.
"""
import argparse
import dataclasses
import os
import sys
import tarfile

ENV = "CROSSBOW_DATA"
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HELP = (f"folder of the data archives (default: ${ENV}, else ../shared/data beside the "
        f"checkout)")


@dataclasses.dataclass(frozen=True)
class Dataset:
    archive: str   # file name in the data folder
    folder: str    # what the archive extracts to
    train: str     # sub-folders of `folder`: one class per sub-folder
    test: str
    encoded: bool  # keep the JPEGs as they are (images of varied sizes)


DATASETS = {
    "cifar10": Dataset("cifar10-jpg.tar.gz", "cifar10-jpg", "train", "test", encoded=False),
    "imagenette": Dataset("imagenette2-160.tar.gz", "imagenette2-160", "train", "val",
                          encoded=True),
}


def data_dir(given=None):
    """Where the data archives are: `given` (--data-dir), $CROSSBOW_DATA, or ../shared/data
    beside the checkout this package runs from."""
    return given or os.environ.get(ENV) or os.path.join(os.path.dirname(_CHECKOUT), "shared",
                                                        "data")


def add_argument(parser):
    """--data-dir, for a command that reads the archives (data_dir reads its value)."""
    parser.add_argument("--data-dir", metavar="DIR", help=HELP)


def path(name, given=None):
    """The file or folder `name` in the data folder; a FileNotFoundError that names the
    setting where it is not there."""
    folder = data_dir(given)
    found = os.path.join(folder, name)
    if not os.path.exists(found):
        raise FileNotFoundError(f"no {name} in '{folder}': give the folder of the data "
                                f"archives with --data-dir or ${ENV}")
    return found


def extract(dataset, into, given=None, log=print):
    """The folder of `dataset`'s images in `into`, extracted from its archive in the data
    folder where that was not done before. It is extracted beside its target and renamed when
    complete, so an interrupted extraction starts again rather than leave half."""
    d = DATASETS[dataset]
    extracted = os.path.join(into, d.folder)
    if os.path.isdir(extracted):
        return extracted
    archive = path(d.archive, given)
    log(f"extracting {archive} into {into}")
    partial = extracted + ".partial"
    remove(partial)
    os.makedirs(partial)
    with tarfile.open(archive) as tar:
        tar.extractall(partial, filter="data")
    os.replace(os.path.join(partial, d.folder), extracted)
    remove(partial)
    return extracted


def remove(folder):
    if os.path.isdir(folder):
        import shutil
        shutil.rmtree(folder)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m crossbow.archives",
                                     description="print the path of a file in the data folder")
    parser.add_argument("name", help="an archive, e.g. " + DATASETS["cifar10"].archive)
    add_argument(parser)
    args = parser.parse_args(argv)
    try:
        print(path(args.name, args.data_dir))
    except FileNotFoundError as e:
        print(f"crossbow.archives: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
