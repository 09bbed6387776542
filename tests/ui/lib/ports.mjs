// Loopback TCP ports for the servers a test starts.
//
// Contract: freePort() resolves to a port on 127.0.0.1 that was free a moment
// ago. By default the kernel picks it (bind to port 0), as the Python
// integration tests do. GPUMON_TEST_PORTS=LOW-HIGH restricts the choice to a
// range (for machines where ranges are shared out between users); ports are
// then tried in order from a per-process random start, and a port handed out
// once is not handed out again by this process.
import { createServer } from 'node:net';

const handedOut = new Set();

function tryBind(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    srv.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const got = srv.address().port;
      srv.close(() => resolve(got));
    });
  });
}

function configuredRange() {
  const spec = process.env.GPUMON_TEST_PORTS;
  if (!spec) return null;
  const m = /^(\d+)-(\d+)$/.exec(spec.trim());
  if (!m || Number(m[1]) > Number(m[2])) throw new Error(`GPUMON_TEST_PORTS must be LOW-HIGH, got ${spec}`);
  return [Number(m[1]), Number(m[2])];
}

export async function freePort() {
  const range = configuredRange();
  if (!range) {
    const port = await tryBind(0);
    if (port === null) throw new Error('cannot bind a loopback port');
    return port;
  }
  const [low, high] = range;
  const size = high - low + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = low + ((start + i) % size);
    if (handedOut.has(port)) continue;
    if ((await tryBind(port)) !== null) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in GPUMON_TEST_PORTS=${low}-${high}`);
}
