/// <reference types="node" />
// The Training page's pure parts: selectors and queries, straggler ranking, table models.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { VectorSample } from "../src/core/api.ts";
import {
  jobGpus,
  jobSelector,
  rankTable,
  rateWindow,
  scoreSelector,
  stepTimeWithScores,
  stragglerScore,
  STRAGGLER_RECORD,
} from "../src/pages/training/queries.ts";
import { TRAINING_PANELS } from "../src/pages/training/panels.ts";
import { compareRanks, rankRows, stragglerRanks } from "../src/pages/training/straggler.ts";
import { jobGpuRows, jobRows } from "../src/pages/training/tables.ts";

const v = (metric: Record<string, string>, value: number | string): VectorSample => ({ metric, value: [0, String(value)] });
const sel = (job: string[], node: string[] = [], rank = "") => ({ vars: { job, node }, rank });

test("the job selector matches job, node (the job series' node label) and rank; empty = All", () => {
  assert.equal(jobSelector(sel([])), "");
  assert.equal(jobSelector(sel(["llm-7b"])), 'job="llm-7b"');
  assert.equal(jobSelector(sel(["llm-7b"], ["n1", "n2"], "3")), 'job="llm-7b",node=~"n1|n2",rank="3"');
  assert.equal(jobSelector(sel(['a"b'])), 'job="a\\"b"');
  // scores are always against every rank of the job, whatever is filtered
  assert.equal(scoreSelector(sel(["j"], ["n1"], "2")), 'job="j"');
});

test("rate windows cover four steps and at least a minute", () => {
  assert.equal(rateWindow(1), 60);
  assert.equal(rateWindow(15), 60);
  assert.equal(rateWindow(30), 120);
  assert.equal(rateWindow(7.5), 60);
  assert.equal(rateWindow(100), 400);
});

test("the straggler score prefers the rule pack's record and falls back to the raw step-time ratio", () => {
  const q = stragglerScore('job="j"', 60);
  const cut = q.indexOf(" or ");
  const record = q.slice(0, cut);
  const raw = q.slice(cut + 4);
  assert.equal(record, `max by (job, rank) (${STRAGGLER_RECORD}{job="j"})`);
  assert.ok(raw?.startsWith("max by (job, rank) (min by (job) ("), raw);
  assert.match(raw ?? "", /group_right/);
  assert.match(raw ?? "", /rate\(training_step_duration_seconds_sum\{job="j"\}\[60s\]\)/);
  assert.match(raw ?? "", /rate\(training_step_duration_seconds_count\{job="j"\}\[60s\]\)/);
  // the sections without collectives first: fast ranks wait for the slowest in backward's all-reduce
  assert.match(raw ?? "", /training_step_section_seconds_total\{job="j",section=~"data_wait\|forward\|optimizer"\}\[60s\]/);
});

test("the step-time chart query tags step times and scores; scores ignore the rank filter", () => {
  const q = stepTimeWithScores(sel(["j"], [], "2"), 60);
  assert.match(q, /^label_replace\(.*rank="2".*"gm", "step", "", ""\) or label_replace\(.*"gm", "score", "", ""\)$/);
  const scorePart = q.slice(q.indexOf(" or label_replace("));
  assert.doesNotMatch(scorePart, /rank="2"/);
  for (const kind of ["score", "step", "steps", "last", "gpu", "section", "reason"]) assert.match(rankTable(sel(["j"]), 120), new RegExp(`"gm", "${kind}"`));
  assert.match(rankTable(sel(["j"]), 120), /job:training_straggler_score:section_ratio1m\{job="j"\}/);
  assert.match(rankTable(sel(["j"]), 120), /gpu_clock_event_reason_active\{reason!="gpu_idle"\} == 1\) and on \(hostname, gpu\)/);
});

test("the job's GPUs: joined GPUs, else every GPU of the job's nodes", () => {
  const q = jobGpus(sel(["j"]));
  assert.match(q, /gpu_utilization_ratio and on \(hostname, gpu\) count by \(hostname, gpu\) \(training_steps_total\{job="j",gpu!=""\}\)/);
  assert.match(q, /unless on \(hostname\)/);
  assert.match(q, /label_replace\(training_steps_total\{job="j"\}, "hostname", "\$1", "node", "\(\.\+\)"\)/);
});

test("every chart panel has a distinct id and a query mentioning the job", () => {
  const ids = new Set(TRAINING_PANELS.map((p) => p.id));
  assert.equal(ids.size, TRAINING_PANELS.length);
  for (const p of TRAINING_PANELS) assert.match(p.query(sel(["j"]), 60), /job="j"/, p.id);
  assert.ok(TRAINING_PANELS.find((p) => p.id === "step-time")?.straggler);
});

