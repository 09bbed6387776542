"""The labels every job series carries: job, rank, local_rank, node.

Contract (docs/jobs.md, "Labels"):
- job: the `job` argument, else $GPUMON_JOB, else $TORCHELASTIC_RUN_ID
  (unless it is torchrun's default "none"), else
  $SLURM_JOB_NAME, else the running script's name without its extension
  ("python" when there is none, e.g. an interactive session).
- rank: the argument, else $RANK, else $SLURM_PROCID, else 0.
- local_rank: the argument, else $LOCAL_RANK, else $SLURM_LOCALID, else 0.
- node: the argument, else $GPUMON_NODE, else socket.gethostname(); it must
  equal the GPU series' `hostname`, which the agent takes from the host name.
Values are resolved once, when a monitor is created; nothing here is looked
up per step. Ranks must be non-negative integers; a bad value raises
ValueError naming the variable it came from.
"""

import os
import socket
import sys
from dataclasses import dataclass
from typing import Mapping, Optional, Union

LABEL_NAMES = ("job", "rank", "local_rank", "node")
# The labels that form a push's grouping key (the push path); local_rank
# stays a sample label.
GROUPING_LABELS = ("job", "node", "rank")


@dataclass(frozen=True)
class JobLabels:
    job: str
    rank: str
    local_rank: str
    node: str

    def values(self):
        """Label values in LABEL_NAMES order."""
        return (self.job, self.rank, self.local_rank, self.node)

    def as_dict(self):
        return dict(zip(LABEL_NAMES, self.values()))

    def grouping(self):
        """The push grouping key, in path order."""
        return {"job": self.job, "node": self.node, "rank": self.rank}


def _script_name() -> str:
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if argv0 in ("", "-c", "-m", "-"):
        return "python"
    base = os.path.basename(argv0)
    stem, _ = os.path.splitext(base)
    return stem or "python"


def _first_env(env: Mapping[str, str], names):
    for name in names:
        value = env.get(name)
        if value:
            return name, value
    return None, None


def _rank_value(arg, env, names, what) -> str:
    if arg is not None:
        source, value = f"the {what} argument", arg
    else:
        source, value = _first_env(env, names)
        if value is None:
            return "0"
        source = f"${source}"
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError(f"gpumon: {what} from {source} is not an integer: {value!r}") from None
    if number < 0:
        raise ValueError(f"gpumon: {what} from {source} is negative: {number}")
    return str(number)


def resolve(job: Optional[str] = None, rank: Optional[Union[int, str]] = None,
            local_rank: Optional[Union[int, str]] = None, node: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None) -> JobLabels:
    """Resolves the four job labels from the arguments, else the environment."""
    env = os.environ if env is None else env
    if job is None:
        # torchrun without --rdzv-id sets TORCHELASTIC_RUN_ID to "none".
        env_job = {k: env.get(k) for k in ("GPUMON_JOB", "TORCHELASTIC_RUN_ID", "SLURM_JOB_NAME")}
        if env_job["TORCHELASTIC_RUN_ID"] == "none":
            env_job["TORCHELASTIC_RUN_ID"] = None
        _, job = _first_env(env_job, ("GPUMON_JOB", "TORCHELASTIC_RUN_ID", "SLURM_JOB_NAME"))
        if job is None:
            job = _script_name()
    job = str(job)
    if not job:
        raise ValueError("gpumon: the job name is empty")
    if node is None:
        node = env.get("GPUMON_NODE") or socket.gethostname()
    node = str(node)
    if not node:
        raise ValueError("gpumon: the node name is empty")
    return JobLabels(
        job=job,
        rank=_rank_value(rank, env, ("RANK", "SLURM_PROCID"), "rank"),
        local_rank=_rank_value(local_rank, env, ("LOCAL_RANK", "SLURM_LOCALID"), "local_rank"),
        node=node,
    )
