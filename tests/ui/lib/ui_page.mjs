// Opens a UI page for one check: a new browser context (own cookies, cache
// and history), a watched page (lib/browser.mjs) and helpers to finish it.
//
// Contract: openUi(ctx, server, path, opts) navigates to server.base + path
// and resolves to { page, context, response, finish(name) } once the page
// is ready (main[data-state=ready] and its gpumon:ready mark; `opts.page`
// names the page expected, default the path's first segment). finish(name)
// writes the screenshot <artifacts>/<name>.png, closes the context and
// throws a CheckFailure listing every problem the page had (console errors,
// CSP violations, failed requests...). Call it in a `finally` via
// withUi(), which guarantees the context is closed.
import { join } from 'node:path';
import { waitReady, watchPage } from './browser.mjs';
import { CheckFailure } from './expect.mjs';

const VIEWPORT = { width: 1440, height: 900 };
const ACTION_TIMEOUT_MS = 10000;

export function pageNameOf(path) {
  return path.replace(/^\//, '').split(/[/?#]/)[0] || 'fleet';
}

export async function openUi(ctx, server, path, opts = {}) {
  const context = await ctx.browser.newContext({
    viewport: VIEWPORT,
    httpCredentials: opts.credentials,
  });
  let watcher;
  try {
    const page = await context.newPage();
    // A check waits for the UI with explicit deadlines; an action that cannot
    // find its element fails in seconds rather than playwright's 30 s.
    page.setDefaultTimeout(ACTION_TIMEOUT_MS);
    watcher = await watchPage(page, server.base, { allowStatus: opts.allowStatus });
    const response = await page.goto(`${server.base}${path}`, { waitUntil: 'load' });
    if (opts.waitReady !== false) {
      try {
        await waitReady(page, opts.page || pageNameOf(path), opts.readyTimeoutMs);
      } catch (e) {
        const problems = await watcher.problems();
        const state = await page
          .evaluate(() => {
            const m = document.querySelector('main');
            const panels = [...document.querySelectorAll('[data-panel]')].map((p) => `${p.dataset.panel}=${p.dataset.state}`);
            return m ? `main[data-page=${m.dataset.page}][data-state=${m.dataset.state}] panels: ${panels.join(' ')}` : 'no <main>';
          })
          .catch(() => 'page gone');
        throw new CheckFailure(`${path} never became ready: ${e.message.split('\n')[0]}; ${state}${problems.length ? `; problems: ${problems.join('; ')}` : ''}`);
      }
    }
    const finish = async (name, { screenshot = true } = {}) => {
      try {
        if (screenshot) await page.screenshot({ path: join(ctx.artifacts, `${name}.png`), fullPage: true });
        const problems = await watcher.problems();
        if (problems.length) throw new CheckFailure(`${name} (${page.url()}): ${problems.join('\n')}`);
      } finally {
        await context.close();
      }
    };
    return { page, context, response, watcher, finish };
  } catch (e) {
    await context.close();
    throw e;
  }
}

/** Runs body(ui) on an opened page and always finishes it. */
export async function withUi(ctx, server, path, name, body, opts = {}) {
  const ui = await openUi(ctx, server, path, opts);
  let failure;
  try {
    return await body(ui);
  } catch (e) {
    failure = e;
    throw e;
  } finally {
    try {
      await ui.finish(name);
    } catch (e) {
      // The body's own failure is the more useful message; report both.
      if (!failure) throw e;
      failure.message += `\nand the page had problems: ${e.message}`;
    }
  }
}