test("ranks are ranked slowest first; the ones under the threshold are stragglers; the worst is marked", () => {
  const samples = [
    v({ gm: "score", job: "j", rank: "0" }, 1),
    v({ gm: "score", job: "j", rank: "1" }, 0.95),
    v({ gm: "score", job: "j", rank: "3" }, 0.5),
    v({ gm: "score", job: "j", rank: "10" }, 0.7),
    v({ gm: "step", job: "j", rank: "3", node: "n2" }, 0.4),
    v({ gm: "steps", job: "j", rank: "3", node: "n2" }, 120),
    v({ gm: "last", job: "j", rank: "3", node: "n2" }, 1000),
    v({ gm: "gpu", job: "j", rank: "3", node: "n2", hostname: "n2", gpu: "5" }, 120),
    v({ gm: "step", job: "j", rank: "2", node: "n1" }, "NaN"),
    v({ gm: "score", job: "j" }, 1), // no rank: ignored
  ];
  const rows = rankRows(samples, 0.8);
  assert.deepEqual(
    rows.map((r) => r.rank),
    ["3", "10", "1", "0", "2"],
  );
  assert.deepEqual(
    rows.filter((r) => r.straggler).map((r) => r.rank),
    ["3", "10"],
  );
  assert.equal(rows[0]?.worst, true);
  assert.equal(rows[1]?.worst, false);
  assert.equal(rows[0]?.node, "n2");
  assert.equal(rows[0]?.stepSeconds, 0.4);
  assert.equal(rows[0]?.steps, 120);
  assert.equal(rows[0]?.lastStep, 1000);
  assert.equal(rows[0]?.hostname, "n2");
  assert.equal(rows[0]?.gpu, "5");
  const two = rows.find((r) => r.rank === "2");
  assert.equal(two?.stepSeconds, undefined);
  assert.equal(two?.straggler, false);
});

test("a rank's slowest section and its GPU's clock event reasons come with its row", () => {
  const rows = rankRows(
    [
      v({ gm: "score", job: "j", rank: "3" }, 0.33),
      v({ gm: "gpu", job: "j", rank: "3", node: "n", hostname: "n", gpu: "3" }, 1),
      v({ gm: "section", job: "j", rank: "3", section: "data_wait" }, 1),
      v({ gm: "section", job: "j", rank: "3", section: "optimizer" }, 0.9),
      v({ gm: "section", job: "j", rank: "3", section: "forward" }, 0.33),
      v({ gm: "section", job: "j", rank: "0", section: "forward" }, 1),
      v({ gm: "reason", hostname: "n", gpu: "3", reason: "sw_thermal_slowdown" }, 1),
      v({ gm: "reason", hostname: "n", gpu: "3", reason: "hw_slowdown" }, 1),
      v({ gm: "reason", hostname: "n", gpu: "0", reason: "sw_power_cap" }, 1),
      v({ gm: "score", job: "j", rank: "0" }, 1),
    ],
    0.7,
  );
  const slow = rows.find((r) => r.rank === "3");
  assert.equal(slow?.slowSection, "forward");
  assert.equal(slow?.slowSectionScore, 0.33);
  assert.deepEqual(slow?.gpuReasons, ["hw_slowdown", "sw_thermal_slowdown"]);
  const fast = rows.find((r) => r.rank === "0");
  assert.equal(fast?.slowSection, undefined, "a section as fast as the fastest is not named");
  assert.deepEqual(fast?.gpuReasons, [], "a rank without GPU labels gets no GPU's reasons");
});

test("no straggler when every score is within the threshold", () => {
  const rows = rankRows([v({ gm: "score", job: "j", rank: "0" }, 1), v({ gm: "score", job: "j", rank: "1" }, 0.85)], 0.8);
  assert.equal(rows.some((r) => r.straggler || r.worst), false);
});

test("stragglerRanks keys ranks per job and skips missing scores", () => {
  const set = stragglerRanks(
    [
      { labels: { job: "a", rank: "3" }, value: 0.4 },
      { labels: { job: "b", rank: "3" }, value: 0.9 },
      { labels: { job: "a", rank: "1" }, value: undefined },
      { labels: { job: "a", rank: "2" }, value: NaN },
    ],
    0.8,
  );
  assert.deepEqual([...set], ["a\u0000" + "3"]);
});

test("ranks compare numerically", () => {
  assert.deepEqual(["10", "2", "1", "x"].sort(compareRanks), ["1", "2", "10", "x"]);
});

test("job GPUs: one row per GPU with its ranks, by node then GPU", () => {
  const rows = jobGpuRows([
    v({ gm: "util", hostname: "n10", gpu: "0" }, 0.9),
    v({ gm: "util", hostname: "n2", gpu: "1" }, 0.5),
    v({ gm: "temp", hostname: "n2", gpu: "1" }, 70),
    v({ gm: "rank", hostname: "n2", gpu: "1", rank: "3" }, 1),
    v({ gm: "rank", hostname: "n2", gpu: "1", rank: "1" }, 1),
    v({ gm: "rank", hostname: "n3", gpu: "0", rank: "0" }, 1), // no GPU series: dropped
    v({ gm: "util", hostname: "n2" }, 1), // no gpu label: ignored
  ]);
  assert.deepEqual(
    rows.map((r) => `${r.node}/${r.gpu}`),
    ["n2/1", "n10/0"],
  );
  assert.deepEqual(rows[0]?.ranks, ["1", "3"]);
  assert.equal(rows[0]?.temperature, 70);
  assert.equal(rows[1]?.temperature, undefined);
});

test("jobs list: most recently active first", () => {
  const rows = jobRows([
    v({ gm: "ranks", job: "old" }, 2),
    v({ gm: "last", job: "old" }, 100),
    v({ gm: "last", job: "new" }, 200),
    v({ gm: "steps", job: "new" }, 50),
  ]);
  assert.deepEqual(
    rows.map((r) => r.job),
    ["new", "old"],
  );
  assert.equal(rows[1]?.ranks, 2);
  assert.equal(rows[0]?.steps, 50);
});
