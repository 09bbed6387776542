#!/usr/bin/env python3
"""`gpumon simulate` serves a whole simulated fleet.

With --nodes 50 --gpus 8, every /node/<i>/metrics (i in 0..49) answers a full
agent exposition: 8 GPUs, all labelled simulated="true" and with one hostname
per node that no other node uses. Out-of-range or malformed node paths answer
404.
"""

from harness import check, http_get, parse_exposition, run_test, series, start_on_free_port

NODES = 50
GPUS = 8


def body(args):
    sim, port = start_on_free_port(
        lambda port: [args.gpumon, "simulate", "--nodes", NODES, "--gpus", GPUS, "--listen",
                      f"127.0.0.1:{port}", "--seed", "7"],
        "/node/0/metrics", "gpumon simulate", ready_timeout=60)
    base = f"http://127.0.0.1:{port}"
    with sim:
        hostnames = {}
        for i in range(NODES):
            r = http_get(f"{base}/node/{i}/metrics")
            check(r.status == 200, f"/node/{i}/metrics answered {r.status}")
            samples, _ = parse_exposition(r.text)
            temps = series(samples, "gpu_temperature_celsius")
            check(len(temps) == GPUS, f"node {i}: {len(temps)} GPUs, want {GPUS}")
            check(sorted(s.labels.get("gpu") for s in temps) == sorted(str(g) for g in
                                                                        range(GPUS)),
                  f"node {i}: gpu labels {[s.labels.get('gpu') for s in temps]}")
            gpu_series = [s for s in samples if s.name.startswith("gpu_")]
            hosts = {s.labels.get("hostname") for s in gpu_series}
            check(len(hosts) == 1 and None not in hosts and "" not in hosts,
                  f"node {i}: GPU series must share one hostname, saw {hosts}")
            check(all(s.labels.get("simulated") == "true" for s in gpu_series),
                  f"node {i}: GPU series without simulated=\"true\"")
            host = hosts.pop()
            check(host not in hostnames.values(),
                  f"node {i} has hostname {host!r}, already used by node "
                  f"{[k for k, v in hostnames.items() if v == host]}")
            hostnames[i] = host
        uuids_0 = {s.labels.get("uuid") for s in series(
            parse_exposition(http_get(f"{base}/node/0/metrics").text)[0],
            "gpu_temperature_celsius")}
        uuids_1 = {s.labels.get("uuid") for s in series(
            parse_exposition(http_get(f"{base}/node/1/metrics").text)[0],
            "gpu_temperature_celsius")}
        check(not (uuids_0 & uuids_1), f"nodes 0 and 1 share GPU uuids {uuids_0 & uuids_1}")
        for path in (f"/node/{NODES}/metrics", "/node/100000/metrics", "/node/-1/metrics",
                     "/node/abc/metrics"):
            r = http_get(base + path)
            check(r.status == 404, f"{path} answered {r.status}, want 404")
        check(sim.running(), f"simulator died:\n{sim.describe()}")
        print(f"{NODES} nodes x {GPUS} GPUs, hostnames {hostnames[0]!r} .. "
              f"{hostnames[NODES - 1]!r}")


if __name__ == "__main__":
    run_test(body)
