/// <reference types="node" />
import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultState, parseState, serializeState, type AppState } from "../src/core/state.ts";

test("defaults: / is the fleet page over the last hour, refresh off, all variables All", () => {
  const s = parseState("/", "");
  assert.equal(s.page, "fleet");
  assert.equal(s.from, "now-1h");
  assert.equal(s.to, "now");
  assert.equal(s.refresh, "off");
  assert.deepEqual(s.vars, { cluster: [], node: [], gpu: [], job: [] });
  assert.deepEqual(s.params, {});
});

test("parses time, refresh, repeated var-node, and page params", () => {
  const s = parseState(
    "/gpu",
    "?from=1714550000000&to=now&refresh=30s&var-node=n2&var-node=n10&var-gpu=3&var-cluster=a&signal=power&expr=rate(x%5B5m%5D)",
  );
  assert.equal(s.page, "gpu");
  assert.equal(s.from, "1714550000000");
  assert.equal(s.refresh, "30s");
  assert.deepEqual(s.vars.node, ["n2", "n10"]);
  assert.deepEqual(s.vars.gpu, ["3"]);
  assert.deepEqual(s.vars.cluster, ["a"]);
  assert.deepEqual(s.params, { signal: "power", expr: "rate(x[5m])" });
});

test("unknown refresh becomes off; All and empty variable values mean All", () => {
  const s = parseState("/fleet", "?refresh=1s&var-node=All&var-gpu=&var-job=$__all");
  assert.equal(s.refresh, "off");
  assert.deepEqual(s.vars, { cluster: [], node: [], gpu: [], job: [] });
});

test("serialize is canonical: from, to, refresh, vars in order, params sorted", () => {
  const s: AppState = {
    ...defaultState("explore"),
    from: "now-6h",
    refresh: "5s",
    vars: { cluster: [], node: ["b", "a"], gpu: [], job: ["train"] },
    params: { tab: "table", expr: 'up{job="x"}', display: "" },
  };
  assert.equal(
    serializeState(s),
    "/explore?from=now-6h&to=now&refresh=5s&var-node=b&var-node=a&var-job=train&expr=up%7Bjob%3D%22x%22%7D&tab=table",
  );
});

test("round trip: parse(serialize(s)) equals s for varied states", () => {
  const states: AppState[] = [
    defaultState(),
    { ...defaultState("gpu"), from: "1700000000000", to: "1700003600000", vars: { cluster: ["c 1"], node: ["n&1", "n=2"], gpu: ["7"], job: [] }, params: {} },
    { ...defaultState("explore"), refresh: "1m", params: { expr: "sum by (le) (rate(h_bucket[5m])) / 2 + 1", tab: "graph", display: "heatmap" } },
    { ...defaultState("fleet"), refresh: "5m", params: { signal: "memory_temperature", group: "cluster" } },
  ];
  for (const s of states) {
    const url = serializeState(s);
    const q = url.indexOf("?");
    const back = parseState(url.slice(0, q), url.slice(q));
    assert.deepEqual(back, s, url);
    assert.equal(serializeState(back), url);
  }
});

test("round trip of a URL gives its canonical form", () => {
  const url = "/alerts?refresh=10s&to=now&from=now-2d&var-gpu=1&zeta=1&alpha=2";
  const [p, q] = url.split("?") as [string, string];
  assert.equal(serializeState(parseState(p, `?${q}`)), "/alerts?from=now-2d&to=now&refresh=10s&var-gpu=1&alpha=2&zeta=1");
});
