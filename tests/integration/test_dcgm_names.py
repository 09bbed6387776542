#!/usr/bin/env python3
"""dcgm-exporter compatible names carry the same readings as native ones.

--names dcgm exports DCGM_FI_DEV_* with dcgm-exporter's labels (gpu, UUID,
device, modelName, Hostname) and units (MiB, percent) and no native names;
--names both exports both, and within one scrape the two agree after unit
conversion.
"""

from harness import Agent, check, parse_exposition, run_test, series

DCGM_LABELS = {"gpu", "UUID", "device", "modelName", "Hostname"}
DCGM_NAMES = ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_POWER_USAGE",
              "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_UTIL",
              # The GPU's own limits and the driver's recommended action.
              "DCGM_FI_DEV_SLOWDOWN_TEMP", "DCGM_FI_DEV_SHUTDOWN_TEMP",
              "DCGM_FI_DEV_MEM_MAX_OP_TEMP", "DCGM_FI_DEV_GPU_MAX_OP_TEMP",
              "DCGM_FI_DEV_GPU_TEMP_LIMIT", "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION"]


def scrape(args, mode):
    with Agent(args.gpumon, ["--simulate", "h200x8", "--names", mode]) as agent:
        return parse_exposition(agent.metrics().text)[0]


def by_gpu(samples, name):
    return {s.labels["gpu"]: s.value for s in series(samples, name)}


def body(args):
    dcgm = scrape(args, "dcgm")
    for name in DCGM_NAMES:
        got = series(dcgm, name)
        check(len(got) == 8, f"--names dcgm: {name} has {len(got)} series, want 8")
        for s in got:
            missing = DCGM_LABELS - set(s.labels)
            check(not missing, f"{s} lacks dcgm-exporter labels {sorted(missing)}")
    native = sorted({s.name for s in dcgm if s.name.startswith("gpu_")})
    check(not native, f"--names dcgm still exports native names {native[:5]}")

    both = scrape(args, "both")
    pairs = [
        ("DCGM_FI_DEV_GPU_TEMP", "gpu_temperature_celsius", 1.0, 1.0),
        ("DCGM_FI_DEV_MEMORY_TEMP", "gpu_memory_temperature_celsius", 1.0, 1.0),
        ("DCGM_FI_DEV_POWER_USAGE", "gpu_power_usage_watts", 1.0, 0.5),
        ("DCGM_FI_DEV_FB_USED", "gpu_memory_used_bytes", 1.0 / (1 << 20), 1.0),
        ("DCGM_FI_DEV_GPU_UTIL", "gpu_utilization_ratio", 100.0, 1.0),
        # Limits are constants: exactly equal.
        ("DCGM_FI_DEV_SLOWDOWN_TEMP", "gpu_slowdown_temperature_celsius", 1.0, 0.0),
        ("DCGM_FI_DEV_SHUTDOWN_TEMP", "gpu_shutdown_temperature_celsius", 1.0, 0.0),
        ("DCGM_FI_DEV_MEM_MAX_OP_TEMP", "gpu_memory_max_operating_temperature_celsius", 1.0, 0.0),
        ("DCGM_FI_DEV_GPU_MAX_OP_TEMP", "gpu_max_operating_temperature_celsius", 1.0, 0.0),
        ("DCGM_FI_DEV_GPU_TEMP_LIMIT", "gpu_temperature_margin_celsius", 1.0, 1.0),
        ("DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION", "gpu_recovery_action", 1.0, 0.0),
    ]
    for dcgm_name, native_name, factor, tolerance in pairs:
        d = by_gpu(both, dcgm_name)
        n = by_gpu(both, native_name)
        check(set(d) == set(n) and len(d) == 8,
              f"--names both: {dcgm_name} GPUs {sorted(d)} vs {native_name} GPUs {sorted(n)}")
        for gpu in d:
            want = n[gpu] * factor
            check(abs(d[gpu] - want) <= tolerance,
                  f"GPU {gpu}: {dcgm_name}={d[gpu]} but {native_name}={n[gpu]} "
                  f"(x{factor} = {want})")
    # An H200's limits, ordered as the hardware acts on them.
    for gpu, slowdown in by_gpu(dcgm, "DCGM_FI_DEV_SLOWDOWN_TEMP").items():
        gpu_max = by_gpu(dcgm, "DCGM_FI_DEV_GPU_MAX_OP_TEMP")[gpu]
        shutdown = by_gpu(dcgm, "DCGM_FI_DEV_SHUTDOWN_TEMP")[gpu]
        check(gpu_max < slowdown < shutdown,
              f"GPU {gpu}: max operating {gpu_max}, slowdown {slowdown}, shutdown {shutdown}")
    print("dcgm names present with dcgm-exporter labels; values agree with native names")


if __name__ == "__main__":
    run_test(body)
