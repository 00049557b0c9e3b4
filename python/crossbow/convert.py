"""Dataset converters into LMDBs of Caffe Datum records: image folders and list files (as
Caffe's convert_imageset), MNIST IDX files, the CIFAR-10/100 binaries, and per-channel
statistics of a DB. The work is done in C++ (the same functions as the ``crossbow_convert``
tool); each converter prints progress on stderr and returns a summary dict: ``written``,
``skipped`` (a list of ``(where, reason, detail)``), ``seconds`` and ``text``.
"""
import functools

from crossbow import _native


@functools.cache
def _imageset_flags():
    """The imageset flags and their defaults, from the C++ ImagesetOptions (their one source),
    less the options every converter has."""
    options = _native.load().ImagesetOptions()
    return {name: getattr(options, name) for name in dir(options)
            if not name.startswith("_") and name not in ("overwrite", "progress")}


_OURS = {"resize_shorter", "max_side"}
_NOPROGRESS = "no progress line on stderr"


def imageset(root, list_file, db, *, overwrite=False, progress=True, **flags):
    """Images listed in `list_file` ("relative/path label" lines, read from `root`) into `db`.
    Flags as convert_imageset: resize_width, resize_height, shuffle, seed, gray, encoded,
    encode_type, check_size; and, keeping the aspect ratio, resize_shorter (the shorter side
    scaled to it) or max_side (the longer side shrunk to at most it). The DB is written as
    DB.incomplete and renamed when whole, with its metadata (crossbow_meta.json) inside."""
    return _native.load().convert_imageset(str(root), str(list_file), str(db),
                                           _imageset_options(flags, overwrite, progress))


def image_folders(root, db, *, overwrite=False, progress=True, **flags):
    """One class per sub-folder of `root` (sorted names -> labels 0..), names in db/labels.txt.
    Flags as :func:`imageset`."""
    return _native.load().convert_imageset(str(root), "", str(db),
                                           _imageset_options(flags, overwrite, progress),
                                           by_folder=True)


def mnist(images, labels, db, *, overwrite=False, progress=True):
    """MNIST IDX image and label files (gzipped or not) into `db`."""
    return _native.load().convert_mnist(str(images), str(labels), str(db), overwrite=overwrite,
                                        progress=progress)


def cifar10(db, files, *, overwrite=False, progress=True):
    """CIFAR-10 binary batches (1 label byte + 3072 bytes of RGB planes a record) into `db`."""
    return _native.load().convert_cifar(10, str(db), [str(f) for f in files],
                                        overwrite=overwrite, progress=progress)


def cifar100(db, files, *, coarse=False, overwrite=False, progress=True):
    """CIFAR-100 binary files (coarse and fine label bytes + 3072 bytes a record) into `db`,
    with the fine labels, or the coarse ones when `coarse`."""
    return _native.load().convert_cifar(100, str(db), [str(f) for f in files], coarse=coarse,
                                        overwrite=overwrite, progress=progress)


def mean(db, *, progress=True):
    """Per-channel ``mean`` and ``std`` (lists, 0-255 scale, channels in record order: BGR for
    colour images) of every record of `db`, encoded ones decoded; ``records``, ``skipped``."""
    return _native.load().channel_stats(str(db), progress=progress)


def check(db, *, write_metadata=False, progress=True):
    """A full scan of `db` (every record read and parsed, in parallel): ``records``, ``meta``
    (what the scan found, as JSON), ``recorded`` (the DB's metadata, or None), ``agrees``,
    ``unparsed`` and ``text``. `write_metadata` writes what it found beside the DB."""
    return _native.load().check_db(str(db), write_metadata=write_metadata, progress=progress)


def records(db):
    """Yields ``(key, datum)`` for every record of `db` in key order; datum is a dict with
    channels, height, width, data (bytes), label, float_data, encoded."""
    C = _native.load()
    reader = C.LmdbReader(str(db))
    for i in range(len(reader)):
        yield reader.key(i).decode("utf-8", "replace"), C.parse_datum(reader.get(i))


class Writer:
    """A DB written record by record from Python, through the converters' own writer: keys in
    the order written, DB.incomplete renamed to `db` by :meth:`finish` with its metadata
    (crossbow_meta.json, as every converter writes it) and `class_names` (labels.txt). Used as
    a context manager it finishes on success and removes DB.incomplete on an exception.
    `total` is the record count the progress line counts to."""

    def __init__(self, db, total, *, overwrite=False, progress=True, class_names=()):
        self._sink = _native.load().RecordSink(str(db), int(total), overwrite=overwrite,
                                               progress=progress)
        if class_names:
            self._sink.set_class_names([str(name) for name in class_names])

    def write(self, key, data, *, channels, height, width, label, encoded=False):
        """One Datum record: `data` raw CHW uint8 bytes (BGR for colour, as the converters
        store them) or, with `encoded`, the bytes of a JPEG/PNG file."""
        self._sink.write(key, channels, height, width, data, label, encoded)

    def finish(self):
        """Commits and renames into place; the summary dict of the converters."""
        return self._sink.finish()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self.summary = self.finish()
        else:
            self._sink.abandon()


