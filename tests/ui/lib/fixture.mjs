// The servers every browser check runs against, started together.
//
// Contract: startFixture({ gpumon, sourceDir, tmp }) resolves, once every
// server has collected all 8 GPUs, to { main, hot, auth, forecastGpu,
// hotGpu, alertName, runbookUrl, user, password, stop() }; each server is
// { base, api (lib/prom_api.mjs), child, ... } (lib/gpumon_server.mjs):
// - main: `gpumon server --simulate h200x8` with the rule pack, a rule of our
//   own that fires on every GPU at its first evaluation (ALWAYS_FIRING, with
//   a runbook_url), 1 s collection, and GPU `forecastGpu` in a thermal
//   runaway slow enough (SPEED_MAIN) that its HBM is still climbing when the
//   pack's 30 s forecast rules first record a time to slowdown (45-75 s
//   after the start, depending on where the group's evaluations fall) and
//   for a while after (it reaches the limit about 120 s after the start);
// - hot: the same without our rule (its warning alerts on every GPU would
//   be all the Fleet page shows), with GPU `hotGpu` running away fast
//   (SPEED_HOT) so that its HBM is within the rule pack's warning margin of
//   its limit about 20 s after the start: the Fleet page must single it out;
// - auth: a server behind basic auth (web config with a bcrypt hash of
//   `password` for `user`).
// The main server also takes remote write: `training` is a SIMULATED
// training job (lib/training_job.mjs) written into it, 4 ranks on its first
// 4 GPUs (joined by hostname + gpu), rank `training.slowRank` the straggler,
// and `trainingOther` a second, 2-rank job without GPU labels (its nodes'
// GPUs stand in) and without a straggler.
// Every server writes to its own temporary --data directory; stop() ends
// them all.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PromApi } from './prom_api.mjs';
import { startGpumonServer } from './gpumon_server.mjs';
import { gpusOf } from './fleet_truth.mjs';
import { startSimulatedTrainingJob } from './training_job.mjs';

export const ALWAYS_FIRING = 'GpumonUiTestAlwaysFiring';
export const RUNBOOK_URL = 'https://runbooks.invalid/gpumon-ui-test/GpumonUiTestAlwaysFiring';
// Simulated seconds per real second.
const SPEED_MAIN = 10;
const SPEED_HOT = 30;

// A bcrypt ($2b$, cost 4) hash of PASSWORD, made once with libcrypt's
// crypt(3); the server must verify the password against it.
const USER = 'ui-test';
const PASSWORD = 'ui-test-password';
const PASSWORD_BCRYPT = '$2b$04$bNMjUUBmfPjA4boSqeREMOVPWZqUlupOqTK8zBZGwTj.Hs7yRwSU6';

function writeAlwaysFiringRules(path) {
  writeFileSync(
    path,
    [
      'groups:',
      '  - name: gpumon-ui-test',
      '    interval: 1s',
      '    rules:',
      `      - alert: ${ALWAYS_FIRING}`,
      '        expr: gpu_utilization_ratio >= 0',
      '        for: 0s',
      '        labels:',
      '          severity: warning',
      '        annotations:',
      '          summary: UI test alert on GPU {{ $labels.gpu }}',
      `          runbook_url: ${RUNBOOK_URL}`,
      '',
    ].join('\n'),
  );
}

async function waitForGpus(server, want) {
  const deadline = Date.now() + 20000;
  for (;;) {
    const got = await server.api.scalar('count(gpu_info)').catch(() => NaN);
    if (got === want) return;
    if (Date.now() > deadline) throw new Error(`${server.child.name} holds ${got} GPUs after 20 s, expected ${want}\n${server.child.describe()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startFixture({ gpumon, sourceDir, tmp }) {
  const rules = join(tmp, 'ui-test.rules.yml');
  writeAlwaysFiringRules(rules);
  const web = join(tmp, 'web.yml');
  writeFileSync(web, `basic_auth_users:\n  ${USER}: ${PASSWORD_BCRYPT}\n`);
  const pack = join(sourceDir, 'rules', '*.rules.yml');
  const forecastGpu = '5';
  const hotGpu = '2';
  const common = ['--simulate', 'h200x8', '--rules', pack, '--local.interval', '1s'];
  const started = await Promise.allSettled([
    startGpumonServer({
      gpumon,
      name: 'main server',
      args: [...common, '--web.enable-remote-write-receiver', '--rules', rules, '--scenario', `thermal-runaway:gpu=${forecastGpu}:start=0s:time=20m`, '--speed', String(SPEED_MAIN)],
    }),
    startGpumonServer({
      gpumon,
      name: 'hot server',
      args: [...common, '--scenario', `thermal-runaway:gpu=${hotGpu}:start=0s:time=10m`, '--speed', String(SPEED_HOT)],
    }),
    startGpumonServer({
      gpumon,
      name: 'auth server',
      args: ['--simulate', 'h200x8', '--local.interval', '1s', '--web.config.file', web],
      readyStatus: 401,
    }),
  ]);
  const servers = started.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const jobs = [];
  const stop = async () => {
    await Promise.all(jobs.map((j) => j.stop()));
    await Promise.all(servers.map((s) => s.stop()));
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const [main, hot, auth] = servers;
  for (const s of servers) s.api = new PromApi(s.base);
  auth.api = new PromApi(auth.base, { user: USER, password: PASSWORD });
  try {
    // Every check may assume that each GPU has been collected once.
    await Promise.all(servers.map((s) => waitForGpus(s, 8)));
    const gpus = await gpusOf(main.api);
    jobs.push(await startSimulatedTrainingJob({ base: main.base, job: 'simulated-llm-pretrain', ranks: 4, slowRank: 3, gpus }));
    jobs.push(await startSimulatedTrainingJob({ base: main.base, job: 'simulated-finetune', ranks: 2, gpus: gpus.slice(4), joinGpus: false }));
  } catch (e) {
    await stop();
    throw e;
  }
  const [training, trainingOther] = jobs;
  return {
    main,
    hot,
    auth,
    forecastGpu,
    hotGpu,
    alertName: ALWAYS_FIRING,
    runbookUrl: RUNBOOK_URL,
    user: USER,
    password: PASSWORD,
    training,
    trainingOther,
    stop,
  };
}
