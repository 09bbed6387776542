// Starts `gpumon server` for a browser test or benchmark: a fresh temporary
// --data directory, a free loopback port, and a wait until it serves.
//
// Contract: startGpumonServer({ gpumon, args }) resolves to
// { child, port, base, dataDir, stop() } once GET /-/ready answers
// `readyStatus` (200, or 401 behind basic auth). `args` are the server flags
// other than --listen and --data. A start that loses its port to another
// process between the probe and the bind is retried on a new port. stop()
// ends the process and removes the data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.mjs';
import { freePort } from './ports.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls url until it answers `status`; throws early if `child` exits. */
export async function waitHttp(url, { child, status = 200, timeoutMs = 30000, headers = {} } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child && !child.running()) throw new Error(`${child.name} exited before ${url} answered\n${child.describe()}`);
    try {
      const r = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === status) return r;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = e.message;
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs / 1000} s (last: ${last})${child ? `\n${child.describe()}` : ''}`);
}

export async function startGpumonServer({ gpumon, args, readyStatus = 200, name = 'gpumon server', env }) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'gpumon-ui-data-'));
    const child = new Child([gpumon, 'server', '--listen', `127.0.0.1:${port}`, '--data', dataDir, ...args], { name, env });
    const base = `http://127.0.0.1:${port}`;
    const stop = async () => {
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
    try {
      await waitHttp(`${base}/-/ready`, { child, status: readyStatus });
      return { child, port, base, dataDir, stop };
    } catch (e) {
      await stop();
      if (/address already in use/i.test(child.err) && attempt < 2) continue;
      throw e;
    }
  }
  throw new Error('unreachable');
}
