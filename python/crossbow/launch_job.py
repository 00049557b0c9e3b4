"""One start of the job under mpirun, watched until it ends: each rank's heartbeat (written by
the trainer's watchdog, crossbow/train/watchdog.h) and its exit record (launch_rank.py). It ends the
whole job (mpirun's process group) when a rank stops beating or no rank makes progress, and
says which ranks the end is put on."""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import typing

from crossbow import launch_rank as rank_wrapper
from crossbow.launch_hosts import end_group

_POLL_S = 0.2
# The lines in which a rank says why it failed (cli.main's "crossbow train (rank 1): ...").
_RANK_ERROR = re.compile(r"^crossbow train( \(rank \d+\))?: ")


class Outcome(typing.NamedTuple):
    finished: bool
    lost: dict  # rank -> why, for the ranks the end is put on
    reason: str  # one line
    fatal: bool  # no lost host to blame (every rank failed, none started): no restart helps
    iteration: int  # the last trained, as the heartbeats last said (-1: none came)
    checkpoint: int  # of the checkpoint behind the run, as rank 0's heartbeat last said


# The trainer's side of these two names: HeartbeatPath in crossbow/train/watchdog.cc.
HEARTBEAT_DIR = "CROSSBOW_HEARTBEAT_DIR"


def heartbeat_path(folder, rank):
    return os.path.join(folder, f"rank{rank}.json")


def command(mpirun, hosts, folder, train):
    """mpirun's command line: one rank per slot, ranks filling the hosts in order (rank_hosts),
    each the rank wrapper around `train`, told where to beat."""
    ranks = sum(h.slots for h in hosts)
    exported = ["-x", f"{HEARTBEAT_DIR}={folder}"]
    for name in ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH"):
        if name in os.environ:
            exported += ["-x", name]
    return (mpirun + ["--host", ",".join(str(h) for h in hosts), "-np", str(ranks),
                      "--map-by", "slot", "--bind-to", "none"] + exported +
            [sys.executable, "-m", "crossbow.launch_rank", folder, "--"] + train)


def rank_hosts(hosts):
    """The host of each rank, as `command` maps them."""
    return [h.name for h in hosts for _ in range(h.slots)]


class _Beats:
    """What the supervisor last read of each rank's heartbeat, and when (its own clock) the
    beat and the progress last moved."""

    def __init__(self, folder, ranks):
        self.folder, self.ranks = folder, ranks
        self.last = {}  # rank -> heartbeat dict
        self.beat_at, self.progress_at = {}, {}
        self.first_at = None

    def read(self, now):
        for r in range(self.ranks):
            try:
                with open(heartbeat_path(self.folder, r)) as f:
                    beat = json.loads(f.read())
            except (OSError, ValueError):
                continue
            before = self.last.get(r, {})
            if beat.get("beat") != before.get("beat"):
                self.beat_at[r] = now
                self.first_at = self.first_at or now
            if beat.get("progress") != before.get("progress"):
                self.progress_at[r] = now
            self.last[r] = beat

    def hung(self, now, timeout_s):
        """{rank: why} of the ranks whose beat stopped (or never came while others beat)."""
        if self.first_at is None:
            return {}
        out = {}
        for r in range(self.ranks):
            since = self.beat_at.get(r, self.first_at)
            if now - since > timeout_s:
                out[r] = (f"no heartbeat for {now - since:.0f} s (stopped, frozen or cut off)"
                          if r in self.beat_at else f"no heartbeat {now - since:.0f} s after "
                          "the other ranks began training")
        return out

    def stuck_for(self, now):
        """Seconds since any rank made progress (0 before every rank beat)."""
        if len(self.progress_at) < self.ranks:
            return 0.0
        return now - max(self.progress_at.values())

    def iteration(self):
        return max((b.get("iteration", -1) for b in self.last.values()), default=-1)

    def checkpoint(self):
        return self.last.get(0, {}).get("checkpoint", -1)


