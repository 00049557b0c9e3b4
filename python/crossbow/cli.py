"""The ``crossbow`` command: ``crossbow ops [NAME]``, ``crossbow summary NET``,
``crossbow convert SUBCOMMAND ...``."""
import argparse
import sys


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


def _summary(args):
    from crossbow import nets
    print(nets.builder(args.net, num_classes=args.num_classes).summary())
    return 0


def parser():
    p = argparse.ArgumentParser(prog="crossbow", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    ops = sub.add_parser("ops", help="list the registered operators, or explain one")
    ops.add_argument("name", nargs="?", help="an operator type, e.g. Conv")
    ops.set_defaults(run=_ops)
    from crossbow.nets import NAMES
    summ = sub.add_parser("summary", help="print a zoo net's layers and parameter counts")
    summ.add_argument("net", choices=NAMES, metavar="NET", help=", ".join(NAMES))
    summ.add_argument("--num-classes", type=int, default=None,
                      help="classes of the last layer (default: the net's dataset)")
    summ.set_defaults(run=_summary)
    from crossbow import convert
    convert.add_parser(sub)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (ImportError, ValueError, RuntimeError) as e:
        print(f"crossbow {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
