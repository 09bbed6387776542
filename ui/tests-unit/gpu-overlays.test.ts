/// <reference types="node" />
// Alert regions, silence relevance, forecasts, and the Alerts page grouping.
import assert from "node:assert/strict";
import { test } from "node:test";
import { alertRegions, silenceRegions, type Silence } from "../src/charts/plugins/regions.ts";
import { forecastsOf, leastSquaresSlope } from "../src/pages/gpu/forecast.ts";
import { filterAlerts, groupAlerts, type ApiAlert } from "../src/pages/alerts/model.ts";
import { emptyVars } from "../src/core/state.ts";

test("an alert's runs become regions; one reaching the end of the range stays open", () => {
  const series = {
    metric: { alertname: "GpuTemperatureHigh", alertstate: "firing", severity: "critical" },
    values: [[100, "1"], [110, "1"], [120, "1"], [160, "1"], [170, "1"]] as [number, string][],
  };
  const r = alertRegions([series], 170, 10);
  assert.deepEqual(r.map((x) => [x.start, x.end, x.open]), [[100, 130, false], [160, 170, true]]);
});

test("a silence counts for a GPU when every matcher on a label it has matches", () => {
  const s = (matchers: Silence["matchers"]): Silence => ({ id: "x", matchers, startsAt: "1970-01-01T00:01:40Z", endsAt: "1970-01-01T00:05:00Z" });
  const labels = { hostname: ["n1"], gpu: ["3"] };
  const range = { start: 0, end: 200 };
  assert.equal(silenceRegions([s([{ name: "hostname", value: "n1" }, { name: "alertname", value: "X" }])], labels, range).length, 1);
  assert.equal(silenceRegions([s([{ name: "hostname", value: "n2" }])], labels, range).length, 0);
  assert.equal(silenceRegions([s([{ name: "gpu", value: "[0-3]", isRegex: true }])], labels, range).length, 1);
  assert.equal(silenceRegions([s([{ name: "gpu", value: "3", isEqual: false }])], labels, range).length, 0);
  const [clipped] = silenceRegions([s([])], labels, range);
  assert.deepEqual([clipped?.start, clipped?.end], [100, 200]);
});

test("a rising trend gets a forecast to its limit; a falling one or one past the limit does not", () => {
  const xs = [0, 60, 120, 180];
  const rising = [80, 81, 82, 83];
  assert.ok(Math.abs(leastSquaresSlope(xs, rising, 0) - 1 / 60) < 1e-12);
  const [f] = forecastsOf([{ seriesIdx: 1, gpu: "3", xs, ys: rising, limit: 95, rate: undefined, eta: undefined }], "HBM", false);
  assert.equal(Math.round(f?.etaSeconds ?? 0), 12 * 60);
  assert.equal(f?.text, "HBM reaches 95 °C slowdown limit in ~12 min");
  // The rule pack's record wins over the client-side slope.
  const [g] = forecastsOf([{ seriesIdx: 1, gpu: "3", xs, ys: rising, limit: 95, rate: 0.01, eta: 840 }], "HBM", true);
  assert.equal(g?.etaSeconds, 840);
  assert.match(g?.text ?? "", /^GPU 3 HBM/);
  assert.equal(forecastsOf([{ seriesIdx: 1, gpu: "0", xs, ys: [83, 82, 81, 80], limit: 95, rate: undefined, eta: undefined }], "HBM", false).length, 0);
  assert.equal(forecastsOf([{ seriesIdx: 1, gpu: "0", xs, ys: [94, 95, 96, 97], limit: 95, rate: 0.1, eta: 0 }], "HBM", false).length, 0);
});

test("a load step that has flattened out gets no forecast, a steady climb does", () => {
  const xs = Array.from({ length: 61 }, (_, i) => i * 10); // 10 minutes at 10 s
  const step = xs.map((x) => (x < 240 ? 40 + x / 8 : 70)); // warmed up, then flat for 6 min
  const climb = xs.map((x) => 40 + x / 30);
  const input = (ys: number[]) => [{ seriesIdx: 1, gpu: "0", xs, ys, limit: 95, rate: 0.03, eta: undefined }];
  assert.equal(forecastsOf(input(step), "HBM", false).length, 0);
  assert.equal(forecastsOf(input(climb), "HBM", false).length, 1);
});

test("alerts group by node and GPU, worst first, firing before pending", () => {
  const a = (alertname: string, state: string, severity: string, labels: Record<string, string>): ApiAlert => ({
    labels: { alertname, severity, ...labels },
    state,
    activeAt: "2026-01-01T00:00:00Z",
  });
  const alerts = [
    a("GpuClocksThrottled", "pending", "warning", { hostname: "n1", gpu: "3" }),
    a("GpuMemoryTemperatureHigh", "firing", "critical", { hostname: "n1", gpu: "3" }),
    a("GpuMissingFromNode", "firing", "warning", { hostname: "n1" }),
    a("GpumonTargetDown", "firing", "warning", { instance: "n9:9400" }),
  ];
  const groups = groupAlerts(alerts);
  assert.deepEqual(groups.map((g) => `${g.node}/${g.gpu}`), ["n1/3", "n1/", "n9:9400/"]);
  assert.deepEqual(groups[0]?.alerts.map((x) => x.labels["alertname"]), ["GpuMemoryTemperatureHigh", "GpuClocksThrottled"]);
  const vars = emptyVars();
  vars.gpu = ["3"];
  assert.equal(filterAlerts(alerts, { state: "", severity: "" }, vars).length, 2);
  assert.equal(filterAlerts(alerts, { state: "pending", severity: "" }, emptyVars()).length, 1);
  assert.equal(filterAlerts(alerts, { state: "", severity: "critical" }, emptyVars()).length, 1);
});
