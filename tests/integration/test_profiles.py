#!/usr/bin/env python3
"""Simulated GPU models expose exactly what their hardware has.

- rtx4080sx1: one GeForce RTX 4080 SUPER; it has fans (gpu_fan_speed_ratio
  with a fan label) but no HBM temperature sensor and no NVLink, so
  gpu_memory_temperature_celsius and gpu_nvlink_* are absent.
- h200x2: two H200s; HBM temperature and NVLink links are present, fans are
  not (passively cooled).
"""

from harness import Agent, check, parse_exposition, run_test, series


def scrape(args, spec):
    with Agent(args.gpumon, ["--simulate", spec]) as agent:
        return parse_exposition(agent.metrics().text)[0]


def gpus_of(samples, name):
    return sorted({s.labels.get("gpu") for s in series(samples, name)})


def body(args):
    rtx = scrape(args, "rtx4080sx1")
    temps = series(rtx, "gpu_temperature_celsius")
    check(len(temps) == 1, f"rtx4080sx1: expected 1 GPU, got {len(temps)} temperatures")
    check("4080" in temps[0].labels.get("model", ""),
          f"rtx4080sx1: model label {temps[0].labels.get('model')!r} should name the 4080")
    fans = series(rtx, "gpu_fan_speed_ratio")
    check(fans, "rtx4080sx1: gpu_fan_speed_ratio missing")
    check(all("fan" in s.labels for s in fans), f"fan series without a fan label: {fans}")
    check(all(0 <= s.value <= 1 for s in fans), f"fan speed ratio outside [0,1]: {fans}")
    check(not series(rtx, "gpu_memory_temperature_celsius"),
          "rtx4080sx1 has no HBM sensor, yet gpu_memory_temperature_celsius is exported")
    nvlink = sorted({s.name for s in rtx if s.name.startswith("gpu_nvlink_")})
    check(not nvlink, f"rtx4080sx1 has no NVLink, yet exports {nvlink}")

    h200 = scrape(args, "h200x2")
    check(gpus_of(h200, "gpu_temperature_celsius") == ["0", "1"],
          f"h200x2: expected GPUs 0 and 1, got {gpus_of(h200, 'gpu_temperature_celsius')}")
    check(gpus_of(h200, "gpu_memory_temperature_celsius") == ["0", "1"],
          "h200x2: gpu_memory_temperature_celsius missing for some GPU")
    links = series(h200, "gpu_nvlink_up")
    check(links, "h200x2: gpu_nvlink_up missing")
    check(all("link" in s.labels for s in links), "gpu_nvlink_up without a link label")
    check(gpus_of(h200, "gpu_nvlink_up") == ["0", "1"], "gpu_nvlink_up missing for some GPU")
    per_gpu = {g: len([s for s in links if s.labels.get("gpu") == g]) for g in ("0", "1")}
    check(all(n > 1 for n in per_gpu.values()), f"an H200 has several NVLinks: {per_gpu}")
    check(not series(h200, "gpu_fan_speed_ratio"), "h200x2 has no fans, yet exports fan speed")
    check(all("H200" in s.labels.get("model", "")
              for s in series(h200, "gpu_temperature_celsius")), "h200x2: model should be H200")
    print(f"rtx4080sx1: {len(fans)} fans; h200x2: NVLinks per GPU {per_gpu}")


if __name__ == "__main__":
    run_test(body)
