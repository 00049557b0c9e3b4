"""The PyTorch peer of the CPU benchmarks (bench_step.py, bench_train.py, bench_data.py): which
Python runs it, the environment it runs in, what it is (torch and oneDNN versions), how a
benchmark runs a peer program and reads its JSON lines, and the ratios of Crossbow's rate
against each of its configurations and the best. Needs no torch: it runs under Crossbow's
interpreter and asks the peer's interpreter about itself.

    python3 scripts/peer/peer.py --venv      the venv scripts/peer/setup_peer.sh makes (its one spelling)
    python3 scripts/peer/peer.py             the default peer, described as JSON
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# What a peer program imports: its siblings here, the benchmarks' shared modules (tta_recipes)
# and the package's pure-Python parts (recipes, the torch twins), which need no extension.
PATH = os.pathsep.join([HERE, os.path.join(ROOT, "scripts", "bench"), os.path.join(ROOT, "python")])
# The peer's configurations: eager NCHW, eager channels_last, torch.compile (scripts/peer/torch_modes.py).
MODES = ("eager", "channels_last", "compile")

_DESCRIBE = r"""
import json, re, sys
import torch
found = re.search(r"(?:MKL-DNN|oneDNN|MKLDNN)\s+v?([0-9][0-9.]*)", torch.__config__.show())
print(json.dumps({"torch": torch.__version__, "onednn": found.group(1) if found else "unknown",
                  "compile": hasattr(torch, "compile")}))
"""


def venv_dir():
    return os.environ.get("CROSSBOW_PEER_VENV",
                          os.path.join(os.path.expanduser("~"), ".cache", "crossbow", "peer-venv"))


def default_python():
    """The python of the venv scripts/peer/setup_peer.sh makes: current PyTorch from PyPI, never
    Debian's three-year-old python3-torch unless --peer-python names it."""
    return os.path.join(venv_dir(), "bin", "python")


def add_argument(parser):
    parser.add_argument("--peer-python", default=default_python(),
                        help="the Python whose torch is the peer (default: the venv of "
                             "scripts/peer/setup_peer.sh, %(default)s)")


def env(base=None):
    """The peer's environment: Crossbow's OpenBLAS presets dropped so that the peer runs at its
    best, and PATH for its imports (torch_modes, crossbow.torch_resnet)."""
    out = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    out["PYTHONPATH"] = PATH
    return out


def describe(python):
    """{"python", "torch", "onednn", "compile"} of the peer; a clear error when it has no torch."""
    if not os.access(python, os.X_OK):
        raise RuntimeError(f"no peer Python at {python}: run scripts/peer/setup_peer.sh (current "
                           f"PyTorch from PyPI) or pass --peer-python PATH")
    out = subprocess.run([python, "-c", _DESCRIBE], env=env(), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the peer {python} cannot import torch (run scripts/peer/setup_peer.sh or "
                           f"pass --peer-python):\n{out.stderr[-1500:]}")
    return {"python": python, **json.loads(out.stdout.strip().splitlines()[-1])}


def banner(info):
    return f"peer: {info['python']}, torch {info['torch']}, oneDNN {info['onednn']}"


def modes(info, wanted=MODES):
    """The wanted modes this peer can run, and a note for each it cannot."""
    if info["compile"] or "compile" not in wanted:
        return list(wanted), []
    return [m for m in wanted if m != "compile"], [
        f"torch {info['torch']} has no torch.compile: mode compile skipped"]


def require_crossbow_bf16(program, flag):
    """Exits naming the missing instructions where Crossbow cannot run bf16 on this CPU (the
    peer's autocast would run, slowly, anywhere: a comparison there would mean nothing)."""
    import crossbow._C as C

    if not C.cpu_has_bf16():
        sys.exit(f"{program}: {flag} bf16 needs a CPU with AVX512-BF16 or AMX; oneDNN finds "
                 f"{C.cpu_isa()} here")


def ratios(ours, peer_rates):
    """Crossbow's rate against each peer mode's rate (higher is faster on both sides) and
    against the fastest of them: {"ratio_vs_<mode>": ..., "ratio_vs_best": ..., "best_mode"}."""
    out = {f"ratio_vs_{mode}": ours / rate for mode, rate in peer_rates.items()}
    best = max(peer_rates, key=peer_rates.get)
    out.update(ratio_vs_best=ours / peer_rates[best], best_mode=best)
    return out


def add_loader_arguments(parser):
    """The peer's CIFAR-10 loader (scripts/peer/torch_cifar.py), for the benchmarks that run
    the peer through run()."""
    parser.add_argument("--peer-workers", type=int, choices=(0, 1, 2, 3, 4),
                        help="the peer's DataLoader workers (default: --workers); 0 loads in "
                             "the training process")
    parser.add_argument("--peer-augment", choices=("sample", "batch"), default="sample",
                        help="CIFAR-10: the peer's crops and mirrors per image in its Dataset "
                             "(default), or on each whole uint8 batch tensor at once")


def run(args, program, spec, label, echo=False):
    """Runs the peer `program` (["-c", SOURCE] or [PATH]) on `spec`, with the work folder,
    threads, loader (add_loader_arguments) and precision of `args`. Prints the lines that describe the peer (threads,
    workers, compile time) as one, under `label` (where `echo`, every line as it comes), and
    returns them as one dict and the other lines; a failed peer is a RuntimeError with the end
    of its stderr."""
    workers = args.workers if args.peer_workers is None else args.peer_workers
    spec = dict(spec, work=args.work, threads=args.threads, workers=workers,
                augment=args.peer_augment, precision=args.precision)
    lines = []
    with tempfile.TemporaryFile("w+") as err:
        with subprocess.Popen([args.peer_python, *program, json.dumps(spec)], env=env(),
                              stdout=subprocess.PIPE, stderr=err, text=True) as proc:
            for line in proc.stdout:
                if line.startswith("{"):
                    lines.append(json.loads(line))
                    if echo:
                        print(json.dumps({**label, **lines[-1]}), flush=True)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"the peer ({json.dumps(label)}) failed with exit status "
                               f"{proc.returncode}:\n{err.read()[-3000:]}")
    about = [line for line in lines if "threads" in line or "compile_s" in line]
    described = {k: v for line in about for k, v in line.items()}
    if not echo:
        print(json.dumps({**label, **described}), flush=True)
    return described, [line for line in lines if line not in about]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", action="store_true", help="print the venv's folder and exit")
    args = ap.parse_args()
    print(venv_dir() if args.venv else json.dumps(describe(default_python())))


if __name__ == "__main__":
    sys.exit(main())
