"""The ``crossbow`` command: ``crossbow ops [NAME]``, ``crossbow summary NET``,
``crossbow spec --net NET``, ``crossbow convert SUBCOMMAND ...``, ``crossbow train``,
``crossbow eval``, ``crossbow plot METRICS...``, ``crossbow export``, ``crossbow launch``."""
import argparse
import sys

from crossbow.names import did_you_mean


def _ops(args):
    import crossbow
    if args.name:
        print(crossbow.operator_doc(args.name))
        return 0
    ops = sorted(crossbow.operators())
    width = max((len(n) for n, _ in ops), default=0)
    for name, doc in ops:
        first = doc.strip().splitlines()[0] if doc.strip() else ""
        print(f"{name:<{width}}  {first}".rstrip())
    print(f"{len(ops)} operators")
    return 0


# The options of crossbow train that other commands take too: their flags, defaults, docs and
# checks come from the option table (options.add_arguments, options.options_from).
_NET_OPTIONS = ("num_classes", "input_size")
_SPEC_OPTIONS = _NET_OPTIONS + ("lr", "momentum", "weight_decay", "seed", "precision")
_EVAL_OPTIONS = _NET_OPTIONS + ("batch_size", "workers")


def _summary(args):
    from crossbow import net_source, options
    o = options.options_from(args, _NET_OPTIONS)
    print(net_source.builder(args.net, **o).summary())
    return 0


def _spec(args):
    import json
    from crossbow import net_source, options
    o = options.options_from(args, _SPEC_OPTIONS)
    spec = net_source.builder(args.net, **{k: o.pop(k) for k in _NET_OPTIONS}).to_spec(
        threads=args.threads, device=args.device, **o)
    text = json.dumps(spec)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


def _add_spec(sub, net_help):
    from crossbow import options
    spec = sub.add_parser("spec", help="write a net's learner spec (JSON) for the C++ tools, "
                                       "e.g. crossbow_bench --spec")
    spec.add_argument("--net", required=True, metavar="NET", help=net_help)
    spec.add_argument("--device", default="cpu", help="where learners run: cpu, cuda or cuda:N")
    spec.add_argument("--threads", type=int, default=1, help="CPU threads of each learner")
    options.add_arguments(spec, _SPEC_OPTIONS)
    spec.add_argument("--output", "-o", help="file to write (default: standard output)")
    spec.set_defaults(run=_spec)


def _train(args):
    from crossbow import options, trainer
    t = trainer.Trainer(args.net, args.train_db, args.test_db, **options.options_from(args))
    if args.export:
        print(t.export(args.export))
        return 0
    result = t.fit()
    from crossbow import world
    if world.rank() == 0:
        print(trainer.describe(result))
    # As a process killed by the signal would (143 for SIGTERM, 130 for SIGINT), though it
    # stopped cleanly after a checkpoint.
    return 128 + result["signal"] if result["signal"] else 0


def _end_world(code):
    """Leaves the MPI job: finalises after a clean stop, aborts every rank after a failure, so
    that none is left waiting for this one."""
    try:
        from crossbow import _native
        sys.stdout.flush()
        sys.stderr.flush()
        _native.load().end_world(0 if code == 0 or code > 128 else code)
    except ImportError:
        pass


def _eval(args):
    from crossbow import options, trainer
    r = trainer.evaluate(args.net, args.checkpoint, args.test_db,
                         **options.options_from(args, _EVAL_OPTIONS))
    print(f"test loss {r['loss']:.4f}, top-1 {r['top1'] * 100:.2f}%, top-5 {r['top5'] * 100:.2f}%")
    return 0


def _plot(args):
    from crossbow.plot import plot
    print(plot(args.metrics, args.output, args.labels))
    return 0


def _output_flags():
    """--quiet and --verbose, for the commands that log."""
    p = argparse.ArgumentParser(add_help=False)
    group = p.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true",
                       help="only warnings, errors and the result: no progress, no epoch lines")
    group.add_argument("-v", "--verbose", action="store_true",
                       help="also a line per iteration and per loader epoch")
    return p


