"""Goodput: a job's wall time by what it bought.

Contract (docs/jobs.md, training_goodput_seconds_total{category}):
- productive: step time minus the data wait inside it (and minus any
  checkpoint taken inside a step);
- data_loading: time waiting for the data loader (the data_wait section);
- checkpointing: checkpoint save and load time;
- restart: time a restarted job spent before its first step (process start,
  or the monitor's creation where /proc is unavailable, to the first step,
  minus checkpoint loading, which counts as checkpointing), or the figure
  passed to TrainingMonitor.restarted(restart_seconds=...);
- lost_progress: the time of the steps a restart redoes (those since the last
  checkpoint): restarted(lost_seconds=...), or lost_steps × the duration of
  the first step after the restart.
Negative or non-finite amounts are ignored (never decrease a counter).
"""

import math
import os
import time
from typing import Optional

CATEGORIES = ("productive", "data_loading", "checkpointing", "restart", "lost_progress")


class Goodput:
    """The five bound counter children of training_goodput_seconds_total."""

    __slots__ = CATEGORIES

    def __init__(self, counter, label_values):
        for category in CATEGORIES:
            setattr(self, category, counter.labels(*label_values, category))

    @staticmethod
    def add(child, seconds: float) -> None:
        if seconds > 0 and math.isfinite(seconds):
            child.inc(seconds)


def process_start_time() -> Optional[float]:
    """Unix time this process started (Linux /proc), or None."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        # Field 22 (starttime, clock ticks since boot); the command name in
        # field 2 may hold spaces, so split after its closing parenthesis.
        fields = stat[stat.rindex(")") + 2:].split()
        start_ticks = int(fields[19])
        with open("/proc/stat", "rb") as f:
            for line in f:
                if line.startswith(b"btime "):
                    boot = int(line.split()[1])
                    break
            else:
                return None
        started = boot + start_ticks / os.sysconf("SC_CLK_TCK")
        # A clock step or container boot-time oddity: not believable.
        if started > time.time() or started < time.time() - 10 * 365 * 86400:
            return None
        return started
    except (OSError, ValueError, IndexError):
        return None
