"""Checkpoint helpers for gpumon.torch: torch.save / torch.load timed by a
TrainingMonitor.

Contract: save_checkpoint(mon, obj, f, step=None, **kw) runs torch.save(obj,
f, **kw) inside mon.checkpoint_save(step=step); load_checkpoint(mon, f, **kw)
runs torch.load(f, **kw) inside mon.checkpoint_load(). The bytes reported
are the file's size when f is a path; for a seekable file object, the bytes
written (save) or held from its position to its end (load). Errors of
torch.save / torch.load propagate and the checkpoint is not counted.
"""

import os

import torch

__all__ = ["load_checkpoint", "save_checkpoint"]


def _is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


def save_checkpoint(mon, obj, f, step=None, **torch_save_kwargs):
    """torch.save(obj, f) inside mon.checkpoint_save(); bytes = the file's size
    (a path) or how far a seekable file object advanced. Returns the bytes."""
    kwargs = {} if step is None else {"step": step}
    start = None if _is_path(f) or not hasattr(f, "tell") else f.tell()
    with mon.checkpoint_save(**kwargs) as ck:
        torch.save(obj, f, **torch_save_kwargs)
        size = None
        if _is_path(f):
            size = os.path.getsize(f)
        elif start is not None:
            size = f.tell() - start
        if size is not None:
            ck.bytes = size
    return size


def load_checkpoint(mon, f, **torch_load_kwargs):
    """torch.load(f, ...) inside mon.checkpoint_load(); bytes = the file's size
    (a path) or what a seekable file object holds from its position to its
    end. Returns the object."""
    with mon.checkpoint_load() as ck:
        size = os.path.getsize(f) if _is_path(f) else _remaining(f)
        obj = torch.load(f, **torch_load_kwargs)
        if size is not None:
            ck.bytes = size
    return obj


def _remaining(f):
    """Bytes from a seekable file object's position to its end, else None."""
    try:
        if not f.seekable():
            return None
        start = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(start)
        return end - start
    except (AttributeError, OSError, ValueError):
        return None
