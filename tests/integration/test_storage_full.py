#!/usr/bin/env python3
"""`gpumon server` on a full disk: clear errors, no crash, no corruption.

Mounts a 16 MiB tmpfs (root only; skips when mounting is not permitted),
runs `gpumon server --data` on it scraping `gpumon simulate`, then fills the
filesystem with a filler file so the WAL runs out of space. Expects, while
the disk is full: the targets down with a lastError saying "no space left on
device", gpumon_tsdb_append_failures_total{cause="disk_full"} > 0 and
gpumon_tsdb_storage_writable 0 on /metrics, /-/ready 503 (/-/healthy still
200), and the process still running. Then the filler is deleted: ingestion
must resume by itself (/-/ready 200, targets up, new samples stored). Last,
after a restart on the same data, samples written before the disk filled
and after it was freed are all readable.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse

from harness import Skip, check, http_get, run_test, start_on_free_port, wait_until

NODES = 2
TMPFS_BYTES = 16 << 20
# Left free by the filler: a few seconds of scrapes.
HEADROOM_BYTES = 192 << 10


def mount_tmpfs(path):
    if os.geteuid() != 0:
        raise Skip("mounting a tmpfs needs root (CI runs this test as root)")
    if shutil.which("mount") is None or shutil.which("umount") is None:
        raise Skip("mount/umount not installed")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0755", "tmpfs",
                        path], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here (no CAP_SYS_ADMIN?): {p.stderr.strip()}")


def unmount(path):
    if subprocess.run(["umount", path], capture_output=True, timeout=30).returncode != 0:
        subprocess.run(["umount", "-l", path], capture_output=True, timeout=30)


def fill(path, leave):
    """Writes a filler file until only `leave` bytes are free."""
    st = os.statvfs(os.path.dirname(path))
    size = st.f_bavail * st.f_frsize - leave
    chunk = b"\0" * (1 << 20)
    with open(path, "wb") as f:
        while size > 0:
            n = min(size, len(chunk))
            try:
                f.write(chunk[:n])
            except OSError:
                break
            size -= n


def query(base, expr, at=None):
    url = base + "/api/v1/query?query=" + urllib.parse.quote(expr)
    if at is not None:
        url += f"&time={at:.3f}"
    r = http_get(url)
    check(r.status == 200, f"query {expr!r} answered {r.status}: {r.body[:300]!r}")
    return json.loads(r.text)["data"]["result"]


def gpu_targets(base):
    targets = json.loads(http_get(base + "/api/v1/targets").text)["data"]["activeTargets"]
    return [t for t in targets if t["scrapePool"] == "gpu"]


def metric(base, name, labels=""):
    """The value of one series on the server's own /metrics, or None."""
    text = http_get(base + "/metrics").text
    pattern = "^" + re.escape(name) + (r"\{" + re.escape(labels) + r"\}" if labels else "") + r" (\S+)$"
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else None


def body(args):
    with tempfile.TemporaryDirectory() as tmp:
        mnt = os.path.join(tmp, "mnt")
        os.mkdir(mnt)
        mount_tmpfs(mnt)
        sim = server = None
        try:
            sim, sim_port = start_on_free_port(
                lambda port: [args.gpumon, "simulate", "--nodes", str(NODES), "--interval", "1s",
                              "--listen", f"127.0.0.1:{port}"],
                "/healthz", "gpumon simulate")
            config = os.path.join(tmp, "prometheus.yml")
            with open(config, "w") as f:
                f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpu\n"
                        "    static_configs:\n" +
                        "".join(f"      - targets: ['127.0.0.1:{sim_port}']\n"
                                f"        labels: {{__metrics_path__: /node/{i}/metrics, "
                                f"node: n{i}}}\n" for i in range(NODES)))
            data = os.path.join(mnt, "data")
            argv = lambda p: [args.gpumon, "server", "--listen", f"127.0.0.1:{p}", "--data", data,
                              "--config", config]
            server, port = start_on_free_port(argv, "/-/ready", "gpumon server")
            base = f"http://127.0.0.1:{port}"

            wait_until(lambda: len(query(base, 'up{job="gpu"} == 1')) == NODES, 20,
                       what="both targets up")
            time.sleep(2)
            before = time.time()  # samples up to here were written with space to spare
            check(len(query(base, 'up{job="gpu"} == 1', before)) == NODES, "up before filling")

            filler = os.path.join(mnt, "filler")
            fill(filler, HEADROOM_BYTES)

            def full_disk_seen():
                down = [t for t in gpu_targets(base)
                        if t["health"] == "down" and
                        "no space left on device" in t["lastError"].lower()]
                return len(down) == NODES and down
            down = wait_until(full_disk_seen, 30, what="targets down with 'no space left'")
            check(server.running(), f"server died on a full disk\n{server.describe()}")
            check("storing the scrape failed" in down[0]["lastError"],
                  f"lastError: {down[0]['lastError']!r}")
            ready = http_get(base + "/-/ready")
            check(ready.status == 503, f"/-/ready answered {ready.status} on a full disk")
            check(http_get(base + "/-/healthy").status == 200, "/-/healthy while the disk is full")
            lost = metric(base, "gpumon_tsdb_append_failures_total", 'cause="disk_full"')
            check(lost is not None and lost > 0,
                  f"gpumon_tsdb_append_failures_total{{cause=\"disk_full\"}} = {lost}")
            check(metric(base, "gpumon_tsdb_storage_writable") == 0, "storage_writable not 0")
            check(metric(base, "gpumon_tsdb_wal_write_failures_total") > 0, "no WAL write failure")
            # Queries still work over what is stored.
            check(len(query(base, 'up{job="gpu"} == 1', before)) == NODES, "query while full")
            print(f"disk full: {lost:.0f} samples lost, targets down: {down[0]['lastError']}")

            os.remove(filler)
            freed = time.time()
            server.wait_http(base + "/-/ready", timeout=20)
            wait_until(lambda: all(t["health"] == "up" for t in gpu_targets(base)), 20,
                       what="targets up again after freeing space")
            wait_until(lambda: len(query(base, f'timestamp(up{{job="gpu"}}) > {freed:.3f}'))
                       == NODES, 20, what="new samples after freeing space")
            after = time.time()
            check(metric(base, "gpumon_tsdb_storage_writable") == 1, "storage_writable not 1")

            rc = server.stop()
            check(rc == 0, f"server exited {rc} on SIGTERM\n{server.describe()}")
            stderr = server.stderr()
            server, port = start_on_free_port(argv, "/-/ready", "gpumon server (restarted)")
            base = f"http://127.0.0.1:{port}"
            for t, what in ((before, "before the disk filled"), (after, "after it was freed")):
                got = query(base, 'up{job="gpu"}', t)
                check(len(got) == NODES and all(s["value"][1] == "1" for s in got),
                      f"after a restart, up {what}: {got}")
            check("no space left on device" in stderr.lower(),
                  "the first run did not log the full disk")
        finally:
            if server:
                server.stop()
            if sim:
                sim.stop()
            unmount(mnt)


if __name__ == "__main__":
    run_test(body)
