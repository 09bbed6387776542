#!/usr/bin/env python3
"""Without a loadable NVML the agent still serves, and says so.

`--nvml-lib /nonexistent/libnvidia-ml.so.1` must not stop the agent: /metrics
answers 200 with gpumon_nvml_up 0, and there are no per-GPU series (a value
the agent cannot read is absent, never made up). This holds on machines with
a real driver too, since the library path is forced.
"""

from harness import Agent, check, http_get, parse_exposition, run_test, series


def body(args):
    with Agent(args.gpumon, ["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"],
               ready_path="/metrics") as agent:
        r = agent.metrics()
        samples, _ = parse_exposition(r.text)
        up = series(samples, "gpumon_nvml_up")
        check(len(up) == 1, f"expected one gpumon_nvml_up sample, got {up}")
        check(up[0].value == 0, f"gpumon_nvml_up is {up[0].value}, want 0")
        check(up[0].labels.get("simulated") != "true",
              "gpumon_nvml_up must not be labelled simulated without --simulate")
        gpu_series = [s for s in samples if s.name.startswith("gpu_")]
        check(not gpu_series, f"no GPU can be read, yet there are GPU series: {gpu_series[:5]}")
        check(not [s for s in samples if s.labels.get("simulated") == "true"],
              "simulated series without --simulate")
        # Still alive after a second scrape, and the index still works.
        check(agent.metrics().status == 200, "second scrape failed")
        check(http_get(agent.base + "/").status == 200, "/ failed without NVML")
        check(agent.running(), f"agent died:\n{agent.describe()}")
        print(f"gpumon_nvml_up 0; {len(samples)} samples, none per GPU")


if __name__ == "__main__":
    run_test(body)
