// The browser half of scripts/check-fresh-start.sh: sign in with the
// bootstrap token a fresh `make run` printed, open Placement, wait for it
// to hydrate and show advice whose digest matches the server's.
import { launch } from './support.mjs';

const base = process.env.BERTH_BASE;
const token = process.env.BERTH_TOKEN;
if (!base || !token) throw new Error('BERTH_BASE and BERTH_TOKEN are required');
const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  await page.goto(`${base}/login`);
  const r = await page.evaluate(async t => {
    const res = await fetch('/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: t }) });
    return res.status;
  }, token);
  if (r !== 200) throw new Error(`sign-in with the bootstrap token: HTTP ${r}`);
  await page.goto(`${base}/`);
  await page.locator('[data-testid=moves] li.move').first().waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=provenance]')?.dataset.parity === 'match', null, { timeout: 60_000 });
  const moves = await page.locator('[data-testid=moves] li.move').count();
  await page.screenshot({ path: process.env.ARTIFACT, fullPage: true });
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  console.log(`Placement hydrated: ${moves} moves, parity match; screenshot ${process.env.ARTIFACT}`);
} finally {
  await browser.close();
}