def _set_verbosity(args):
    if not (getattr(args, "quiet", False) or getattr(args, "verbose", False)):
        return
    from crossbow import _native
    _native.load().set_verbosity(-1 if args.quiet else 1)
    if args.quiet and hasattr(args, "progress"):
        args.progress = False


def _add_training(sub, net_help):
    from crossbow import options, trainer
    train = sub.add_parser("train", help="train a net on LMDB data with many learners",
                           parents=[_output_flags()])
    train.add_argument("--net", required=True, metavar="NET", help=net_help)
    train.add_argument("--train-db", required=True, help="training LMDB")
    train.add_argument("--test-db", help="test LMDB (evaluations, target accuracy)")
    train.add_argument("--export", metavar="FOLDER", help=trainer.EXPORT_HELP)
    options.add_arguments(train)
    train.set_defaults(run=_train)
    ev = sub.add_parser("eval", help="evaluate a checkpoint's average model on a test LMDB",
                        parents=[_output_flags()])
    ev.add_argument("--net", metavar="NET",
                    help=net_help + "; default: the net the checkpoint records")
    ev.add_argument("--checkpoint", required=True, help="a checkpoint file or directory")
    ev.add_argument("--test-db", required=True, help="test LMDB")
    options.add_arguments(ev, _EVAL_OPTIONS, batch_size=trainer.EVAL_BATCH_SIZE)
    ev.set_defaults(run=_eval)
    pl = sub.add_parser("plot", help="plot metrics files: accuracy vs time/epochs, images/s")
    pl.add_argument("metrics", nargs="+", help="JSON-lines metrics files")
    pl.add_argument("--output", default="metrics.png", help="PNG to write")
    pl.add_argument("--labels", nargs="*", help="one legend label per file")
    pl.set_defaults(run=_plot)


def parser():
    p = argparse.ArgumentParser(prog="crossbow", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    ops = sub.add_parser("ops", help="list the registered operators, or explain one")
    ops.add_argument("name", nargs="?", help="an operator type, e.g. Conv")
    ops.set_defaults(run=_ops)
    from crossbow import net_source
    net_help = net_source.help_text()
    summ = sub.add_parser("summary", help="print a net's layers and parameter counts")
    summ.add_argument("net", metavar="NET", help=net_help)
    from crossbow import options
    options.add_arguments(summ, _NET_OPTIONS)
    summ.set_defaults(run=_summary)
    _add_spec(sub, net_help)
    from crossbow import convert
    convert.add_parser(sub)
    convert.add_db_parser(sub)
    _add_training(sub, net_help)
    from crossbow import export_command
    export_command.add_parser(sub, net_help)
    from crossbow import reproduce
    reproduce.add_parser(sub, _output_flags(), net_help)
    from crossbow import launch
    launch.add_parser(sub, sub.choices["train"])
    p.commands = sub.choices
    return p


def _parse(p, argv):
    """parse_args, with a did-you-mean for a flag the command does not know."""
    args, unknown = p.parse_known_args(argv)
    if unknown and not getattr(args, "unchecked_flags", False):
        command = p.commands[args.command]
        flags = [flag for action in command._actions for flag in action.option_strings]
        first = next((u.split("=")[0] for u in unknown if u.startswith("-")), unknown[0])
        command.error(f"unrecognized arguments: {' '.join(unknown)}{did_you_mean(first, flags)}")
    return args


def main(argv=None):
    from crossbow import world
    args = _parse(parser(), argv)
    code = 1
    try:
        _set_verbosity(args)
        code = args.run(args)
        return code
    except (ImportError, ValueError, RuntimeError, OSError, TypeError) as e:
        where = f" (rank {world.rank()})" if world.under_mpirun() else ""
        print(f"crossbow {args.command}{where}: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        if world.under_mpirun():
            _end_world(code)


if __name__ == "__main__":
    sys.exit(main())
