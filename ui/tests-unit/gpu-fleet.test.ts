/// <reference types="node" />
// The Fleet page's pure parts: heatmap model, worst-GPU ranking, summary tiles.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { VectorSample } from "../src/core/api.ts";
import { SIGNALS } from "../src/gpu/signals.ts";
import { heatmapModel, shortNodeNames } from "../src/pages/fleet/heatmap-data.ts";
import { rankWorst } from "../src/pages/fleet/worst-gpus.ts";
import { readSummary } from "../src/pages/fleet/summary.ts";
import { rangeWindow } from "../src/pages/fleet/queries.ts";

const v = (metric: Record<string, string>, value: number | string): VectorSample => ({ metric, value: [0, String(value)] });
const links = { gpu: (n: string, g: string) => `/gpu?n=${n}&g=${g}`, node: (n: string) => `/gpu?n=${n}` };

test("every GPU seen gets a cell; one without the signal reads nodata; a lost GPU is critical", () => {
  const samples = [
    v({ __name__: "gpu_memory_temperature_celsius", hostname: "n1", gpu: "0" }, 60),
    v({ __name__: "gpu_memory_max_operating_temperature_celsius", hostname: "n1", gpu: "0" }, 95),
    v({ __name__: "gpu_info", hostname: "n1", gpu: "1" }, 1),
    v({ __name__: "gpu_lost", hostname: "n2", gpu: "0" }, 1),
    v({ alertname: "GpuLost", severity: "critical", hostname: "n2", gpu: "0" }, 1),
  ];
  const m = heatmapModel(samples, SIGNALS.memory_temperature, "node", links);
  assert.equal(m.total, 3);
  assert.deepEqual(m.columns, ["0", "1"]);
  const rows = m.groups[0]?.rows ?? [];
  assert.deepEqual(rows.map((r) => r.node), ["n1", "n2"]);
  assert.equal(rows[0]?.cells.get("0")?.level, "ok");
  assert.equal(rows[0]?.cells.get("1")?.level, "nodata");
  const lost = rows[1]?.cells.get("0");
  assert.equal(lost?.level, "critical");
  assert.equal(lost?.alert, "critical");
  assert.match(lost?.title ?? "", /GpuLost/);
});

test("grouping by cluster puts rows under their cluster, unlabelled ones apart", () => {
  const samples = [
    v({ __name__: "gpu_info", hostname: "a", gpu: "0", cluster: "east" }, 1),
    v({ __name__: "gpu_info", hostname: "b", gpu: "0" }, 1),
  ];
  const m = heatmapModel(samples, SIGNALS.utilization, "cluster", links);
  assert.deepEqual(m.groups.map((g) => [g.name, g.rows.map((r) => r.node)]), [
    ["No cluster label", ["b"]],
    ["Cluster east", ["a"]],
  ]);
});

test("grouping by rack reads the rack label; node grouping has one unnamed group", () => {
  const samples = [
    v({ __name__: "gpu_info", hostname: "a", gpu: "0", cluster: "east", rack: "r2" }, 1),
    v({ __name__: "gpu_info", hostname: "b", gpu: "0", cluster: "east", rack: "r1" }, 1),
    v({ __name__: "gpu_info", hostname: "c", gpu: "0", cluster: "west", rack: "r1" }, 1),
  ];
  const racks = heatmapModel(samples, SIGNALS.utilization, "rack", links);
  assert.deepEqual(racks.groups.map((g) => [g.name, g.rows.map((r) => r.node)]), [
    ["Rack r1", ["b", "c"]],
    ["Rack r2", ["a"]],
  ]);
  const nodes = heatmapModel(samples, SIGNALS.utilization, "node", links);
  assert.deepEqual(nodes.groups.map((g) => [g.name, g.rows.length]), [[null, 3]]);
});

test("row labels drop the shared prefix at a word boundary", () => {
  const short = shortNodeNames(["sim-node-0017", "sim-node-0002"]);
  assert.equal(short.get("sim-node-0017"), "0017");
  assert.equal(shortNodeNames(["gpu1", "gpu12"]).get("gpu12"), "gpu12");
  assert.equal(shortNodeNames(["only-one"]).get("only-one"), "only-one");
});

test("the worst list puts a GPU over its HBM limit first, then a predicted one, then by headroom", () => {
  const m = (node: string, sensor: string, kind: string, value: number, extra: Record<string, string> = {}) =>
    v({ hostname: node, gpu: "0", sensor, kind, ...extra }, value);
  const list = rankWorst([
    m("cool", "die", "margin", 40),
    m("cool", "memory", "margin", 45),
    m("warm", "die", "margin", 10),
    m("runaway", "memory", "margin", -2),
    m("runaway", "die", "margin", 20),
    m("predicted", "memory", "margin", 20),
    m("predicted", "memory", "eta", 600),
    v({ hostname: "predicted", gpu: "0", kind: "predicted", alertname: "GpuMemoryTemperatureSlowdownPredicted", alertstate: "firing" }, 1),
    // A short ETA without an active forecast alert (a load step) does not move a GPU up.
    m("step", "die", "margin", 30),
    m("step", "die", "eta", 60),
    m("pending", "memory", "margin", 25),
    m("pending", "memory", "eta", 900),
    v({ hostname: "pending", gpu: "0", kind: "predicted", alertname: "GpuMemoryTemperatureSlowdownPredicted", alertstate: "pending" }, 1),
  ]);
  assert.deepEqual(list.map((g) => `${g.node}:${g.level}`), [
    "runaway:critical",
    "predicted:warning",
    "pending:ok",
    "warm:ok",
    "step:ok",
    "cool:ok",
  ]);
});

test("summary: missing counts are 0, missing sums are no data", () => {
  const s = readSummary([v({ stat: "gpus_up" }, 7), v({ stat: "gpus_expected" }, 8), v({ stat: "alerts", severity: "critical" }, 2)]);
  assert.equal(s.gpusUp, 7);
  assert.equal(s.gpusLost, 0);
  assert.equal(s.throttling, 0);
  assert.ok(Number.isNaN(s.power));
  assert.equal(s.alertsBySeverity.get("critical"), 2);
});

test("long ranges read a subquery, short ones every sample", () => {
  assert.equal(rangeWindow(0, 3600), "[3600s]");
  assert.equal(rangeWindow(0, 30 * 86400), "[2592000s:3600s]");
  assert.equal(rangeWindow(0, 7 * 3600), "[25200s:60s]");
});
