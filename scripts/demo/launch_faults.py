#!/usr/bin/env python3
"""crossbow launch through lost hosts, on this machine: three ranks of LeNet on MNIST, each rank
a host of its own (tests/python/launch_agent.sh as mpirun's remote shell). For each seed it
trains once without faults and once with node-b's rank killed (SIGKILL) and then node-c's
stopped (SIGSTOP), and writes a JSON line per run: final accuracy, wall time, and per failure
the time lost, from the fault until the run is back at the epoch position it had reached.

    scripts/demo/launch_faults.py --mnist /data/mnist --work /tmp/lf --out results.jsonl

The helpers (a launch in the background, its processes and heartbeats) serve
tests/python/test_launch.py too."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = os.path.join(ROOT, "tests", "python", "launch_agent.sh")


def environment(**extra):
    """This checkout's package first; no variable that would make a process look like a rank."""
    paths = [os.path.join(ROOT, "python")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p), **extra)
    for name in list(env):
        if name.startswith(("OMPI_", "PMIX_", "PMI_")):
            del env[name]
    return env


def launch_command(hosts, *flags, train=()):
    """crossbow launch on `hosts`, each a daemon of its own on this machine."""
    return [sys.executable, "-m", "crossbow", "launch", "--hosts", hosts, "--mpirun-args",
            f"--mca plm_rsh_agent {AGENT} --mca plm_rsh_no_tree_spawn 1", "--probe-timeout",
            "20", *flags, "--", *train]


def processes(token):
    """{pid: (argv, environment)} of the processes of the launch tagged `token`."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if env.get(b"CROSSBOW_TEST_JOB") == token.encode():
            out[int(pid)] = (argv, env)
    return out


def trainers(token, size):
    """rank -> pid of the trainers (crossbow train, not the rank wrappers) of the start with
    `size` ranks."""
    return {int(env[b"OMPI_COMM_WORLD_RANK"]): pid
            for pid, (argv, env) in processes(token).items()
            if argv[1:4] == [b"-m", b"crossbow", b"train"] and
            env.get(b"OMPI_COMM_WORLD_SIZE") == str(size).encode()}


def beats(ckpt):
    """rank -> its last heartbeat."""
    folder, out = os.path.join(ckpt, "launch"), {}
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if re.fullmatch(r"rank\d+\.json", name):
            try:
                with open(os.path.join(folder, name)) as f:
                    out[int(name[4:-5])] = json.loads(f.read())
            except (OSError, ValueError):
                pass  # replaced as it was read
    return out


class Launch:
    """A launch running in the background, its output in a file."""

    def __init__(self, folder, command, timeout_s=120, **env):
        self.token = uuid.uuid4().hex
        self.output = os.path.join(folder, "launch.out")
        with open(self.output, "w") as out:
            self.proc = subprocess.Popen(command, env=environment(
                CROSSBOW_TEST_JOB=self.token, **env), stdout=out, stderr=subprocess.STDOUT,
                cwd="/")
        self.deadline = time.time() + timeout_s

    def text(self):
        with open(self.output) as f:
            return f.read()

    def trainers_past(self, ckpt, size, iteration):
        """The trainers of the start with `size` ranks, once each has trained `iteration`."""
        while True:
            pids, last = trainers(self.token, size), beats(ckpt)
            if len(pids) == size and sorted(last) == list(range(size)) and \
                    min(b["iteration"] for b in last.values()) >= iteration:
                return pids
            assert self.proc.poll() is None, self.text()
            assert time.time() < self.deadline, self.text()
            time.sleep(0.05)

    def wait_for(self, text):
        while text not in self.text():
            assert self.proc.poll() is None and time.time() < self.deadline, self.text()
            time.sleep(0.1)

    def end(self):
        """The exit status and output; no process of the launch is left (orphans)."""
        try:
            self.proc.wait(timeout=max(1, self.deadline - time.time()))
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        gone = time.time() + 5
        while processes(self.token) and time.time() < gone:
            time.sleep(0.1)
        assert processes(self.token) == {}, "left behind"
        return self.proc.returncode, self.text()


BATCH = 16
HOSTS = "node-a,node-b,node-c"
# (ranks of the start it hits, rank, signal, epoch position at which it comes)
FAULTS = ((3, 1, signal.SIGKILL, 0.7), (2, 1, signal.SIGSTOP, 1.4))
_RESUMED = re.compile(r"resumed from '[^']*' at iteration (\d+), epoch ([\d.e-]+)")


def _convert(mnist, work):
    dbs = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        db = os.path.join(work, split)
        if not os.path.isdir(db):
            subprocess.run([sys.executable, "-m", "crossbow", "convert", "mnist",
                            os.path.join(mnist, f"{prefix}-images-idx3-ubyte.gz"),
                            os.path.join(mnist, f"{prefix}-labels-idx1-ubyte.gz"), db],
                           env=environment(), check=True, capture_output=True)
        dbs[split] = db
    return dbs


def _position(launch, ranks, epoch_size, iteration):
    """The epoch position of the latest start at `iteration`: where it resumed (the start of
    the data without a checkpoint), plus its iterations' images since (every rank one batch
    per iteration)."""
    latest = launch.text().rsplit("crossbow launch: starting ", 1)[-1]
    resumed = _RESUMED.findall(latest)
    at, epoch = (int(resumed[-1][0]), float(resumed[-1][1])) if resumed else (0, 0.0)
    return epoch + (iteration - at) * ranks * BATCH / epoch_size


def _reached(launch, ckpt, ranks, epoch, epoch_size):
    """Waits until the start with `ranks` ranks is at `epoch`; its trainers' pids."""
    while True:
        pids = launch.trainers_past(ckpt, ranks, 0)
        last = beats(ckpt)
        if len(last) == ranks and _position(launch, ranks, epoch_size, min(
                b["iteration"] for b in last.values())) >= epoch:
            return pids
        time.sleep(0.2)


