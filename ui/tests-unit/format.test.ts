/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { formatValue } from "../src/charts/format.ts";
import { matcher, quote, varMatchers } from "../src/core/promql.ts";
import { bucketsToHeatmap } from "../src/pages/explore/histogram.ts";

test("formatValue by unit", () => {
  assert.equal(formatValue(141 * 1024 ** 3, "bytes"), "141 GiB");
  assert.equal(formatValue(1536, "bytes"), "1.5 KiB");
  assert.equal(formatValue(72.46, "celsius"), "72.5 \u00b0C");
  assert.equal(formatValue(700, "watts"), "700 W");
  assert.equal(formatValue(5600, "watts"), "5.6 kW");
  assert.equal(formatValue(0.873, "ratio"), "87.3%");
  assert.equal(formatValue(0.0005, "seconds"), "0.5 ms");
  assert.equal(formatValue(5400, "seconds"), "1.5 h");
  assert.equal(formatValue(NaN, "watts"), "\u2013");
  assert.equal(formatValue(Infinity), "+Inf");
});

test("PromQL matchers from variables", () => {
  assert.equal(quote('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(matcher("gpu", []), "");
  assert.equal(matcher("gpu", ["3"]), 'gpu="3"');
  assert.equal(matcher("hostname", ["n.1", "n2"]), 'hostname=~"n\\\\.1|n2"');
  assert.equal(varMatchers({ cluster: ["c"], node: ["a", "b"], gpu: [], job: [] }), 'cluster="c",hostname=~"a|b"');
  assert.equal(varMatchers({ cluster: ["c"], node: ["a"], gpu: ["1"], job: [] }, ["node", "gpu"]), 'cluster="c"');
});

test("histogram buckets become per-bucket counts, summed over other labels", () => {
  const m = (le: string, inst: string, vals: Array<[number, string]>) => ({ metric: { le, instance: inst }, values: vals });
  const h = bucketsToHeatmap([
    m("+Inf", "a", [[10, "10"], [20, "12"]]),
    m("0.5", "a", [[10, "4"], [20, "4"]]),
    m("1", "a", [[10, "7"], [20, "9"]]),
    m("1", "b", [[10, "1"]]),
    m("0.5", "b", [[10, "1"]]),
    m("+Inf", "b", [[10, "1"]]),
  ]);
  assert.deepEqual(h.bounds, [0.5, 1, Infinity]);
  assert.deepEqual(h.xs, [10, 20]);
  assert.deepEqual(h.counts, [
    [5, 3, 3],
    [4, 5, 3],
  ]);
  assert.equal(h.max, 5);
  assert.throws(() => bucketsToHeatmap([{ metric: { job: "x" }, values: [] }]), /le/);
});

test("unit from metric name suffix", async () => {
  const { unitForMetric } = await import("../src/charts/format.ts");
  assert.equal(unitForMetric("gpu_temperature_celsius"), "celsius");
  assert.equal(unitForMetric("gpu_memory_used_bytes"), "bytes");
  assert.equal(unitForMetric("gpu_energy_joules_total"), "joules");
  assert.equal(unitForMetric("gpu_xid_errors_total"), "none");
  assert.equal(unitForMetric(undefined), "none");
});

test("API params: arrays repeat the key, null/undefined are dropped", async () => {
  const { encodeParams, parseSampleValue } = await import("../src/core/api.ts");
  assert.equal(encodeParams({ "match[]": ["a{x=\"1\"}", "b"], start: 10, end: undefined, q: null }), "match%5B%5D=a%7Bx%3D%221%22%7D&match%5B%5D=b&start=10");
  assert.equal(parseSampleValue("+Inf"), Infinity);
  assert.equal(parseSampleValue("-Inf"), -Infinity);
  assert.ok(Number.isNaN(parseSampleValue("NaN")));
  assert.equal(parseSampleValue("1.5e3"), 1500);
});
