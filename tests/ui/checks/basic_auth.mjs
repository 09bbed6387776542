// Behind basic auth (--web.config.file with basic_auth_users) the UI is
// refused without credentials (401 on the page itself, nothing rendered) and
// loads, queries and renders with them.
import { expect } from '../lib/expect.mjs';
import { withUi } from '../lib/ui_page.mjs';

const authHeader = (user, password) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

export const BASIC_AUTH_CHECKS = [
  {
    name: 'basic-auth',
    async run(ctx) {
      const { auth, user, password } = ctx.fixture;
      // The page, an asset and the API all refuse an anonymous client...
      const index = await fetch(`${auth.base}/fleet`);
      const asset = (/src="(\/assets\/[^"]+)"/.exec(await (await fetch(`${auth.base}/fleet`, { headers: authHeader(user, password) })).text()) || [])[1];
      expect(asset, 'with credentials /fleet is not the UI page (no /assets/ script in it)');
      for (const [path, r] of [['/fleet', index], [asset, await fetch(`${auth.base}${asset}`)], ['/api/v1/query?query=up', await fetch(`${auth.base}/api/v1/query?query=up`)]]) {
        expect(r.status === 401, `without credentials ${path} answered ${r.status}, expected 401`);
        expect(/^basic/i.test(r.headers.get('www-authenticate') || ''), `the 401 for ${path} has no Basic challenge`);
      }
      // ...and a browser without credentials shows nothing (Chromium turns
      // the challenge it cannot answer into a failed navigation).
      const anonymous = await ctx.browser.newContext();
      try {
        const page = await anonymous.newPage();
        const r = await page.goto(`${auth.base}/fleet`).catch((e) => e);
        const refused = r instanceof Error ? /ERR_INVALID_AUTH_CREDENTIALS/.test(r.message) : r.status() === 401;
        expect(refused, `a browser without credentials got ${r instanceof Error ? r.message.split('\n')[0] : `HTTP ${r.status()}`}`);
        if (!(r instanceof Error)) {
          await page.waitForLoadState('load');
          expect(!(await page.$('main')), 'without credentials the page rendered a <main>');
        }
      } finally {
        await anonymous.close();
      }
      await withUi(
        ctx,
        auth,
        '/fleet',
        'basic-auth-fleet',
        async ({ page }) => {
          const cells = (await page.$$('[data-testid=gpu-cell]')).length;
          expect(cells === 8, `with credentials the Fleet page shows ${cells} GPU cells, expected 8`);
        },
        { credentials: { username: user, password, send: 'always' } },
      );
    },
  },
];
