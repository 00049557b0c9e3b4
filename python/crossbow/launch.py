"""``crossbow launch``: runs ``crossbow train`` on several hosts under Open MPI's mpirun and
keeps it going when a host is lost: a rank that exits abnormally or stops beating (the
trainer's heartbeat beside the checkpoint) ends the job, which starts again from the last
checkpoint on the hosts that remain, with as many ranks as they have slots.

    crossbow launch --hosts node1:1,node2:1,node3:1 --min-hosts 2 --max-restarts 3 -- \\
        --net resnet20 --train-db /shared/c10_train --checkpoint-dir /shared/ckpt \\
        --checkpoint-every-minutes 5 --epochs 40

The supervisor needs no C++ extension (the standard library only): it runs where mpirun runs.
Design: docs/design/python.md, "The launch supervisor"."""
import argparse
import os
import shlex
import shutil
import sys

from crossbow.launch_hosts import LaunchError


_SUMMARY = ("run crossbow train on several hosts under mpirun, restarting it from its last "
            "checkpoint on the hosts that remain when one is lost")


def add_parser(sub, train_parser):
    """`crossbow launch` beside the other commands; `train_parser` (crossbow train's) checks
    the flags it passes on."""
    p = sub.add_parser("launch", help=_SUMMARY, description=_SUMMARY)
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--hosts", metavar="H[:SLOTS],...",
                       help="the hosts, each with its ranks (default 1)")
    where.add_argument("--host-discovery", metavar="COMMAND",
                       help="a shell command that prints the usable hosts, one HOST[:SLOTS] a "
                       "line; run before each start")
    p.add_argument("--min-hosts", type=int, default=1, metavar="N",
                   help="fewest hosts to run on; fewer usable ends the launch")
    p.add_argument("--max-hosts", type=int, default=0, metavar="N",
                   help="most hosts to run on (0: all usable)")
    p.add_argument("--max-restarts", type=int, default=3, metavar="N",
                   help="restarts after a lost or hung rank before the launch gives up")
    p.add_argument("--heartbeat-timeout", type=float, default=60, metavar="SECONDS",
                   help="a rank whose heartbeat stops this long (a stopped, frozen or cut-off "
                   "process), or a job in which no rank makes progress this long, is ended")
    p.add_argument("--probe-timeout", type=float, default=30, metavar="SECONDS",
                   help="how long a host may take to start a process before it counts as "
                   "unreachable (also the discovery command's limit)")
    p.add_argument("--mpirun-args", default="", metavar="ARGS",
                   help="more options for mpirun, e.g. \"--mca plm_rsh_agent ssh\"")
    p.add_argument("train", nargs="*", metavar="TRAIN_FLAG",
                   help="every flag of crossbow train, after --")
    p.set_defaults(run=run, train_parser=train_parser)


def _train_flags(args):
    train = list(args.train)
    if train[:1] == ["--"]:
        train = train[1:]
    if not train:
        raise LaunchError("no crossbow train flags: put them after --, e.g. crossbow launch "
                          "--hosts a,b -- --net lenet --train-db DB --checkpoint-dir DIR")
    return train


def _named(train, flag):
    """The value of `flag` among crossbow train's flags (None if absent)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    p.add_argument(flag)
    return getattr(p.parse_known_args(train)[0], flag[2:].replace("-", "_"))


def _check_train(train, parser):
    """Refuses crossbow train flags that its parser or option table refuses, with its one line,
    before any host is touched (without the C++ extension here, the ranks check them)."""
    from crossbow import _native
    if not _native.available():
        return
    from crossbow import options
    from crossbow.names import did_you_mean

    def refuse(message):
        raise LaunchError(f"crossbow train flags: {message}")
    parser.error = refuse
    args, unknown = parser.parse_known_args(train)
    if unknown:
        flags = [f for action in parser._actions for f in action.option_strings]
        first = next((u.split("=")[0] for u in unknown if u.startswith("-")), unknown[0])
        refuse(f"unrecognized arguments: {' '.join(unknown)}{did_you_mean(first, flags)}")
    try:
        options.checked_options(options.options_from(args))
    except (TypeError, ValueError) as e:
        refuse(str(e))


def settings(args):
    """The Settings of parsed `crossbow launch` arguments; LaunchError for a bad one."""
    from crossbow import launch_hosts as hosts, launch_supervisor as supervisor
    train = _train_flags(args)
    for name in ("min_hosts", "max_restarts", "max_hosts"):
        if getattr(args, name) < (1 if name == "min_hosts" else 0):
            raise LaunchError(f"--{name.replace('_', '-')} {getattr(args, name)} is out of range")
    if args.max_hosts and args.max_hosts < args.min_hosts:
        raise LaunchError(f"--max-hosts {args.max_hosts} is below --min-hosts {args.min_hosts}")
    if args.heartbeat_timeout <= 0 or args.probe_timeout <= 0:
        raise LaunchError("--heartbeat-timeout and --probe-timeout must be > 0")
    checkpoint_dir = _named(train, "--checkpoint-dir")
    if not checkpoint_dir:
        raise LaunchError("the run needs --checkpoint-dir (a folder every host shares) among "
                          "the crossbow train flags: restarts resume from it")
    _check_train(train, args.train_parser)
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise LaunchError("mpirun not found (Open MPI: apt-get install openmpi-bin)")
    if not (_named(train, "--checkpoint-every-epochs") or
            _named(train, "--checkpoint-every-minutes")):
        supervisor.log("no --checkpoint-every-epochs or --checkpoint-every-minutes: a restart "
                       "trains again from the last checkpoint, the start's if none")
    return supervisor.Settings(
        hosts=hosts.parse_list(args.hosts) if args.hosts is not None else None,
        discovery=args.host_discovery, min_hosts=args.min_hosts, max_hosts=args.max_hosts,
        max_restarts=args.max_restarts, heartbeat_timeout_s=args.heartbeat_timeout,
        probe_timeout_s=args.probe_timeout,
        mpirun=[mpirun] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) +
        shlex.split(args.mpirun_args),
        train=[sys.executable, "-m", "crossbow", "train"] + train,
        checkpoint_dir=checkpoint_dir, metrics=_named(train, "--metrics"))


def run(args):
    from crossbow import launch_supervisor as supervisor
    try:
        return supervisor.Supervisor(settings(args)).run()
    except LaunchError as e:
        supervisor.log(str(e))
        return 1
