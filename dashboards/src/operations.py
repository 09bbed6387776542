"""GPU operations: what each GPU is doing and what is wrong with it, for the
people who keep the fleet running: heat against each GPU's own limits,
clock slowdowns, memory errors, XIDs with their meaning, PCIe and NVLink,
alerts and slowdown forecasts."""

from . import grafana as g
from . import thresholds as t
from .common import GPU, Variant, gpu_variables

NAME = "operations"
WHO = "{{hostname}} GPU {{gpu}}"
# Reasons that say why clocks are low but are no fault.
BENIGN_REASONS = "gpu_idle|applications_clocks_setting|display_clock_setting"


def build(variant: Variant):
    lay = g.Layout()
    cap = variant.uid("capacity")
    exec_link = [g.dashboard_link("Executive overview", variant.uid("executive"),
                                  "The fleet summary")]

    lay.row("Heatmaps")
    lay.add(g.heatmap("Utilisation per GPU", "One row per GPU, coloured by the share of time "
                      "a kernel was running.",
                      g.targets((f"avg by (hostname, gpu) (gpu_utilization_ratio{{{GPU}}})",
                                 WHO)),
                      "percentunit", calculate=False, min_=0, max_=1, scheme="Blues"), 12, 10)
    lay.add(g.heatmap("Degrees below the die limit per GPU", "One row per GPU: its maximum "
                      "operating temperature minus its die temperature (red: at the limit).",
                      g.targets((f"gpu:temperature:margin_celsius{{{GPU}}}", WHO)),
                      "celsius", calculate=False, scheme="RdYlGn"), 12, 10)

    lay.row("Temperatures against each GPU's limits")
    lay.add(g.timeseries("Die temperature", "Die temperature of each GPU with its own maximum "
                         "operating temperature (software slowdown starts) and hardware "
                         "slowdown temperature (dashed).",
                         g.targets((f"gpu_temperature_celsius{{{GPU}}}", WHO),
                                   (f"gpu_max_operating_temperature_celsius{{{GPU}}}",
                                    WHO + " max operating"),
                                   (f"gpu_slowdown_temperature_celsius{{{GPU}}}",
                                    WHO + " hw slowdown")),
                         "celsius", overrides=[g.dashed_override(".*(max operating|hw "
                                                                 "slowdown)$")]), 12, 9)
    lay.add(g.timeseries("HBM temperature", "Memory (HBM) temperature of each GPU with its own "
                         "memory maximum operating temperature (dashed).",
                         g.targets((f"gpu_memory_temperature_celsius{{{GPU}}}", WHO),
                                   (f"gpu_memory_max_operating_temperature_celsius{{{GPU}}}",
                                    WHO + " max operating")),
                         "celsius", overrides=[g.dashed_override(".*max operating$")]), 12, 9)
    lay.add(g.bargauge("Degrees below the die limit", "Lowest margin over the range: orange "
                       f"within {t.DIE_MARGIN_WARNING_C} °C (GpuTemperatureHigh warning), red "
                       "at or above the limit (critical).",
                       g.targets((f"min by (hostname, gpu) (min_over_time("
                                  f"gpu:temperature:margin_celsius{{{GPU}}}[$__range]))", WHO)),
                       "celsius", g.thresholds((0, g.WARNING), (t.DIE_MARGIN_WARNING_C, g.OK),
                                               base=g.CRITICAL)), 12, 8)
    lay.add(g.bargauge("Degrees below the HBM limit", "Lowest margin over the range: orange "
                       f"within {t.HBM_MARGIN_WARNING_C} °C (GpuMemoryTemperatureHigh "
                       "warning), red at or above the limit (critical).",
                       g.targets((f"min by (hostname, gpu) (min_over_time("
                                  f"gpu:memory_temperature:margin_celsius{{{GPU}}}[$__range]))",
                                  WHO)),
                       "celsius", g.thresholds((0, g.WARNING), (t.HBM_MARGIN_WARNING_C, g.OK),
                                               base=g.CRITICAL)), 12, 8)

    lay.row("Clock slowdowns")
    lay.add(g.state_timeline("Clock event reasons", "When each reason held the clocks of a GPU "
                             "down (idle and application clock settings left out).",
                             g.targets((f"max by (hostname, gpu, reason) ("
                                        "gpu_clock_event_reason_active"
                                        f'{{reason!~"{BENIGN_REASONS}", {GPU}}}) == 1',
                                        WHO + " {{reason}}")),
                             "none", [g.value_text(1, "active", g.WARNING)]), 24, 9)
    lay.add(g.timeseries("Time throttled", "Share of the last 10 minutes each GPU was slowed by "
                         "heat or the power brake (the rule pack's gpu:throttled:ratio_rate10m; "
                         f"GpuClocksThrottled warns above {t.THROTTLED_RATIO_WARNING:.0%}), and "
                         "the share of time at the software power cap.",
                         g.targets((f"gpu:throttled:ratio_rate10m{{{GPU}}}", WHO + " slowed"),
                                   (f'rate(gpu_clock_event_duration_seconds_total{{reason='
                                    f'"sw_power_cap", {GPU}}}[$__rate_interval])',
                                    WHO + " power cap")),
                         "percentunit", g.thresholds((t.THROTTLED_RATIO_WARNING, g.WARNING)),
                         threshold_style="dashed", min_=0, max_=1), 16, 8)
    lay.add(g.stat("GPUs slowed now", "GPUs held down by thermal slowdown or the power brake.",
                   g.targets((f"count(max by (hostname, gpu) (gpu_clock_event_reason_active"
                              f'{{reason=~"{t.THROTTLE_REASONS}", {GPU}}}) == 1) or vector(0)',
                              "GPUs")), "none", g.thresholds((1, g.WARNING)),
                   links=exec_link), 8, 8)

    lay.row("Memory errors")
    lay.add(g.timeseries("ECC errors", "Corrected and uncorrected ECC errors per second since "
                         "the driver loaded (volatile counters).",
                         g.targets((f"sum by (hostname, gpu, error_type) (rate(gpu_ecc_errors_total"
                                    f'{{scope="volatile", {GPU}}}[$__rate_interval]))',
                                    WHO + " {{error_type}}")),
                         "cps", draw="bars", min_=0), 12, 8)
    lay.add(g.stat("Uncorrectable ECC errors", "Uncorrected ECC errors in the range "
                   "(GpuEccUncorrectableErrors is critical on any).",
                   g.targets((f"sum(increase(gpu_ecc_errors_total{{error_type=\"uncorrected\", "
                              f'scope="volatile", {GPU}}}[$__range])) or vector(0)', "errors")),
                   "none", g.thresholds((1, g.CRITICAL)), decimals=0), 4, 4)
    lay.add(g.stat("Row remaps pending", "GPUs with a row remapping pending (GpuRowRemapPending: "
                   "reset the GPU).",
                   g.targets((f"sum(gpu_remapped_rows_pending{{{GPU}}})", "GPUs")), "none",
                   g.thresholds((1, g.WARNING))), 4, 4)
    lay.add(g.stat("Row remap failures", "GPUs whose row remapping failed (GpuRowRemapFailed: "
                   "the GPU needs service).",
                   g.targets((f"sum(gpu_remapped_rows_failure{{{GPU}}})", "GPUs")), "none",
                   g.thresholds((1, g.CRITICAL))), 4, 4)
    lay.add(g.table("Remapped rows and retired pages", "Rows remapped per cause (Ampere and "
                    "newer) and pages retired per cause (older GPUs), per GPU.",
                    [g.target(f"gpu_remapped_rows{{{GPU}}}", ref="A", instant=True, table=True),
                     g.target(f"gpu_retired_pages{{{GPU}}}", ref="B", instant=True,
                              table=True)],
                    "none",
                    transformations=[{"id": "merge", "options": {}},
                                     {"id": "organize", "options": {
                                         "excludeByName": {"Time": True, "uuid": True,
                                                           "pci_bus_id": True,
                                                           "device": True, "__name__": True},
                                         "indexByName": {}, "renameByName": {
                                             "hostname": "node", "Value #A": "rows remapped",
                                             "Value #B": "pages retired"}}}]), 12, 4)

    lay.row("XID errors")
    lay.add(g.table("XID errors and their meaning", "XID events per GPU and code since the "
                    "agent started, with the meaning and action from the rule pack's catalog "
                    "(xid:gpu_xid:catalog).",
                    [g.target(f"max by (hostname, gpu, xid) (last_over_time(gpu_xid_errors_total"
                              f"{{{GPU}}}[$__range])) * on (xid) group_left (xid_meaning, action) "
                              "max by (xid, xid_meaning, action) (xid:gpu_xid:catalog) or on "
                              "(hostname, gpu, xid) label_replace(max by (hostname, gpu, xid) "
                              f"(last_over_time(gpu_xid_errors_total{{{GPU}}}[$__range])), "
                              '"xid_meaning", "not in the rule pack\'s catalog", "", "")',
                              ref="A", instant=True, table=True)],
                    "none",
                    transformations=[{"id": "organize", "options": {
                        "excludeByName": {"Time": True}, "indexByName": {"hostname": 0,
                                                                         "gpu": 1, "xid": 2,
                                                                         "xid_meaning": 3,
                                                                         "action": 4},
                        "renameByName": {"hostname": "node", "Value": "events"}}}]), 14, 8)
    lay.add(g.timeseries("XID events", "XID events per GPU and code in each interval.",
                         g.targets((f"sum by (hostname, gpu, xid) (increase(gpu_xid_errors_total"
                                    f"{{{GPU}}}[$__rate_interval]))", WHO + " XID {{xid}}")),
                         "none", draw="bars", min_=0), 10, 8)

    lay.row("PCIe and NVLink")
    lay.add(g.timeseries("PCIe replays per minute", "Link-level retransmissions; "
                         f"GpuPcieReplayRateHigh warns above {t.PCIE_REPLAYS_PER_MINUTE_WARNING} "
                         "a minute.",
                         g.targets((f"rate(gpu_pcie_replay_errors_total{{{GPU}}}"
                                    "[$__rate_interval]) * 60", WHO)),
                         "none", g.thresholds((t.PCIE_REPLAYS_PER_MINUTE_WARNING, g.WARNING)),
                         threshold_style="dashed", min_=0), 8, 8)
    lay.add(g.bargauge("PCIe link width against its maximum", "Lanes trained over the lanes "
                       "the GPU and slot support (GpuPcieLinkWidthDegraded warns below 100 %).",
                       g.targets((f"gpu_pcie_link_width{{{GPU}}} / gpu_pcie_link_width_max"
                                  f"{{{GPU}}}", WHO)),
                       "percentunit", g.thresholds((1, g.OK), base=g.WARNING), min_=0,
                       max_=1), 8, 8)
    lay.add(g.table("PCIe link", "Current and maximum link width and generation per GPU.",
                    [g.target(f"gpu_pcie_link_width{{{GPU}}}", ref="A", instant=True,
                              table=True),
                     g.target(f"gpu_pcie_link_width_max{{{GPU}}}", ref="B", instant=True,
                              table=True),
                     g.target(f"gpu_pcie_link_generation{{{GPU}}}", ref="C", instant=True,
                              table=True),
                     g.target(f"gpu_pcie_link_generation_max{{{GPU}}}", ref="D", instant=True,
                              table=True)],
                    "none",
                    transformations=[{"id": "merge", "options": {}},
                                     {"id": "organize", "options": {
                                         "excludeByName": {"Time": True, "uuid": True,
                                                           "pci_bus_id": True, "device": True,
                                                           "__name__": True},
                                         "indexByName": {},
                                         "renameByName": {"hostname": "node",
                                                          "Value #A": "width",
                                                          "Value #B": "max width",
                                                          "Value #C": "generation",
                                                          "Value #D": "max generation"}}}]),
            8, 8)
    lay.add(g.timeseries("NVLink errors per 10 minutes", "NVLink data-link errors per GPU "
                         f"and kind; GpuNvlinkErrorRateHigh warns at "
                         f"{t.NVLINK_ERRORS_PER_10M_WARNING} in 10 minutes.",
                         g.targets((f"sum by (hostname, gpu, error) (increase("
                                    f"gpu_nvlink_errors_total{{{GPU}}}[10m]))",
                                    WHO + " {{error}}")),
                         "none", g.thresholds((t.NVLINK_ERRORS_PER_10M_WARNING, g.WARNING)),
                         threshold_style="dashed", min_=0), 16, 8)
    lay.add(g.stat("NVLink links down", "Links reported inactive (GpuNvlinkDown is critical).",
                   g.targets((f"count(gpu_nvlink_up{{{GPU}}} == 0) or vector(0)", "links")),
                   "none", g.thresholds((1, g.CRITICAL))), 8, 8)

    lay.row("Alerts and forecasts")
    lay.add(g.table("Alerts", "Firing and pending alerts of the rule pack for the selected "
                    "GPUs.",
                    [g.target(f"ALERTS{{{GPU}}}", ref="A", instant=True, table=True)], "none",
                    transformations=[{"id": "organize", "options": {
                        "excludeByName": {"Time": True, "Value": True, "__name__": True},
                        "indexByName": {"alertname": 0, "alertstate": 1, "severity": 2,
                                        "hostname": 3, "gpu": 4},
                        "renameByName": {"hostname": "node"}}}]), 24, 7)
    lay.add(g.timeseries("Forecast: time to die slowdown", "Seconds until the die reaches its "
                         "slowdown limit at its current rise (gpu:temperature:seconds_to_slowdown;"
                         " only while rising). GpuTemperatureSlowdownPredicted warns below "
                         f"{t.SLOWDOWN_FORECAST_WARNING_S} s.",
                         g.targets((f"gpu:temperature:seconds_to_slowdown{{{GPU}}}", WHO)), "s",
                         g.thresholds((t.SLOWDOWN_FORECAST_WARNING_S, g.OK), base=g.WARNING),
                         threshold_style="dashed", min_=0), 12, 8)
    lay.add(g.timeseries("Forecast: time to HBM slowdown", "Seconds until the HBM reaches its "
                         "limit at its current rise (gpu:memory_temperature:seconds_to_slowdown)."
                         f" GpuMemoryTemperatureSlowdownPredicted warns below "
                         f"{t.SLOWDOWN_FORECAST_WARNING_S} s.",
                         g.targets((f"gpu:memory_temperature:seconds_to_slowdown{{{GPU}}}",
                                    WHO)), "s",
                         g.thresholds((t.SLOWDOWN_FORECAST_WARNING_S, g.OK), base=g.WARNING),
                         threshold_style="dashed", min_=0), 12, 8)

    return g.dashboard(
        variant.uid(NAME), variant.title("GPU operations"),
        variant.describe("Per-GPU health for operators: heat against each GPU's own limits, "
                         "clock slowdowns, memory errors, XIDs, PCIe and NVLink, alerts and "
                         "slowdown forecasts."),
        variant.tags(NAME), gpu_variables(), lay,
        variant.links() + [g.dashboard_link("Capacity planning", cap,
                                            "Distributions, idle GPUs and trends")],
        annotations=[g.alert_annotation(GPU)], time_from="now-6h")
