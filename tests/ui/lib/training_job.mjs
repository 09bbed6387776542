// A SIMULATED training job for the browser tests: the series of
// docs/jobs.md for N data-parallel ranks, written into a server through its
// remote-write receiver (lib/remote_write.mjs). Nothing here is measured.
//
// Contract: startSimulatedTrainingJob({ base, job, ranks, slowRank, gpus,
// historySeconds, gridSeconds, liveSeconds }) writes `historySeconds` of
// history at `gridSeconds` spacing ending now, then one sample per series
// every `liveSeconds` until stop(), so the rule pack's rules (evaluated at
// the server's now) and the UI's rates both see a job that is running.
// Every value is a function of the time since the job started, so history
// and live samples agree:
// - synchronous data parallelism: every rank completes a step every
//   STEP_SECONDS; rank `slowRank`'s forward takes three times as long as
//   the others' (0.3 s against 0.1 s), and the others spend the difference
//   waiting for it (section `other`, and longer gradient syncs) — the
//   straggler the UI must single out. Its score: the rule pack's
//   (job:training_straggler_score:ratio1m, the forward section) 0.1/0.3,
//   the UI's fallback (data wait + forward + optimizer) 0.2/0.4;
// - rank i runs on gpus[i] ({ node, gpu }): its series carry node = that
//   node and, when `joinGpus` (the default), the `hostname` and `gpu` labels
//   the agent adds when it joins a process to its GPU; every series carries
//   simulated="true", as the simulator's GPU series do;
// - a checkpoint every CHECKPOINT_EVERY s (CHECKPOINT_SAVE s), one load at
//   the start; goodput splits wall time into productive, data loading and
//   checkpointing.
// Resolves to { job, ranks, slowRank, gpus, stop() } once the history is in.
import { remoteWrite } from './remote_write.mjs';

export const STEP_SECONDS = 0.7;
/** The slow rank's straggler score: the rule pack's, and the UI's fallback (see above). */
export const SLOW_RANK_SCORES = { record: 0.1 / 0.3, fallback: 0.2 / 0.4 };
const CHECKPOINT_EVERY = 60;
const CHECKPOINT_SAVE = 4;
const CHECKPOINT_LOAD = 8;
const BATCH = 32;
const SEQUENCE = 2048;
// FLOPs per token: 6 x the parameters of a 0.7 B-parameter model
const FLOPS_PER_TOKEN = 6 * 7e8;
const PEAK_FLOPS = 989e12;
const FAST = { data_wait: 0.05, forward: 0.1, backward: 0.2, optimizer: 0.05 };
const SLOW = { data_wait: 0.05, forward: 0.3, backward: 0.3, optimizer: 0.05 };

function sectionsOf(rank, slowRank) {
  const s = { ...(rank === slowRank ? SLOW : FAST) };
  s.other = STEP_SECONDS - Object.values(s).reduce((a, b) => a + b, 0);
  return s;
}