def _imageset_options(flags, overwrite, progress):
    """The C++ ImagesetOptions of the flags (a TypeError names an unknown one)."""
    known = _imageset_flags()
    unknown = sorted(set(flags) - set(known))
    if unknown:
        raise TypeError(f"unknown imageset flags {unknown}; known: {sorted(known)}")
    options = _native.load().ImagesetOptions()
    for name, value in dict(known, **flags, overwrite=overwrite, progress=progress).items():
        setattr(options, name, value)
    return options


def add_parser(subparsers):
    """The ``crossbow convert SUBCOMMAND`` parsers, with crossbow_convert's flag names."""
    p = subparsers.add_parser("convert", help="build LMDBs of Caffe Datum records")
    sub = p.add_subparsers(dest="dataset", metavar="SUBCOMMAND", required=True)

    def writer(name, help):
        q = sub.add_parser(name, help=help)
        q.add_argument("--overwrite", action="store_true", help="replace the DB if it exists")
        q.add_argument("--noprogress", dest="progress", action="store_false", help=_NOPROGRESS)
        return q

    q = writer("imageset", "ROOT/ LISTFILE DB, or --by_folder ROOT/ DB (as convert_imageset)")
    q.add_argument("paths", nargs="+", metavar="PATH",
                   help="ROOT/ LISTFILE DB: the images' folder, its list of 'path label' lines "
                        "and the LMDB to write; with --by_folder ROOT/ DB")
    q.add_argument("--by_folder", action="store_true", help="one class per sub-folder of ROOT")
    try:
        flags, docs = _imageset_flags(), _native.load().imageset_flag_docs()
    except ImportError:  # not built: the command, run, says how to build it
        flags, docs = {}, {}
        q.set_defaults(unchecked_flags=True)
    for flag, default in flags.items():
        kind = {bool: None, int: int, str: str}[type(default)]
        # Caffe's flags are spelt with underscores; crossbow's own take hyphens too.
        names = [f"--{flag}"] + ([f"--{flag.replace('_', '-')}"] if flag in _OURS else [])
        doc = docs.get(flag, "").removeprefix("imageset: ")  # crossbow_convert's help
        if kind is None:
            q.add_argument(*names, action="store_true", help=doc)
        else:
            q.add_argument(*names, type=kind, default=default, help=doc)
    q.set_defaults(run=_run_imageset)
    q = writer("mnist", "IMAGES LABELS DB: MNIST IDX files, gzipped or not")
    q.add_argument("images", metavar="IMAGES", help="the IDX file of the images")
    q.add_argument("labels", metavar="LABELS", help="the IDX file of their labels")
    q.add_argument("db", metavar="DB", help="the LMDB to write")
    q.set_defaults(run=lambda a: _report(mnist(a.images, a.labels, a.db, **_write(a))))
    for classes in (10, 100):
        q = writer(f"cifar{classes}", f"DB FILE...: CIFAR-{classes} binary files")
        q.add_argument("db", metavar="DB", help="the LMDB to write")
        q.add_argument("files", nargs="+", metavar="FILE", help="the binary files, in order")
        if classes == 100:
            q.add_argument("--coarse", action="store_true", help="the 20 coarse labels")
    sub.choices["cifar10"].set_defaults(
        run=lambda a: _report(cifar10(a.db, a.files, **_write(a))))
    sub.choices["cifar100"].set_defaults(
        run=lambda a: _report(cifar100(a.db, a.files, coarse=a.coarse, **_write(a))))
    q = sub.add_parser("mean", help="DB: per-channel mean and standard deviation")
    q.add_argument("db", metavar="DB", help="the LMDB to read")
    q.add_argument("--noprogress", dest="progress", action="store_false", help=_NOPROGRESS)
    q.set_defaults(run=lambda a: _report(mean(a.db, progress=a.progress)))
    return p


def add_db_parser(subparsers):
    """``crossbow db check PATH [--write-metadata]``."""
    p = subparsers.add_parser("db", help="inspect an LMDB of Datum records")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    q = sub.add_parser("check", help="PATH: read every record (in parallel) and compare what "
                                     "they hold with the DB's metadata")
    q.add_argument("db", metavar="PATH", help="the LMDB to read")
    q.add_argument("--write-metadata", action="store_true",
                   help="write what the scan found as the DB's metadata (crossbow_meta.json)")
    q.add_argument("--noprogress", dest="progress", action="store_false", help=_NOPROGRESS)
    q.set_defaults(run=_run_check)
    return p


def _run_check(args):
    result = check(args.db, write_metadata=args.write_metadata, progress=args.progress)
    print(result["text"])
    return 0 if result["agrees"] or args.write_metadata else 1


def _write(args):
    return dict(overwrite=args.overwrite, progress=args.progress)


def _run_imageset(args):
    flags = {k: getattr(args, k) for k in _imageset_flags()}
    want = 2 if args.by_folder else 3
    if len(args.paths) != want:
        usage = "ROOT/ DB" if args.by_folder else "ROOT/ LISTFILE DB"
        raise ValueError(f"imageset{' --by_folder' if args.by_folder else ''} takes {usage}, "
                         f"got {len(args.paths)} paths")
    if args.by_folder:
        return _report(image_folders(*args.paths, **_write(args), **flags))
    return _report(imageset(*args.paths, **_write(args), **flags))


def _report(result):
    print(result["text"])
    return 0
