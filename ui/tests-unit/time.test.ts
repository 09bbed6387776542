/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  formatDuration,
  niceStep,
  parseDuration,
  parseTime,
  PRESETS,
  rangeLabel,
  resolveRange,
  stepFor,
  zoomOut,
} from "../src/core/time.ts";

const NOW = Date.UTC(2024, 4, 1, 12, 0, 0); // ms

test("parseDuration accepts Prometheus durations and rejects garbage", () => {
  assert.equal(parseDuration("5m"), 300);
  assert.equal(parseDuration("1h30m"), 5400);
  assert.equal(parseDuration("250ms"), 0.25);
  assert.equal(parseDuration("2d"), 172800);
  assert.equal(parseDuration("1w"), 604800);
  assert.ok(Number.isNaN(parseDuration("")));
  assert.ok(Number.isNaN(parseDuration("5")));
  assert.ok(Number.isNaN(parseDuration("5x")));
  assert.ok(Number.isNaN(parseDuration("m5")));
});

test("formatDuration is the inverse of parseDuration on whole units", () => {
  for (const s of [1, 59, 60, 90, 3600, 5400, 86400, 90061]) assert.equal(parseDuration(formatDuration(s)), s);
  assert.equal(formatDuration(5400), "1h30m");
  assert.equal(formatDuration(0), "0s");
});

test("parseTime: now, relative, epoch milliseconds; seconds out", () => {
  assert.equal(parseTime("now", NOW), NOW / 1000);
  assert.equal(parseTime("now-6h", NOW), NOW / 1000 - 6 * 3600);
  assert.equal(parseTime("now+30m", NOW), NOW / 1000 + 1800);
  assert.equal(parseTime("1714550000000", NOW), 1714550000);
  assert.ok(Number.isNaN(parseTime("yesterday", NOW)));
  assert.ok(Number.isNaN(parseTime("now-6", NOW)));
});

test("resolveRange falls back to the last hour and orders the ends", () => {
  assert.deepEqual(resolveRange("now-1h", "now", NOW), { start: NOW / 1000 - 3600, end: NOW / 1000 });
  assert.deepEqual(resolveRange("bogus", "now", NOW), { start: NOW / 1000 - 3600, end: NOW / 1000 });
  assert.deepEqual(resolveRange("now", "now-2h", NOW), { start: NOW / 1000 - 7200, end: NOW / 1000 });
});

test("presets span 5m to 30d and end at now", () => {
  assert.equal(PRESETS[0]?.from, "now-5m");
  assert.equal(PRESETS[PRESETS.length - 1]?.from, "now-30d");
  for (const p of PRESETS) assert.equal(p.to, "now");
  assert.equal(rangeLabel("now-6h", "now", NOW), "Last 6 hours");
});

test("stepFor: at most one point per pixel, rounded up to a nice step, at least 1s", () => {
  const h = 3600;
  assert.equal(stepFor(0, h, 1000), 5); // 3.6 s/px -> 5s
  assert.equal(stepFor(0, h, 3600), 1);
  assert.equal(stepFor(0, 60, 1000), 1); // never below 1s
  assert.equal(stepFor(0, 30 * 86400, 1000), 3600); // 2592 s/px -> 1h
  assert.equal(stepFor(0, 7 * 86400, 800), 900); // 756 s/px -> 15m
  assert.equal(stepFor(0, h, 1000, 15), 15); // minStep honoured
  for (const [range, width] of [[h, 937], [86400, 1211], [2 * 86400, 333], [30 * 86400, 1500]] as const) {
    const step = stepFor(0, range, width);
    assert.ok(range / step <= width, `range ${range} over ${width}px gave step ${step}`);
    assert.equal(niceStep(step), step);
  }
});

test("zoomOut doubles the range; relative ranges stay relative", () => {
  assert.deepEqual(zoomOut("now-1h", "now", NOW), { from: "now-2h", to: "now" });
  const abs = zoomOut(String(NOW - 7200_000), String(NOW - 3600_000), NOW);
  assert.equal(Number(abs.to) - Number(abs.from), 7200_000);
  assert.ok(Number(abs.to) <= NOW);
});