def _forward(stream, out, tail):
    for line in stream:
        out.write(line)
        out.flush()
        tail.append(line.rstrip("\n"))


def _ending(code):
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"


def run(cmd, ranks, folder, heartbeat_timeout_s, between=lambda: None):
    """Runs the job to its end, calling `between` at every look at it; its Outcome."""
    for name in os.listdir(folder):  # the last start's, of as many ranks as it had
        if re.fullmatch(r"rank\d+\.(json|exit)", name):
            os.remove(os.path.join(folder, name))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    tail = collections.deque(maxlen=200)
    readers = [threading.Thread(target=_forward, args=(s, o, tail), daemon=True)
               for s, o in ((p.stdout, sys.stdout), (p.stderr, sys.stderr))]
    for t in readers:
        t.start()
    beats = _Beats(folder, ranks)
    hung = stuck = None
    try:
        while p.poll() is None:
            time.sleep(_POLL_S)
            between()
            now = time.monotonic()
            beats.read(now)
            hung = beats.hung(now, heartbeat_timeout_s)
            stuck = beats.stuck_for(now) > heartbeat_timeout_s
            if hung or stuck:
                break
    finally:
        end_group(p)  # as the job ends, or ended: nothing of it outlives this
        for t in readers:
            t.join(timeout=5)
    beats.read(time.monotonic())  # the last word of each rank (rank 0's names the checkpoint)
    outcome = dict(finished=False, fatal=False, iteration=beats.iteration(),
                   checkpoint=beats.checkpoint())
    records = _records(folder, ranks)
    # A rank that exited by itself explains the silence of its heartbeat (mpirun can take
    # longer than the timeout to end the job after it).
    if any(_by_itself(r) for r in records.values()) or not (hung or stuck):
        return _ended(p.returncode, ranks, records, list(tail), outcome)
    if hung:
        return Outcome(lost=hung, reason="hung", **outcome)
    return Outcome(lost={}, reason=f"no rank made progress for more than "
                   f"{heartbeat_timeout_s:g} s (every rank beats: stuck, not lost)", **outcome)


def _records(folder, ranks):
    """rank -> its exit record (launch_rank.py), for the ranks that wrote one."""
    records = {}
    for r in range(ranks):
        try:
            with open(rank_wrapper.exit_path(folder, r)) as f:
                records[r] = json.loads(f.read())
        except (OSError, ValueError):
            continue
    return records


def _by_itself(record):
    return record["code"] != 0 and not record["ended_by_job"]


def _ended(code, ranks, records, tail, outcome):
    if code == 0 and all(records.get(r, {}).get("code") == 0 for r in range(ranks)):
        return Outcome(lost={}, reason="finished", **dict(outcome, finished=True))
    said = next((line for line in tail if _RANK_ERROR.match(line)), "")
    if not records:
        last = said or next((line for line in tail if line.strip() and
                             not line.startswith("---")), "no output")
        return Outcome(lost={}, reason=f"mpirun failed (exit {code}) before any rank "
                       f"started: {last}", **dict(outcome, fatal=True))
    own = {r: _ending(rec["code"]) for r, rec in records.items() if _by_itself(rec)}
    if len(own) == ranks:
        each = ", ".join(f"rank {r} {why}" for r, why in sorted(own.items()))
        return Outcome(lost={}, reason=f"every rank failed at once ({each})"
                       + (f": {said}" if said else "") + "; not a lost host, not restarting",
                       **dict(outcome, fatal=True))
    lost = dict(own)
    for r in range(ranks):
        if r not in records:
            lost[r] = "vanished (no exit record: its process or host was lost)"
    if not lost:
        return Outcome(lost={}, reason=f"the job ended (mpirun exit {code}) and no rank "
                       "failed by itself" + (f": {said}" if said else ""),
                       **dict(outcome, fatal=True))
    return Outcome(lost=lost, reason="failed", **outcome)
