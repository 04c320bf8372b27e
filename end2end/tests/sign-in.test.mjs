// Sign-in refusals in the words of the form (issue 35): its own server, so
// the attempts it provokes on purpose do not use up the sign-in rate limit
// (10 at once per address) of the other files' servers.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts } from '../support.mjs';

let server, browser, viewer, page, problems;

before(async () => {
  server = await startServer();
  viewer = await makeUser(server.base, 'victor', 'viewer');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

beforeEach(async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location()?.url ?? ''})`); });
});

afterEach(async () => {
  await page.context().close();
  assert.deepEqual(problems, [], 'no console errors');
});

test('sign-in says in plain words when what was typed is not recognised, not that a role is missing', async () => {
  await page.goto(`${server.base}/login`);
  await page.getByLabel('API token').fill('not-a-token-anyone-made');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.locator('fieldset.login [role=alert]');
  await alert.waitFor();
  const words = await alert.textContent();
  assert.match(words, /^Not recognised: no user has that name and password, and no live token is that one\./);
  assert.doesNotMatch(words, /role/);
  await page.getByLabel('API token').fill('');
  await page.getByLabel('User name').fill(viewer.name);
  await page.getByLabel('Password', { exact: true }).fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForFunction(() => document.querySelector('fieldset.login button[type=submit]')?.textContent === 'Sign in');
  assert.match(await alert.textContent(), /^Not recognised/);
  await page.screenshot({ path: join(artifacts, 'login-not-recognised.png') });
  // Both refusals were provoked on purpose; the browser logs every 4xx.
  problems = problems.filter(p => !(p.includes('status of 403') && p.includes('/api/session')));
});
