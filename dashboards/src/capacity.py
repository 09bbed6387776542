"""Capacity planning: how much of the fleet is used, where the headroom is,
which GPUs sit idle, and where the trends lead, per cluster."""

from . import grafana as g
from .common import GPU, Variant, gpu_variables

NAME = "capacity"
# The brief's definition of an idle GPU: under 5 % utilisation on average
# over the dashboard's range.
IDLE_RATIO = 0.05
WHO_UTIL = "{{hostname}} GPU {{gpu}}"
MEAN_UTIL = f"avg_over_time(gpu_utilization_ratio{{{GPU}}}[$__range])"
HEADROOM = f"(1 - gpu_memory_used_bytes{{{GPU}}} / gpu_memory_total_bytes{{{GPU}}})"
# Utilisation bands for the distribution (a histogram, not thresholds).
BANDS = ((0, 0.25, "under 25 %"), (0.25, 0.5, "25-50 %"), (0.5, 0.75, "50-75 %"),
         (0.75, 1.01, "75-100 %"))


def band_query(lo, hi):
    return f"count by (cluster) ({MEAN_UTIL} >= {lo} < {hi})"


def build(variant: Variant):
    lay = g.Layout()
    ops = variant.uid("operations")

    lay.row("Distributions")
    lay.add(g.bargauge("GPUs by mean utilisation over the range, per cluster",
                       "How many GPUs of each cluster fall in each utilisation band, averaged "
                       "over the dashboard's range.",
                       [g.target(band_query(lo, hi), "{{cluster}} " + name, ref=chr(65 + i),
                                 instant=True) for i, (lo, hi, name) in enumerate(BANDS)],
                       "none", min_=0), 8, 10)
    lay.add(g.heatmap("Utilisation distribution over time", "For each interval, how many "
                      "selected GPUs ran at each utilisation (Grafana buckets the samples).",
                      g.targets((f"gpu_utilization_ratio{{{GPU}}}", WHO_UTIL)),
                      "percentunit", calculate=True, scheme="Blues"), 8, 10)
    lay.add(g.heatmap("Memory headroom distribution over time", "For each interval, how many "
                      "selected GPUs had each share of framebuffer memory free.",
                      g.targets((HEADROOM, WHO_UTIL)), "percentunit", calculate=True,
                      scheme="Greens"), 8, 10)
    lay.add(g.bargauge("Memory headroom per cluster", "Share of framebuffer memory free: the "
                       "tightest 10 % of GPUs (p10) and the median, per cluster.",
                       [g.target(f"quantile by (cluster) (0.1, {HEADROOM})",
                                 "{{cluster}} p10", ref="A", instant=True),
                        g.target(f"quantile by (cluster) (0.5, {HEADROOM})",
                                 "{{cluster}} median", ref="B", instant=True)],
                       "percentunit", min_=0, max_=1), 12, 6)
    lay.add(g.bargauge("Mean utilisation per cluster", "Mean GPU utilisation over the range, "
                       "per cluster.",
                       [g.target(f"avg by (cluster) ({MEAN_UTIL})", "{{cluster}}", instant=True)],
                       "percentunit", min_=0, max_=1), 12, 6)

    lay.row("Idle GPUs")
    lay.add(g.stat("Idle GPUs", f"GPUs whose mean utilisation over the range is under "
                   f"{IDLE_RATIO:.0%}.",
                   g.targets((f"count({MEAN_UTIL} < {IDLE_RATIO}) or vector(0)", "GPUs")),
                   "none", links=[g.dashboard_link("GPU operations", ops, "Per-GPU detail")]),
            6, 8)
    lay.add(g.stat("Idle share of the fleet", "Idle GPUs over the GPUs seen in the range.",
                   g.targets((f"(count({MEAN_UTIL} < {IDLE_RATIO}) or vector(0)) / "
                              f"count({MEAN_UTIL})", "idle")), "percentunit", decimals=1), 6, 8)
    lay.add(g.table("Idle GPUs", f"Each GPU under {IDLE_RATIO:.0%} mean utilisation over the "
                    "range, with its mean.",
                    [g.target(f"{MEAN_UTIL} < {IDLE_RATIO}", ref="A", instant=True,
                              table=True)], "percentunit",
                    transformations=[{"id": "organize", "options": {
                        "excludeByName": {"Time": True, "uuid": True, "pci_bus_id": True,
                                          "device": True},
                        "indexByName": {}, "renameByName": {"hostname": "node",
                                                            "Value": "mean utilisation"}}}]),
            12, 8)

    lay.row("Trends")
    lay.add(g.timeseries("Utilisation trend", "Mean utilisation per cluster over the last day at "
                         "each point, and where each GPU's linear trend over the range leads one "
                         "range ahead, averaged (predict_linear, clamped to 0-100 %).",
                         [g.target(f"avg by (cluster) (avg_over_time(gpu_utilization_ratio"
                                   f"{{{GPU}}}[1d]))", "{{cluster}} 1 day mean", ref="A"),
                          g.target("avg by (cluster) (clamp(predict_linear(gpu_utilization_ratio"
                                   f"{{{GPU}}}[$__range], $__range_s), 0, 1))",
                                   "{{cluster}} forecast one range ahead", ref="B")],
                         "percentunit", min_=0, max_=1,
                         overrides=[g.dashed_override(".*forecast.*")]), 12, 8)
    lay.add(g.timeseries("Framebuffer memory in use", "Memory used per cluster (peak over the "
                         "last day at each point) against the total.",
                         [g.target(f"sum by (cluster) (max_over_time(gpu_memory_used_bytes"
                                   f"{{{GPU}}}[1d]))", "{{cluster}} peak used", ref="A"),
                          g.target(f"sum by (cluster) (gpu_memory_total_bytes{{{GPU}}})",
                                   "{{cluster}} total", ref="B")],
                         "bytes", min_=0, overrides=[g.dashed_override(".* total")]), 12, 8)
    lay.add(g.timeseries("Energy per day", "Energy of the selected GPUs over the previous day "
                         "at each point, and the energy a day at the mean power of the range.",
                         [g.target(f"sum by (cluster) (increase(gpu_energy_joules_total{{{GPU}}}"
                                   "[1d])) / 3600000", "{{cluster}} last 24 h", ref="A"),
                          g.target(f"sum by (cluster) (rate(gpu_energy_joules_total{{{GPU}}}"
                                   "[$__range])) * 86400 / 3600000",
                                   "{{cluster}} a day at the range's mean power", ref="B")],
                         "kwatth", min_=0, overrides=[g.dashed_override(".*mean power")]),
            24, 8)

    return g.dashboard(
        variant.uid(NAME), variant.title("Capacity planning"),
        variant.describe("Utilisation and memory headroom distributions per cluster, idle "
                         "GPUs and long-range trends, for capacity planners."),
        variant.tags(NAME), gpu_variables(), lay, variant.links(), time_from="now-7d",
        refresh="5m")

