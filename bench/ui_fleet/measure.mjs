// One page load measured in headless Chromium.
//
// Contract: measureLoad(context, url, readiness) opens a new page in
// `context`, navigates to url and resolves, once the page is ready, to
// { readyMs, requests, transferBytes, slowestApiMs, heapBytes }:
// - readyMs: milliseconds from navigation start (performance.timeOrigin) to
//   readiness. readiness is either { mark: 'gpumon:ready:fleet' } (the
//   UI's own performance mark, placed when every panel in view finished) or
//   { predicate: fn, arg } (a function run in the page on every animation
//   frame until it returns performance.now(), and false before, for pages
//   without such a mark, e.g. Prometheus' UI; the time is that frame's).
// - requests / transferBytes: the navigation and every resource fetched up to
//   readiness, from the Resource Timing API (transferSize: bytes on the wire
//   including headers, 0 for a memory- or disk-cache hit).
// - slowestApiMs: the longest /api/v1/ request among them, start to last
//   byte (NaN when there is none).
// - heapBytes: the page's used JS heap after a forced garbage collection
//   (DevTools protocol Runtime.getHeapUsage), i.e. what the page keeps.
// readiness.verify, when given, runs in the page once it is ready (with
// readiness.arg) and returns null, or what is wrong with what it shows: the
// load then fails, so a page that is fast because it drew nothing is caught.
// The page is closed afterwards; the context (and its HTTP cache) is the
// caller's: a fresh context is a cold load, a reused one a warm load.

async function waitForMark(page, mark, timeoutMs) {
  const handle = await page.waitForFunction(
    (name) => {
      const e = performance.getEntriesByName(name, 'mark')[0];
      return e ? e.startTime : false;
    },
    mark,
    { timeout: timeoutMs, polling: 50 },
  );
  return handle.jsonValue();
}

// The predicate is sent through the DevTools protocol, so the page's CSP
// (no eval) does not apply to it.
async function waitForPredicate(page, predicate, arg, timeoutMs) {
  const handle = await page.waitForFunction(predicate, arg, { timeout: timeoutMs, polling: 'raf' });
  return handle.jsonValue();
}

export async function measureLoad(context, url, readiness, { timeoutMs = 60000 } = {}) {
  const page = await context.newPage();
  try {
    await page.goto(url, { waitUntil: 'commit', timeout: timeoutMs });
    const readyMs = readiness.mark
      ? await waitForMark(page, readiness.mark, timeoutMs)
      : await waitForPredicate(page, readiness.predicate, readiness.arg, timeoutMs);
    const traffic = await page.evaluate((until) => {
      const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].filter(
        (e) => e.startTime <= until,
      );
      // The slowest API answer (request start to last byte): how much of
      // the time to ready the server's queries take.
      const api = entries.filter((e) => /\/api\/v1\//.test(e.name)).map((e) => e.responseEnd - e.startTime);
      return {
        requests: entries.length,
        transferBytes: entries.reduce((n, e) => n + (e.transferSize || 0), 0),
        slowestApiMs: api.length ? Math.max(...api) : NaN,
      };
    }, readyMs);
    if (readiness.verify) {
      const wrong = await page.evaluate(readiness.verify, readiness.arg);
      if (wrong) throw new Error(`${url}: ready, but ${wrong}`);
    }
    const cdp = await context.newCDPSession(page);
    await cdp.send('HeapProfiler.collectGarbage');
    const heap = await cdp.send('Runtime.getHeapUsage');
    await cdp.detach();
    return { readyMs, ...traffic, heapBytes: heap.usedSize };
  } finally {
    await page.close();
  }
}
