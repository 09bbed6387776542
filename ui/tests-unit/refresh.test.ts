/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";

// RefreshLoop needs only document.hidden and visibilitychange: a minimal stand-in.
const listeners: Array<() => void> = [];
const fakeDocument = {
  hidden: false,
  addEventListener: (_type: string, fn: () => void) => listeners.push(fn),
};
(globalThis as unknown as { document: typeof fakeDocument }).document = fakeDocument;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("refreshes never overlap: the next wait starts when the previous tick finished", async () => {
  const { RefreshLoop } = await import("../src/core/refresh.ts");
  let running = 0;
  let maxRunning = 0;
  const starts: number[] = [];
  const ends: number[] = [];
  const loop = new RefreshLoop(async () => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    starts.push(Date.now());
    await sleep(80); // slower than the interval
    ends.push(Date.now());
    running--;
  });
  loop.setInterval(0.03);
  await sleep(500);
  loop.stop();
  await sleep(150);
  assert.equal(maxRunning, 1);
  assert.ok(starts.length >= 2, `ticks: ${starts.length}`);
  // 500 ms / (80 ms tick + 30 ms wait) is at most 5 ticks; overlapping timers would give ~16
  assert.ok(starts.length <= 5, `ticks: ${starts.length}`);
  for (let i = 1; i < starts.length; i++) assert.ok((starts[i] as number) - (ends[i - 1] as number) >= 25);
});

test("no refresh while the document is hidden; one as soon as it is visible again", async () => {
  const { RefreshLoop } = await import("../src/core/refresh.ts");
  let ticks = 0;
  const loop = new RefreshLoop(async () => {
    ticks++;
  });
  fakeDocument.hidden = true;
  loop.setInterval(0.02);
  await sleep(150);
  assert.equal(ticks, 0);
  fakeDocument.hidden = false;
  for (const fn of listeners) fn();
  await sleep(5);
  assert.equal(ticks, 1);
  loop.stop();
  await sleep(60);
  assert.equal(ticks, 1, "stopped loop must not tick");
});
