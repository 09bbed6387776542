// Headless Chromium for the UI tests and the benchmark, and a page wrapper
// that records everything the tests treat as a failure.
//
// Contract:
// - loadPlaywright(nodeModules) imports playwright-core from the UI's
//   node_modules (it is a devDependency of ui/package.json; nothing is
//   installed by the tests).
// - launchChromium(playwright, executablePath) starts Debian's chromium
//   headless with a fresh temporary profile (playwright's launch() creates
//   and deletes one per browser) and the flags the project's machines need
//   (no sandbox as root, no GPU, and no background networking: the network is
//   closed, and background requests would only flood refused connections).
// - watchPage(page, origin) records, for that page, every console error, page
//   error (uncaught exception), CSP violation (securitypolicyviolation
//   events, reported from inside the page), failed request (other than
//   requests the page itself aborted, e.g. a superseded query) and HTTP
//   response >= 400, and every request to an origin other than `origin`
//   (the UI must work offline). problems() returns them as strings.
// - waitReady(page, name) waits for main[data-page=name][data-state=ready]
//   and the performance mark gpumon:ready:<name>, as the UI contract promises.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export async function loadPlaywright(nodeModules) {
  const mod = await import(pathToFileURL(join(nodeModules, 'playwright-core', 'index.mjs')).href);
  return mod.default ?? mod;
}

export async function launchChromium(playwright, executablePath) {
  return playwright.chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

// Runs in the page before any of its scripts (injected through the DevTools
// protocol, so the page's own CSP does not block it).
function installCspRecorder() {
  window.__gpumonCspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__gpumonCspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`);
  });
}

export async function watchPage(page, origin, { allowStatus = [] } = {}) {
  const problems = [];
  await page.addInitScript(installCspRecorder);
  page.on('console', (msg) => {
    if (msg.type() === 'error') {
      const where = msg.location();
      problems.push(`console error: ${msg.text()}${where && where.url ? ` (${where.url}:${where.lineNumber})` : ''}`);
    }
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:') && url !== 'about:blank') {
      problems.push(`request outside ${origin}: ${req.method()} ${url}`);
    }
  });
  page.on('requestfailed', (req) => {
    const why = req.failure() ? req.failure().errorText : 'unknown';
    if (why !== 'net::ERR_ABORTED') problems.push(`request failed: ${req.method()} ${req.url()}: ${why}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400 && !allowStatus.includes(res.status())) {
      problems.push(`HTTP ${res.status()}: ${res.request().method()} ${res.url()}`);
    }
  });
  return {
    page,
    async problems() {
      let csp = [];
      try {
        csp = await page.evaluate(() => window.__gpumonCspViolations || []);
      } catch (e) {
        // The page may be closed or navigating; the other records still stand.
      }
      // The same problem repeated (one per panel, say) is listed once, counted.
      const counts = new Map();
      for (const p of [...problems, ...csp.map((v) => `CSP violation: ${v}`)]) counts.set(p, (counts.get(p) || 0) + 1);
      return [...counts].map(([p, n]) => (n > 1 ? `${p} (${n} times)` : p));
    },
  };
}

export async function waitReady(page, name, timeoutMs = 20000) {
  await page.waitForSelector(`main[data-page="${name}"][data-state="ready"]`, { timeout: timeoutMs, state: 'attached' });
  await page.waitForFunction((mark) => performance.getEntriesByName(mark, 'mark').length > 0, `gpumon:ready:${name}`, {
    timeout: timeoutMs,
  });
}
