#!/usr/bin/env python3
"""`gpumon server` and a real Prometheus, in the same run, scraping the same
simulated fleet: CPU and RSS of each.

Starts `gpumon simulate --nodes N --gpus 8 --interval 15s` on loopback, then
`gpumon server` and the Debian `prometheus`, each with its own storage
directory and the same configuration file: one scrape target per simulated
node (the layout of bench/fleet_scrape.py), every 15 s, nothing else.
After a warm-up (long enough for both to have scraped every target twice)
it measures, over the steady-state window, CPU (% of one core, from
/proc/PID/stat) and RSS (VmRSS sampled every 5 s, and VmHWM) of both
servers, then asks each server's own HTTP API the same questions: targets
up, scrapes per target in the window, GPU series held. Both must hold the
same series for the comparison to mean anything; the script says so when
they do not.

usage: server_scrape.py PATH/TO/gpumon [--nodes 1000] [--duration 300]
                        [--prometheus /usr/bin/prometheus] [--json FILE]
Prints a markdown table; stops every process on exit.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True

from bench_util import Child, free_port, machine_description, markdown_table  # noqa: E402
from fleet_scrape import (  # noqa: E402
    JOB, SCRAPE_INTERVAL_S, Usage, scalar, wait_for_targets, write_config)


def measure(servers, seconds):
    """Samples CPU and RSS of every server over `seconds`."""
    usage = [Usage(name, child.pid) for name, child, _ in servers]
    for u in usage:
        u.begin()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for u in usage:
            u.sample()
        time.sleep(min(5.0, max(0.0, end - time.monotonic())))
    for u in usage:
        u.end()
    return {u.name: u.report() for u in usage}


def ask(base, window_s):
    rng = f"[{window_s}s]"
    job = f'{{job="{JOB}"}}'
    q = {
        "targets": f"count(up{job})",
        "targets_up_now": f"count(up{job} == 1)",
        "scrapes_in_window": f"sum(count_over_time(up{job}{rng}))",
        "failed_scrapes_in_window": f"sum(count_over_time(up{job}{rng})) - "
                                    f"sum(sum_over_time(up{job}{rng}))",
        "min_scrapes_per_target": f"min(count_over_time(up{job}{rng}))",
        "samples_per_target": f"avg(scrape_samples_scraped{job})",
        "gpus": "count(gpu_temperature_celsius)",
        "gpu_series": 'count({__name__=~"gpu_.+"})',
    }
    at = time.time()
    return {k: scalar(base, v, at) for k, v in q.items()}


def run(args):
    report = {"machine": machine_description(), "nodes": args.nodes, "gpus_per_node": 8,
              "duration_s": args.duration}
    with tempfile.TemporaryDirectory(prefix="gpumon-server-bench-") as tmp:
        sim_port, prom_port, gm_port = free_port(), free_port(), free_port()
        sim_argv = [args.gpumon, "simulate", "--nodes", args.nodes, "--gpus", 8, "--interval",
                    f"{SCRAPE_INTERVAL_S}s", "--listen", f"127.0.0.1:{sim_port}"]
        with Child(sim_argv, name="gpumon simulate") as sim:
            sim.wait_http(f"http://127.0.0.1:{sim_port}/node/{args.nodes - 1}/metrics",
                          timeout=300)
            config = os.path.join(tmp, "scrape.yml")
            write_config(config, sim_port, None, args.nodes)
            prom_argv = [args.prometheus, f"--config.file={config}",
                         f"--storage.tsdb.path={os.path.join(tmp, 'prom')}",
                         f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"]
            gm_argv = [args.gpumon, "server", "--config", config,
                       "--data", os.path.join(tmp, "gpumon"),
                       "--listen", f"127.0.0.1:{gm_port}"]
            with Child(prom_argv, name="prometheus") as prom, \
                    Child(gm_argv, name="gpumon server") as gm:
                servers = [("gpumon server", gm, f"http://127.0.0.1:{gm_port}"),
                           ("prometheus", prom, f"http://127.0.0.1:{prom_port}")]
                for name, child, base in servers:
                    child.wait_http(base + "/-/ready", timeout=120)
                    n = wait_for_targets(base, args.nodes)
                    if n != args.nodes:
                        raise RuntimeError(f"{name} has {n} targets, want {args.nodes}")
                warmup = 2 * SCRAPE_INTERVAL_S + 10
                print(f"warm-up {warmup} s, then {args.duration - warmup} s steady state",
                      file=sys.stderr)
                time.sleep(warmup)
                window_start = time.monotonic()
                report["usage"] = measure(servers, args.duration - warmup)
                for name, child, _ in servers:
                    if not child.running():
                        raise RuntimeError(f"{name} exited during the run:\n{child.log_tail()}")
                window_s = int(time.monotonic() - window_start) // SCRAPE_INTERVAL_S \
                    * SCRAPE_INTERVAL_S
                report["window_s"] = window_s
                report["results"] = {name: ask(base, window_s) for name, _, base in servers}
    return report


def summarize(report):
    m = report["machine"]
    r, u = report["results"], report["usage"]
    g, p = "gpumon server", "prometheus"
    lines = [f"Machine: {m['nproc']} CPUs, {m['cpu_model']}, {m['memory_gib']} GiB; "
             f"load average at start {m['load_average'][0]:.2f}", "",
             f"{report['nodes']} simulated nodes × 8 GPUs, one target each, scraped every "
             f"{SCRAPE_INTERVAL_S} s by both servers at once; steady-state window "
             f"{report['window_s']} s", ""]

    def row(label, key, fmt="{:.0f}"):
        return [label, fmt.format(r[g][key]), fmt.format(r[p][key])]

    rows = [row("targets", "targets"),
            row("targets up at the end", "targets_up_now"),
            row("scrapes in the window", "scrapes_in_window"),
            row("failed scrapes in the window", "failed_scrapes_in_window"),
            row("fewest scrapes of one target in the window", "min_scrapes_per_target"),
            row("samples per target scrape", "samples_per_target"),
            row("GPUs", "gpus"),
            row("GPU series", "gpu_series")]
    cpu_g, cpu_p = u[g]["cpu_percent_of_one_core"], u[p]["cpu_percent_of_one_core"]
    rows.append(["CPU (% of one core)", f"{cpu_g:.1f}", f"{cpu_p:.1f}"])
    for key, label in (("rss_mean_mib", "RSS mean (MiB)"), ("rss_max_mib", "RSS max (MiB)"),
                       ("vmhwm_mib", "VmHWM (MiB)")):
        rows.append([label, f"{u[g][key]:.0f}", f"{u[p][key]:.0f}"])
    lines.append(markdown_table(["measure", g, p], rows))
    lines.append("")
    same = r[g]["gpu_series"] == r[p]["gpu_series"]
    report["ratios"] = {"cpu": cpu_g / cpu_p if cpu_p else None,
                        "rss_mean": u[g]["rss_mean_mib"] / u[p]["rss_mean_mib"],
                        "vmhwm": u[g]["vmhwm_mib"] / u[p]["vmhwm_mib"]}
    ratios = report["ratios"]
    lines.append(f"- Same GPU series in both: {'yes' if same else 'NO'}")
    lines.append(f"- gpumon / Prometheus: CPU {ratios['cpu']:.2f}, RSS mean "
                 f"{ratios['rss_mean']:.2f}, VmHWM {ratios['vmhwm']:.2f} (target ≤ 0.5)")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gpumon", help="path to the gpumon binary")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=300,
                        help="seconds from both servers being ready to the end (default 300)")
    parser.add_argument("--prometheus", default=shutil.which("prometheus") or
                        "/usr/bin/prometheus")
    parser.add_argument("--json", help="write all measurements to this file")
    args = parser.parse_args()
    if args.duration < 4 * SCRAPE_INTERVAL_S + 10:
        parser.error(f"--duration must be at least {4 * SCRAPE_INTERVAL_S + 10} s")
    if not os.access(args.prometheus, os.X_OK):
        parser.error(f"prometheus not found at {args.prometheus}")
    report = run(args)
    print(summarize(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
