#!/usr/bin/env python3
"""Crash test of the whole TSDB: kill -9 the ingester at random moments.

Each round starts crash_ingester on the same data directory, kills it with
SIGKILL after a random delay, takes the last "ack <t>" line it printed (the
newest acknowledged commit) and runs the ingester in --verify mode, which
must open the store cleanly (no WAL repair) and find every series complete
up to that mark with the exact values. Extra rounds damage the WAL between
kill and restart:
  - tail: the newest segment is truncated at a random offset past what an
    earlier verified state needed; everything verified before must remain.
  - corrupt: a byte in the middle of the oldest live segment is flipped;
    the store must open, report the repair, keep a gap-free prefix with
    exact values and at least what blocks already held, and accept new data.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Failure(Exception):
    pass


def segments(wal_dir):
    """(index, path) of WAL segments after the newest checkpoint."""
    cp = -1
    segs = []
    for name in os.listdir(wal_dir):
        m = re.fullmatch(r"checkpoint\.(\d{8})", name)
        if m:
            cp = max(cp, int(m.group(1)))
        elif re.fullmatch(r"\d{8}", name):
            segs.append((int(name), os.path.join(wal_dir, name)))
    return sorted(s for s in segs if s[0] > cp)


class Harness:
    def __init__(self, args, data_dir):
        self.args = args
        self.dir = data_dir
        self.mark = -1  # newest acknowledged timestamp for every series
        self.base = [args.ingester, "--dir=" + data_dir, "--series=%d" % args.series]

    def ingest(self, sync, delay, after_start=True, extra=()):
        """Runs the ingester and kills it `delay` seconds after it acknowledged
        its first commit (after_start) or after it was started (so the kill
        may land in open and WAL replay)."""
        err = tempfile.TemporaryFile()
        p = subprocess.Popen(self.base + ["--sync=" + sync] + list(extra), stdout=subprocess.PIPE, stderr=err)
        first = b""
        if after_start:
            first = p.stdout.readline()  # blocks until the first ack (or exit)
        time.sleep(delay)
        if p.poll() is not None:
            err.seek(0)
            raise Failure("ingester exited early (rc %d): %s" % (p.returncode, err.read().decode()))
        p.send_signal(signal.SIGKILL)
        out, _ = p.communicate()
        out = first + out
        if p.returncode != -signal.SIGKILL:
            raise Failure("ingester not killed (rc %d)" % p.returncode)
        acks = [int(m.group(1)) for m in re.finditer(rb"^ack (-?\d+)\n", out, re.M)]
        if acks:
            self.mark = max(self.mark, acks[-1])
        return len(acks)

    def verify(self, expect=None, clean=True):
        cmd = self.base + ["--verify"]
        if expect is not None:
            cmd.append("--expect=%d" % expect)
        if clean:
            cmd.append("--clean")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out = r.stdout.decode()
        if r.returncode != 0:
            raise Failure("verify failed (rc %d): %s\n%s" % (r.returncode, out, r.stderr.decode()))
        info = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
        return int(info["max"]), int(info["blocks_max"]), info.get("repair")

    def crash_round(self, sync, after_start=True):
        acks = self.ingest(sync, random.uniform(0.05, 1.0), after_start)
        found, _, _ = self.verify(expect=self.mark)
        # Unacknowledged commits may have survived too; the next round's
        # ingester continues after them, so they count as acknowledged now.
        self.mark = max(self.mark, found)
        return acks

    def tail_round(self):
        wal = os.path.join(self.dir, "wal")
        verified = self.mark
        before = dict(segments(wal))
        # Without Maintain() the kill rarely lands right after a segment
        # switch, so the newest segment usually holds records to cut.
        self.ingest("batch", random.uniform(0.1, 0.5), extra=["--maintain_every=0"])
        segs = segments(wal)
        if not segs:
            return False
        index, path = segs[-1]
        size = os.path.getsize(path)
        start = os.path.getsize(before[index]) if index in before else 8
        if size <= start:
            return False
        cut = random.randint(start, size - 1)
        with open(path, "r+b") as f:
            f.truncate(cut)
        found, _, repair = self.verify(expect=verified, clean=True)
        if found < verified:
            raise Failure("tail truncation lost verified data")
        self.mark = found
        print("tail: segment %d cut at %d of %d bytes; newest sample %d (verified %d)%s"
              % (index, cut, size, found, verified, " repair: " + repair if repair else ""))
        return True

    def corrupt_round(self):
        wal = os.path.join(self.dir, "wal")
        self.ingest("batch", random.uniform(0.3, 0.8))
        found0, blocks_max, _ = self.verify(expect=self.mark)
        segs = segments(wal)
        if len(segs) < 2:
            return False
        index, path = segs[0]
        size = os.path.getsize(path)
        if size < 64:
            return False
        off = size // 2
        with open(path, "r+b") as f:
            f.seek(off)
            b = f.read(1)
            f.seek(off)
            f.write(bytes([b[0] ^ 0x5A]))
        found, _, repair = self.verify(clean=False)
        if not repair:
            raise Failure("corruption in segment %d at %d not reported" % (index, off))
        if found < blocks_max - 1 - 30000 or found > found0:
            raise Failure("after repair newest sample %d, blocks held up to %d, before %d"
                          % (found, blocks_max, found0))
        print("corrupt: segment %d byte %d; newest sample %d -> %d; repair: %s"
              % (index, off, found0, found, repair))
        # The store keeps working: ingest on top and verify cleanly.
        self.mark = found
        self.crash_round("batch")
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ingester", required=True)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--damage_rounds", type=int, default=3)
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    random.seed(seed)
    print("seed %d" % seed)
    data_dir = tempfile.mkdtemp(prefix="gpumon-crash-")
    h = Harness(args, data_dir)
    start = time.time()
    try:
        total = 0
        for i in range(args.rounds):
            sync = "always" if i % 5 == 4 else "batch"
            total += h.crash_round(sync, after_start=i % 4 != 3)
        print("%d kill -9 rounds, %d acknowledged commits, newest %d"
              % (args.rounds, total, h.mark))
        for kind, fn in (("tail", h.tail_round), ("corrupt", h.corrupt_round)):
            done = 0
            for _ in range(args.damage_rounds * 6):
                if done == args.damage_rounds:
                    break
                done += fn()
            if done == 0:
                raise Failure("no %s round could be set up" % kind)
        h.verify(expect=h.mark)
    except Failure as e:
        print("FAIL (seed %d, dir %s): %s" % (seed, data_dir, e))
        return 1
    print("OK in %.1f s" % (time.time() - start))
    if not args.keep:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
