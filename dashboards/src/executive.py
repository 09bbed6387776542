"""Executive overview: is the fleet healthy, how busy is it, what does it cost,
and how much of the GPU time was usable. One screen, no per-GPU detail."""

from . import grafana as g
from . import thresholds as t
from .common import GPU, Variant, gpu_variables

NAME = "executive"

# GPUs seen in the last day: the fleet the stats compare against (the rule
# pack's GpuMissingFromNode compares with the last day too).
EXPECTED = f"count(last_over_time(gpu_temperature_celsius{{{GPU}}}[1d]))"
UP = f"count(gpu_temperature_celsius{{{GPU}}})"
KWH = f"sum(increase(gpu_energy_joules_total{{{GPU}}}[$__range])) / 3600000"
# 1 while a GPU is slowed by heat or the power brake (the reasons the rule
# pack's gpu:throttled:ratio_rate10m counts), else 0. Availability sums its
# complement over the subquery's steps and divides by the steps counted the
# same way (count_over_time(vector(1)[...])), so whether a range boundary is
# one of the steps (Prometheus 2 and 3 differ) cancels out.
THROTTLED = (f'max by (job, cluster, hostname, gpu) (gpu_clock_event_reason_active'
             f'{{reason=~"{t.THROTTLE_REASONS}", {GPU}}})')


def build(variant: Variant):
    ops = variant.uid("operations")
    to_ops = [g.dashboard_link("GPU operations", ops, "Per-GPU detail for the same selection")]
    lay = g.Layout()

    lay.row("Fleet health")
    lay.add(g.stat("GPUs reporting", "GPUs whose metrics are being scraped now.",
                   g.targets((UP, "GPUs")), "none", links=to_ops), 4, 4)
    lay.add(g.stat("GPUs expected", "GPUs seen at any time in the last day.",
                   g.targets((EXPECTED, "GPUs")), "none"), 4, 4)
    lay.add(g.stat("GPUs missing", "GPUs seen in the last day that report nothing now "
                   "(what the GpuMissingFromNode alert counts).",
                   g.targets((f"count(last_over_time(gpu_temperature_celsius{{{GPU}}}[1d]) "
                              f"unless gpu_temperature_celsius{{{GPU}}}) or vector(0)",
                              "missing")), "none",
                   g.thresholds((1, g.CRITICAL)), links=to_ops), 4, 4)
    lay.add(g.stat("GPUs with firing alerts", "GPUs with at least one firing alert of the "
                   "rule pack.",
                   g.targets((f'count(count by (hostname, gpu) (ALERTS{{alertstate="firing", '
                              f'gpu!="", {GPU}}})) or vector(0)', "GPUs")), "none",
                   g.thresholds((1, g.WARNING)), links=to_ops), 4, 4)
    lay.add(g.stat("GPUs slowed by heat or power brake", "GPUs whose clocks are held down now "
                   "by thermal slowdown or the power brake.",
                   g.targets((f"count({THROTTLED} == 1) or vector(0)", "GPUs")), "none",
                   g.thresholds((1, g.WARNING)), links=to_ops), 4, 4)
    lay.add(g.stat("Firing alerts by severity", "Firing alerts of the rule pack, by severity.",
                   g.targets((f'count by (severity) (ALERTS{{alertstate="firing", {GPU}}})',
                              "{{severity}}")), "none",
                   g.thresholds((1, g.WARNING))), 4, 4)

    lay.row("Utilisation")
    lay.add(g.gauge("Mean GPU utilisation", "Mean share of time a kernel was running, over "
                    "every selected GPU, now.",
                    g.targets((f"avg(gpu_utilization_ratio{{{GPU}}})", "utilisation")),
                    "percentunit", min_=0, max_=1), 6, 8)
    lay.add(g.timeseries("Utilisation by node", "Mean GPU utilisation of each node.",
                         g.targets((f"avg by (hostname) (gpu_utilization_ratio{{{GPU}}})",
                                    "{{hostname}}")), "percentunit", min_=0, max_=1,
                         links=to_ops), 18, 8)

    lay.row("Energy and cost")
    lay.add(g.stat("Energy over the range", "Energy the selected GPUs consumed in the "
                   "dashboard's time range (boards only; not cooling or hosts).",
                   g.targets((KWH, "energy")), "kwatth", decimals=1), 6, 6)
    lay.add(g.stat("Cost proxy", "Energy over the range times the price per kWh set in the "
                   "Price variable: a proxy, not a bill (no cooling, hosts, amortisation).",
                   g.targets((f"{KWH} * $price", "cost")), "currencyUSD", decimals=2), 6, 6)
    lay.add(g.timeseries("Power draw", "Board power of the selected GPUs against the sum of "
                         "their power limits.",
                         g.targets((f"sum(gpu_power_usage_watts{{{GPU}}})", "power"),
                                   (f"sum(gpu_power_limit_watts{{{GPU}}})", "power limit")),
                         "watt", overrides=[g.dashed_override("power limit")], min_=0), 12, 6)

    lay.row("Availability")
    lay.add(g.stat("Availability", "Share of GPU-time over the range in which the GPUs "
                   "reported and ran unthrottled (no thermal slowdown, no power brake), "
                   "against the GPUs seen in the range, sampled at the query interval.",
                   g.targets((f"sum(sum_over_time((1 - {THROTTLED})[$__range:$__interval])) / "
                              f"(count(last_over_time(gpu_temperature_celsius{{{GPU}}}"
                              "[$__range])) * scalar(count_over_time(vector(1)"
                              "[$__range:$__interval])))", "availability")),
                   "percentunit", decimals=2), 6, 6)
    lay.add(g.timeseries("GPUs up against expected", "GPUs reporting, and GPUs seen at any "
                         "time in the previous day.",
                         g.targets((UP, "reporting"), (EXPECTED, "expected")), "none",
                         overrides=[g.dashed_override("expected")], min_=0), 18, 6)

    variables = gpu_variables() + [g.textbox_variable(
        "price", "Price per kWh", "0.15", "Energy price for the cost proxy (currency per kWh).")]
    return g.dashboard(
        variant.uid(NAME), variant.title("Executive overview"),
        variant.describe("Fleet health, utilisation, energy, a cost proxy and availability of "
                         "the GPU fleet, for whoever answers for it."),
        variant.tags(NAME), variables, lay, variant.links(), time_from="now-24h")