def run(dbs, work, seed, faults, args):
    folder = os.path.join(work, f"seed{seed}_{'interrupted' if faults else 'uninterrupted'}")
    subprocess.run(["rm", "-rf", folder], check=True)
    os.makedirs(folder)
    ckpt = os.path.join(folder, "ckpt")
    train = ["--net", "lenet", "--train-db", dbs["train"], "--test-db", dbs["test"],
             "--batch-size", str(BATCH), "--learners", "1", "--lr", "0.01", "--seed", str(seed),
             "--epochs", str(args.epochs), "--no-progress", "--checkpoint-dir", ckpt,
             "--checkpoint-every-minutes", str(args.checkpoint_minutes), "--metrics",
             os.path.join(folder, "metrics.jsonl")]
    start = time.time()
    launch = Launch(folder, launch_command(HOSTS, "--heartbeat-timeout",
                                           str(args.heartbeat_timeout), "--max-restarts", "2",
                                           train=train), timeout_s=3600)
    lost = []
    for ranks, rank, sig, epoch in faults:
        pids = _reached(launch, ckpt, ranks, epoch, args.epoch_size)
        at = _position(launch, ranks, args.epoch_size,
                       max(b["iteration"] for b in beats(ckpt).values()))
        fault_time = time.time()
        os.kill(pids[rank], sig)
        _reached(launch, ckpt, ranks - 1, at, args.epoch_size)
        lost.append({"signal": signal.Signals(sig).name, "ranks_before": ranks,
                     "epoch_at_fault": round(at, 4),
                     "time_lost_s": round(time.time() - fault_time, 1)})
    code, output = launch.end()
    accuracy = re.findall(r"test accuracy ([\d.]+)%", output)
    return {"seed": seed, "run": "interrupted" if faults else "uninterrupted", "exit": code,
            "wall_s": round(time.time() - start, 1),
            "accuracy": float(accuracy[-1]) / 100 if accuracy else None,
            "restarts": [line for line in output.splitlines()
                         if line.startswith("crossbow launch: restart ")],
            "failures": lost, "checkpoint_period_s": 60 * args.checkpoint_minutes,
            "heartbeat_timeout_s": args.heartbeat_timeout}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mnist", required=True, help="folder with the four MNIST IDX files (.gz)")
    ap.add_argument("--work", required=True, help="folder for the LMDBs and the runs")
    ap.add_argument("--out", required=True, help="JSON-lines file to append the runs to")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--epoch-size", type=int, default=60000, help="training records")
    ap.add_argument("--checkpoint-minutes", type=float, default=0.25)
    ap.add_argument("--heartbeat-timeout", type=float, default=10)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    dbs = _convert(args.mnist, args.work)
    machine = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    cpu = next((line.split(":", 1)[1].strip() for line in machine.splitlines()
                if line.startswith("Model name")), "unknown")
    for seed in args.seeds:
        for faults in ((), FAULTS):
            record = dict(run(dbs, args.work, seed, faults, args), cpu=cpu,
                          cores=os.cpu_count(), date=time.strftime("%Y-%m-%d"))
            print(json.dumps(record), flush=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