/** Every series of one rank at `t` seconds after the job started (`t0` Unix seconds). */
function rankSeries(job, rank, world, slowRank, gpu, joinGpus, t0, t) {
  const base = { job, rank: String(rank), local_rank: String(rank), node: gpu.node, simulated: 'true' };
  if (joinGpus) Object.assign(base, { hostname: gpu.node, gpu: gpu.gpu });
  const steps = Math.floor(t / STEP_SECONDS);
  const ckpts = Math.floor(t / CHECKPOINT_EVERY);
  const sections = sectionsOf(rank, slowRank);
  const out = [];
  const add = (name, value, extra = {}) => out.push([{ __name__: name, ...base, ...extra }, value]);
  add('training_info', 1, { world_size: String(world), backend: 'gloo', torch_version: 'simulated', client_version: 'simulated' });
  add('training_steps_total', steps);
  add('training_step_duration_seconds_sum', steps * STEP_SECONDS);
  add('training_step_duration_seconds_count', steps);
  add('training_step_duration_seconds_bucket', steps, { le: '1' });
  add('training_step_duration_seconds_bucket', steps, { le: '+Inf' });
  for (const [section, seconds] of Object.entries(sections)) add('training_step_section_seconds_total', steps * seconds, { section });
  add('training_last_step_timestamp_seconds', t0 + steps * STEP_SECONDS);
  add('training_loss', 0.3 + 2.2 * Math.exp(-t / 300) + 0.01 * rank);
  add('training_learning_rate', 3e-4 * Math.min(1, t / 60), { param_group: '0' });
  add('training_grad_norm', 1 + 0.5 * Math.exp(-t / 200));
  add('training_samples_total', steps * BATCH);
  add('training_tokens_total', steps * BATCH * SEQUENCE);
  add('training_model_flops_total', steps * BATCH * SEQUENCE * FLOPS_PER_TOKEN);
  add('training_peak_flops', PEAK_FLOPS, { dtype: 'bf16' });
  add('training_model_flops_utilization_ratio', (BATCH * SEQUENCE * FLOPS_PER_TOKEN) / STEP_SECONDS / PEAK_FLOPS);
  const allocated = 40e9 + 1e9 * rank;
  add('training_cuda_memory_allocated_bytes', allocated);
  add('training_cuda_memory_reserved_bytes', allocated * 1.2);
  add('training_cuda_memory_active_bytes', allocated * 0.95);
  add('training_cuda_memory_allocated_peak_bytes', allocated * 1.1);
  add('training_cuda_memory_reserved_peak_bytes', allocated * 1.25);
  add('training_cuda_memory_active_peak_bytes', allocated * 1.05);
  add('training_cuda_memory_fragmentation_ratio', 0.05 + 0.01 * rank);
  add('training_cuda_alloc_retries_total', 0);
  add('training_cuda_ooms_total', 0);
  add('training_checkpoint_save_seconds_sum', ckpts * CHECKPOINT_SAVE);
  add('training_checkpoint_save_seconds_count', ckpts);
  add('training_checkpoint_load_seconds_sum', CHECKPOINT_LOAD);
  add('training_checkpoint_load_seconds_count', 1);
  add('training_checkpoint_save_bytes_total', ckpts * 28e9);
  add('training_checkpoint_load_bytes_total', 28e9);
  add('training_last_checkpoint_timestamp_seconds', t0 + ckpts * CHECKPOINT_EVERY);
  add('training_last_checkpoint_step', Math.floor((ckpts * CHECKPOINT_EVERY) / STEP_SECONDS));
  const dataLoading = steps * sections.data_wait;
  const checkpointing = ckpts * CHECKPOINT_SAVE + CHECKPOINT_LOAD;
  add('training_goodput_seconds_total', Math.max(0, t - dataLoading - checkpointing), { category: 'productive' });
  add('training_goodput_seconds_total', dataLoading, { category: 'data_loading' });
  add('training_goodput_seconds_total', checkpointing, { category: 'checkpointing' });
  add('training_goodput_seconds_total', 0, { category: 'restart' });
  add('training_goodput_seconds_total', 0, { category: 'lost_progress' });
  add('training_grad_sync_seconds_total', steps * (0.05 + sections.other));
  add('training_comm_overlap_ratio', rank === slowRank ? 0.9 : 0.4);
  add('training_collective_sequence', steps * 12, { state: 'started' });
  add('training_collective_sequence', steps * 12, { state: 'completed' });
  return out;
}

function snapshot(spec, t0, nowSec) {
  const all = [];
  for (let r = 0; r < spec.ranks; r++) {
    all.push(...rankSeries(spec.job, r, spec.ranks, spec.slowRank, spec.gpus[r], spec.joinGpus, t0, nowSec - t0));
  }
  return all;
}

const seriesKey = (labels) =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');

export async function startSimulatedTrainingJob({
  base,
  job,
  ranks,
  slowRank = -1,
  gpus,
  joinGpus = true,
  historySeconds = 600,
  gridSeconds = 5,
  liveSeconds = 2,
}) {
  if (gpus.length < ranks) throw new Error(`${ranks} ranks need ${ranks} GPUs, got ${gpus.length}`);
  const spec = { job, ranks, slowRank, gpus, joinGpus };
  const nowSec = Date.now() / 1000;
  const t0 = Math.floor(nowSec) - historySeconds;
  // The history: one request holding every series' samples on the grid.
  const bySeries = new Map();
  for (let t = t0 + gridSeconds; t <= nowSec; t += gridSeconds) {
    for (const [labels, value] of snapshot(spec, t0, t)) {
      const k = seriesKey(labels);
      let s = bySeries.get(k);
      if (!s) bySeries.set(k, (s = { labels, samples: [] }));
      s.samples.push([Math.round(t * 1000), value]);
    }
  }
  await remoteWrite(base, [...bySeries.values()]);
  let lastMs = Math.max(...[...bySeries.values()].map((s) => s.samples[s.samples.length - 1][0]));
  let stopped = false;
  let failure = null;
  const tick = async () => {
    const ms = Date.now();
    if (ms <= lastMs) return;
    lastMs = ms;
    const series = snapshot(spec, t0, ms / 1000).map(([labels, value]) => ({ labels, samples: [[ms, value]] }));
    await remoteWrite(base, series);
  };
  let pending = Promise.resolve();
  const timer = setInterval(() => {
    if (stopped) return;
    pending = pending.then(tick).catch((e) => {
      failure ??= e;
    });
  }, liveSeconds * 1000);
  return {
    job,
    ranks,
    slowRank,
    gpus: gpus.slice(0, ranks),
    /** the first live write that failed, if any (checks report it) */
    failure: () => failure,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pending;
    },
  };
}
