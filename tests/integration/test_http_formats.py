#!/usr/bin/env python3
"""The agent's HTTP surface: content negotiation, gzip, /healthz, index.

- no Accept header, or text/plain: Prometheus text 0.0.4 with its exact
  content type and no "# EOF";
- Prometheus' Accept header (OpenMetrics preferred): OpenMetrics 1.0, exact
  content type, ending with "# EOF", counters typed without the _total suffix;
- Accept-Encoding: gzip: a gzip body that decodes to the same metric names
  (values move between scrapes, names do not); no gzip unless asked;
- per-GPU series carry the documented identity labels;
- /healthz answers 200 "ok", / is a small HTML page linking /metrics, an
  unknown path answers 404.
"""

import gzip

from harness import (OPENMETRICS_CONTENT_TYPE, PROMETHEUS_ACCEPT, TEXT_CONTENT_TYPE, Agent,
                     TestFailure,
                     check, http_get, names, parse_exposition, run_test, series)

GPU_LABELS = {"gpu", "uuid", "pci_bus_id", "device", "model", "hostname", "simulated"}


def check_text_format(r, what):
    check(r.header("Content-Type") == TEXT_CONTENT_TYPE,
          f"{what}: Content-Type {r.header('Content-Type')!r}, want {TEXT_CONTENT_TYPE!r}")
    check(r.header("Content-Encoding") in (None, "identity"),
          f"{what}: unrequested Content-Encoding {r.header('Content-Encoding')!r}")
    check("# EOF" not in r.text, f"{what}: text 0.0.4 must not contain '# EOF'")
    samples, types = parse_exposition(r.text)
    check(series(samples, "gpu_temperature_celsius"), f"{what}: no gpu_temperature_celsius")
    check(types.get("gpu_energy_joules_total") == "counter",
          f"{what}: want '# TYPE gpu_energy_joules_total counter', types: "
          f"{ {k: v for k, v in types.items() if 'energy' in k} }")
    return samples


def body(args):
    with Agent(args.gpumon, ["--simulate", "h200x8"]) as agent:
        plain = agent.metrics()
        plain_samples = check_text_format(plain, "no Accept header")
        check_text_format(agent.metrics({"Accept": "text/plain"}), "Accept: text/plain")
        check_text_format(agent.metrics({"Accept": "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"}),
                          "Accept: text/plain;version=0.0.4")

        # Identity labels on every per-GPU series.
        temps = series(plain_samples, "gpu_temperature_celsius")
        check(len(temps) == 8, f"expected 8 gpu_temperature_celsius series, got {len(temps)}")
        for s in temps:
            missing = GPU_LABELS - set(s.labels)
            check(not missing, f"{s} lacks labels {sorted(missing)}")
            check(s.labels["simulated"] == "true", f"{s}: simulated must be \"true\"")
            check("H200" in s.labels["model"], f"{s}: model should name the H200")
        check(len({s.labels["uuid"] for s in temps}) == 8, "GPU uuids are not distinct")
        check(len({s.labels["pci_bus_id"] for s in temps}) == 8, "pci_bus_ids are not distinct")
        check(sorted(s.labels["gpu"] for s in temps) == [str(i) for i in range(8)],
              f"gpu labels should be 0..7: {sorted(s.labels['gpu'] for s in temps)}")

        # OpenMetrics, as Prometheus asks for it.
        om = agent.metrics({"Accept": PROMETHEUS_ACCEPT})
        check(om.header("Content-Type") == OPENMETRICS_CONTENT_TYPE,
              f"OpenMetrics Content-Type {om.header('Content-Type')!r}, "
              f"want {OPENMETRICS_CONTENT_TYPE!r}")
        check(om.text.endswith("# EOF\n"), f"OpenMetrics must end with '# EOF\\n': "
              f"...{om.text[-80:]!r}")
        check(om.text.count("# EOF") == 1, "'# EOF' must appear exactly once")
        om_samples, om_types = parse_exposition(om.text)
        check(om_types.get("gpu_energy_joules") == "counter",
              "OpenMetrics: want '# TYPE gpu_energy_joules counter' (family name without "
              f"_total), types: { {k: v for k, v in om_types.items() if 'energy' in k} }")
        check(series(om_samples, "gpu_energy_joules_total"),
              "OpenMetrics: counter samples must be named gpu_energy_joules_total")
        extra = names(om_samples) - names(plain_samples)
        check(all(n.endswith("_created") for n in extra),
              f"OpenMetrics has names the text format lacks: {sorted(extra)}")
        missing = names(plain_samples) - names(om_samples)
        check(not missing, f"OpenMetrics lacks names the text format has: {sorted(missing)}")

        # gzip, only when asked for.
        gz = agent.metrics({"Accept-Encoding": "gzip"})
        check(gz.header("Content-Encoding") == "gzip",
              f"Accept-Encoding: gzip answered Content-Encoding {gz.header('Content-Encoding')!r}")
        check(gz.header("Content-Type") == TEXT_CONTENT_TYPE,
              f"gzip Content-Type {gz.header('Content-Type')!r}")
        try:
            unzipped = gzip.decompress(gz.body).decode("utf-8")
        except (OSError, EOFError) as e:
            raise TestFailure(f"gzip body does not decode: {e}") from None
        gz_samples, _ = parse_exposition(unzipped)
        check(names(gz_samples) == names(plain_samples),
              f"gzip body has different metric names: only gzip "
              f"{sorted(names(gz_samples) - names(plain_samples))}, only plain "
              f"{sorted(names(plain_samples) - names(gz_samples))}")
        check(len(gz.body) < len(unzipped.encode()), "gzip body is not smaller than plain")
        gz_om = agent.metrics({"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip, deflate"})
        check(gz_om.header("Content-Encoding") == "gzip", "OpenMetrics + gzip not gzipped")
        check(gzip.decompress(gz_om.body).decode().endswith("# EOF\n"),
              "gzipped OpenMetrics does not end with '# EOF'")

        # Health, index, unknown paths.
        h = http_get(agent.base + "/healthz")
        check(h.status == 200 and h.text.strip() == "ok",
              f"/healthz answered {h.status} {h.body[:100]!r}, want 200 'ok'")
        index = http_get(agent.base + "/")
        check(index.status == 200, f"/ answered {index.status}")
        check((index.header("Content-Type") or "").startswith("text/html"),
              f"/ Content-Type {index.header('Content-Type')!r}, want text/html")
        check('href="/metrics"' in index.text or "href='/metrics'" in index.text
              or 'href="metrics"' in index.text, "index page does not link /metrics")
        nope = http_get(agent.base + "/no-such-page")
        check(nope.status == 404, f"/no-such-page answered {nope.status}, want 404")
        print(f"text 0.0.4: {len(plain.body)} bytes, {len(plain_samples)} samples; "
              f"OpenMetrics: {len(om.body)} bytes; gzip: {len(gz.body)} bytes")


if __name__ == "__main__":
    run_test(body)
