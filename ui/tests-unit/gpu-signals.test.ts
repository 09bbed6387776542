/// <reference types="node" />
// Signal readings against the rule-pack thresholds, and the shared selector.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SIGNALS } from "../src/gpu/signals.ts";
import { gpuSelector, metricsSelector } from "../src/gpu/selector.ts";
import { emptyVars } from "../src/core/state.ts";

const die = (t: number, limit?: number) =>
  SIGNALS.temperature.read(new Map([["gpu_temperature_celsius", t], ...(limit === undefined ? [] : [["gpu_max_operating_temperature_celsius", limit] as [string, number]])]));

test("die temperature turns warning 3 °C below the GPU's own limit and critical at it (GpuTemperatureHigh)", () => {
  assert.equal(die(83.9, 87).level, "ok");
  assert.equal(die(84, 87).level, "warning");
  assert.equal(die(86.9, 87).level, "warning");
  assert.equal(die(87, 87).level, "critical");
  // The same reading against another GPU's limit is fine: limits are per GPU.
  assert.equal(die(87, 95).level, "ok");
});

test("a die without a max operating temperature is measured against its hardware slowdown limit", () => {
  const r = SIGNALS.temperature.read(new Map([["gpu_temperature_celsius", 88], ["gpu_slowdown_temperature_celsius", 90]]));
  assert.equal(r.limit, 90);
  assert.equal(r.level, "warning");
});

test("a missing or zero limit reads nodata but keeps the value", () => {
  assert.equal(die(70).level, "nodata");
  assert.equal(die(70).value, 70);
  assert.equal(die(70, 0).level, "nodata");
});

test("HBM turns warning 5 °C below its limit (GpuMemoryTemperatureHigh)", () => {
  const hbm = (t: number) =>
    SIGNALS.memory_temperature.read(new Map([["gpu_memory_temperature_celsius", t], ["gpu_memory_max_operating_temperature_celsius", 95]])).level;
  assert.deepEqual([hbm(89), hbm(90), hbm(95), hbm(109)], ["ok", "warning", "critical", "critical"]);
});

test("power is measured against the enforced limit, else the management limit", () => {
  const p = (v: Array<[string, number]>) => SIGNALS.power.read(new Map(v));
  assert.equal(p([["gpu_power_usage_watts", 660], ["gpu_power_enforced_limit_watts", 700], ["gpu_power_limit_watts", 1000]]).level, "ok");
  assert.equal(p([["gpu_power_usage_watts", 665], ["gpu_power_enforced_limit_watts", 700]]).level, "warning");
  assert.equal(p([["gpu_power_usage_watts", 700], ["gpu_power_limit_watts", 700]]).level, "critical");
});

test("memory used is the ratio of the total; utilisation has no thresholds", () => {
  const m = SIGNALS.memory_used.read(new Map([["gpu_memory_used_bytes", 50], ["gpu_memory_total_bytes", 200]]));
  assert.equal(m.value, 0.25);
  assert.equal(SIGNALS.utilization.read(new Map([["gpu_utilization_ratio", 1]])).level, "ok");
  assert.equal(SIGNALS.utilization.read(new Map()).level, "nodata");
});

test("selectors follow the variables and match values literally", () => {
  const vars = emptyVars();
  assert.equal(gpuSelector(vars), "");
  vars.node = ["a.b", "c"];
  vars.gpu = ["3"];
  assert.equal(gpuSelector(vars, 'reason="x"'), 'hostname=~"a\\\\.b|c",gpu="3",reason="x"');
  assert.equal(metricsSelector(["gpu:temperature:rise_rate", "gpu_info"], ""), '{__name__=~"gpu:temperature:rise_rate|gpu_info"}');
});
