"""The rule pack's thresholds, as the dashboards colour them.

Every number here is one the rule pack (rules/*.rules.yml) alerts on; none is
chosen for the dashboards. RULE_TEXT names, for each, the rule file and a
fragment of the alert's expression that contains it: the dashboards test
(tests/dashboards/test_dashboards.py) reads the rule files and fails when a
fragment is gone, so a threshold changed in the rules cannot silently
disagree with the dashboards.

Grafana colours a value by the highest step it reaches (value >= step), while
the rules compare with >= or > as written in each comment; at exactly the
threshold the two may differ by one step.
"""

# gpumon-thermal: GpuTemperatureHigh warns within 3 °C of the GPU's maximum
# operating temperature, is critical at it (margin <= 0).
DIE_MARGIN_WARNING_C = 3
# gpumon-thermal: GpuMemoryTemperatureHigh warns within 5 °C of the HBM's
# maximum operating temperature, is critical at it.
HBM_MARGIN_WARNING_C = 5
# gpumon-thermal: GpuClocksThrottled, share of 10 minutes slowed > 0.1.
THROTTLED_RATIO_WARNING = 0.1
# gpumon-interconnect: GpuPcieReplayRateHigh, replays per minute > 8.
PCIE_REPLAYS_PER_MINUTE_WARNING = 8
# gpumon-interconnect: GpuNvlinkErrorRateHigh, errors per 10 minutes >= 100.
NVLINK_ERRORS_PER_10M_WARNING = 100
# gpumon-forecast: Gpu(Memory)TemperatureSlowdownPredicted, slowdown
# forecast within 1800 s.
SLOWDOWN_FORECAST_WARNING_S = 1800
# gpumon-thermal / gpumon-power: the reasons gpu:throttled:ratio_rate10m counts
# (the software power cap is left out: running at the power limit is normal).
THROTTLE_REASONS = "sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown"
# gpumon-training: TrainingStraggler, a rank's straggler score (the fastest
# rank's section time over its own) < 0.7.
STRAGGLER_SCORE_WARNING = 0.7

RULE_TEXT = [
    ("gpumon-thermal.rules.yml", ">= (gpu_max_operating_temperature_celsius > 0) - "
     f"{DIE_MARGIN_WARNING_C}"),
    ("gpumon-thermal.rules.yml", ">= (gpu_memory_max_operating_temperature_celsius > 0) - "
     f"{HBM_MARGIN_WARNING_C}"),
    ("gpumon-thermal.rules.yml", f"gpu:throttled:ratio_rate10m > {THROTTLED_RATIO_WARNING}"),
    ("gpumon-thermal.rules.yml", f'reason=~"{THROTTLE_REASONS}"'),
    ("gpumon-interconnect.rules.yml",
     f"rate(gpu_pcie_replay_errors_total[10m]) * 60 > {PCIE_REPLAYS_PER_MINUTE_WARNING}"),
    ("gpumon-interconnect.rules.yml", f") >= {NVLINK_ERRORS_PER_10M_WARNING}"),
    ("gpumon-forecast.rules.yml",
     f"gpu:temperature:seconds_to_slowdown < {SLOWDOWN_FORECAST_WARNING_S}"),
    ("gpumon-forecast.rules.yml",
     f"gpu:memory_temperature:seconds_to_slowdown < {SLOWDOWN_FORECAST_WARNING_S}"),
    ("gpumon-training.rules.yml",
     f"job:training_straggler_score:section_ratio1m < {STRAGGLER_SCORE_WARNING}"),
]
