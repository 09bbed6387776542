/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { alignMatrix, seriesNames } from "../src/charts/matrix.ts";

test("alignMatrix on a query grid leaves gaps as null and drops NaN", () => {
  const data = alignMatrix(
    [
      { metric: { gpu: "0" }, values: [[100, "1"], [130, "4"]] },
      { metric: { gpu: "1" }, values: [[110, "NaN"], [120, "3"]] },
    ],
    { start: 100, end: 130, step: 10 },
  );
  assert.deepEqual(data[0], [100, 110, 120, 130]);
  assert.deepEqual(data[1], [1, null, null, 4]);
  assert.deepEqual(data[2], [null, null, 3, null]);
});

test("alignMatrix without a grid uses the union of sample times", () => {
  const data = alignMatrix([
    { metric: {}, values: [[5, "1"]] },
    { metric: {}, values: [[3, "2"], [5, "3"]] },
  ]);
  assert.deepEqual(data, [[3, 5], [null, 1], [2, 3]]);
});

test("seriesNames keeps only the labels that tell series apart", () => {
  const m = (gpu: string) => ({
    metric: { __name__: "gpu_temperature_celsius", hostname: "n1", gpu, uuid: `GPU-${gpu}`, device: `nvidia${gpu}` },
    values: [],
  });
  assert.deepEqual(seriesNames([m("0"), m("1")]), ["gpu=0", "gpu=1"]);
  const two = [
    { metric: { hostname: "a", gpu: "0" }, values: [] },
    { metric: { hostname: "a", gpu: "1" }, values: [] },
    { metric: { hostname: "b", gpu: "0" }, values: [] },
  ];
  assert.deepEqual(seriesNames(two), ["hostname=a gpu=0", "hostname=a gpu=1", "hostname=b gpu=0"]);
  assert.deepEqual(seriesNames([{ metric: { __name__: "up", job: "x" }, values: [] }]), ['up{job="x"}']);
});
