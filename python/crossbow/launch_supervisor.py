"""The restart loop of ``crossbow launch``: start the job on the usable hosts, and after a rank
fails or hangs, start it again from the last checkpoint without the host that lost it, until it
finishes, every rank fails at once, fewer than --min-hosts remain or the restarts run out.
Each restart is one line on stderr and one record in the metrics file.

A host whose rank failed or hung is lost: it stays out of the next starts. With --hosts it stays
out for the rest of the launch; with --host-discovery, which the supervisor also runs every 2 s
while a lost host waits, it stays out until the command stops listing it (it was taken away, to be mended),
and a host listed again after that joins at the next restart."""
import datetime
import json
import os
import sys
import time
import typing
import uuid

from crossbow import launch_hosts as host_list, launch_job as job
from crossbow.launch_hosts import LaunchError


class Settings(typing.NamedTuple):
    hosts: list  # [Host] of --hosts, or None with discovery
    discovery: str  # --host-discovery's command, or None
    min_hosts: int
    max_hosts: int  # 0: no limit
    max_restarts: int
    heartbeat_timeout_s: float
    probe_timeout_s: float
    mpirun: list  # mpirun and the options every start of it takes
    train: list  # crossbow train's flags
    checkpoint_dir: str
    metrics: str  # crossbow train's --metrics, or None


def log(message):
    print(f"crossbow launch: {message}", file=sys.stderr, flush=True)


class _Restart(typing.NamedTuple):
    when: str
    why: str  # one line: the ranks and hosts the end is put on, or the job's reason
    lost_hosts: list
    before: list  # host names
    outcome: job.Outcome


def _names(hosts):
    return ",".join(h.name for h in hosts) or "none"


# How often the discovery command runs while the job trains.
DISCOVERY_INTERVAL_S = 2.0


class Supervisor:
    def __init__(self, settings):
        self.s = settings
        self.shared = os.path.abspath(settings.checkpoint_dir)
        self.folder = os.path.join(self.shared, "launch")
        self.lost = {}  # host name -> why: left out until discovery stops listing it
        self.restarts = 0
        self.discovered_at = time.monotonic()

    def candidates(self):
        listed = (host_list.discover(self.s.discovery, self.s.probe_timeout_s)
                  if self.s.discovery else self.s.hosts)
        self.forget_unlisted(listed)
        return [h for h in listed if h.name not in self.lost]

    def forget_unlisted(self, listed):
        names = {h.name for h in listed}
        for name in [n for n in self.lost if n not in names]:
            del self.lost[name]
            log(f"lost host {name} is no longer listed: listed again, it joins at the next "
                "restart")

    def rediscover(self):
        """While the job trains: the discovery command, now and then, for lost hosts that it
        stops listing (a failure here is for the next start to report)."""
        if not (self.s.discovery and self.lost) or \
                time.monotonic() - self.discovered_at < DISCOVERY_INTERVAL_S:
            return
        self.discovered_at = time.monotonic()
        try:
            self.forget_unlisted(host_list.discover(self.s.discovery, self.s.probe_timeout_s))
        except LaunchError:
            pass

    def usable(self):
        """The hosts to start on: listed, not lost, reachable, at most --max-hosts."""
        marker = os.path.join(self.folder, "marker")
        token = uuid.uuid4().hex
        host_list.write_marker(marker, token)
        hosts = self.candidates()
        found = host_list.probe(hosts, self.s.mpirun, marker, token, self.s.probe_timeout_s,
                                self.shared)
        for name, why in found.items():
            if why:
                log(f"host {name} left out: unreachable ({why})")
        usable = [h for h in hosts if found[h.name] is None]
        if self.s.max_hosts:
            usable = usable[:self.s.max_hosts]
        if len(usable) < self.s.min_hosts:
            out = [f"{n} {why}" for n, why in self.lost.items()]
            out += [f"{n} unreachable" for n, why in found.items() if why]
            raise LaunchError(f"{len(usable)} usable host(s) ({_names(usable)}), fewer than "
                              f"--min-hosts {self.s.min_hosts}" +
                              (f": {'; '.join(out)}" if out else ""))
        return usable

    def run(self):
        os.makedirs(self.folder, exist_ok=True)
        restart = None
        while True:
            hosts = self.usable()
            if restart:
                self.record(restart, hosts)
            train = self.s.train + (["--resume"] if restart else [])
            names = job.rank_hosts(hosts)
            log(f"starting {len(names)} rank(s) on {_names(hosts)}")
            outcome = job.run(job.command(self.s.mpirun, hosts, self.folder, train),
                              len(names), self.folder, self.s.heartbeat_timeout_s,
                              self.rediscover)
            if outcome.finished:
                log(f"finished after {self.restarts} restart(s)")
                return 0
            why = outcome.reason if not outcome.lost else "; ".join(
                f"rank {r} on host {names[r]} {what}" for r, what in sorted(outcome.lost.items()))
            if outcome.fatal:
                raise LaunchError(why)
            if self.restarts == self.s.max_restarts:
                raise LaunchError(f"restarts exhausted ({self.restarts} of --max-restarts "
                                  f"{self.s.max_restarts}); the last end: {why}")
            lost_hosts = sorted({names[r] for r in outcome.lost})
            for name in lost_hosts:
                self.lost[name] = "lost its rank: " + why
            self.restarts += 1
            when = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            restart = _Restart(when, why, lost_hosts, [h.name for h in hosts], outcome)

    def record(self, r, hosts):
        """The restart's log line and metrics record, once the hosts it restarts on are known.
        The record carries the iteration it resumes from, so that the resumed trainer keeps
        it (it drops the records past its checkpoint)."""
        o = r.outcome
        lost = o.iteration - o.checkpoint if o.iteration >= 0 and o.checkpoint >= 0 else None
        after = [h.name for h in hosts]
        log(f"restart {self.restarts} of at most {self.s.max_restarts} at {r.when}: {r.why}; "
            f"hosts {','.join(r.before)} -> {','.join(after)}; "
            f"{'?' if lost is None else lost} iteration(s) lost, resuming from "
            + (f"iteration {o.checkpoint}" if o.checkpoint >= 0 else "the last checkpoint"))
        if not self.s.metrics:
            return
        record = {"iteration": max(o.checkpoint, 0), "event": "restart",
                  "restart": self.restarts, "time_utc": r.when, "reason": r.why,
                  "ranks_lost": {str(k): v for k, v in sorted(o.lost.items())},
                  "hosts_lost": r.lost_hosts, "hosts_before": r.before, "hosts_after": after,
                  "iterations_lost": lost}
        with open(self.s.metrics, "a") as f:
            f.write(json.dumps(record) + "\n")
