// Notifications end to end (issue 17, docs/notifications.md): a real
// `berth serve` whose driver passes every second, a receiver on 127.0.0.1
// that first fails, an administrator adding the channel on the Admin
// page, and the Health page showing the failed attempt waiting for its
// retry — then, once the receiver recovers, nothing but deliveries.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { startServer, makeUser, launch, artifacts, signIn, admin } from '../support.mjs';

let server, browser, receiver, viewer, administrator;
// What the receiver answers, and what it was sent.
let answer = 500;
const received = [];

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', d => { body += d; });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer === 200 ? 'ok' : 'down for maintenance');
    });
  });
  await new Promise(r => receiver.listen(0, '127.0.0.1', r));
  server = await startServer({ extraArgs: ['--driver-every-s', '1'] });
  viewer = await makeUser(server.base, 'victor', 'viewer');
  administrator = await makeUser(server.base, 'ada', 'admin');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise(r => receiver?.close(r));
});

// Poll `check` until it returns something truthy, within `ms`.
async function eventually(what, check, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 250));
  }
}

test('a channel added on Admin is sent the recommendations; Health shows the failure, then the deliveries', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });

  await signIn(page, server.base, administrator);
  await page.goto(`${server.base}/admin`);
  const url = `http://127.0.0.1:${receiver.address().port}/berth`;
  await page.getByLabel('Channel name').fill('ops-hook');
  await page.getByLabel('Channel kind').selectOption('webhook');
  await page.getByLabel('Channel URL').fill(url);
  await page.getByRole('button', { name: 'Add channel' }).click();
  const secret = page.getByTestId('channel-secret');
  await secret.waitFor();
  assert.match(await secret.textContent(), /whsec_[A-Za-z0-9+/=]+/);
  await page.locator('[data-testid=channels] tr[data-channel=ops-hook]').waitFor();
  await page.screenshot({ path: join(artifacts, 'admin-channels.png'), fullPage: true });

  // The next pass sends every recommendation once; the receiver fails.
  await eventually('a first attempt', () => received.length > 0);
  const first = await eventually('the failure recorded', async () => {
    const list = (await admin(server.base, 'GET', '/api/notification-deliveries')).deliveries;
    return list.length && list.every(d => d.attempts >= 1) ? list : null;
  });
  assert.ok(first.every(d => d.status === 'pending' && d.last_status === 500), JSON.stringify(first));
  assert.ok(received.every(r => r.headers['webhook-signature']?.startsWith('v1,')), 'signed');

  await context.clearCookies();
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/health`);
  const rows = page.locator('table.deliveries tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), first.length);
  const row = await rows.first().textContent();
  assert.match(row, /ops-hook/);
  assert.match(row, /waiting for a retry/);
  assert.match(row, /HTTP 500/);
  assert.match(await page.getByTestId('deliveries').textContent(), new RegExp(`${first.length} not delivered yet`));
  await page.screenshot({ path: join(artifacts, 'health-notifications-failing.png'), fullPage: true });

  // Recovered: the retry (30 s later) delivers each one, once.
  answer = 200;
  const done = await eventually('the retries delivered', async () => {
    const list = (await admin(server.base, 'GET', '/api/notification-deliveries')).deliveries;
    return list.every(d => d.status === 'delivered') ? list : null;
  }, 60_000);
  assert.equal(done.length, first.length);
  assert.ok(done.every(d => d.attempts === 2), JSON.stringify(done));
  const ids = received.map(r => JSON.parse(r.body).data.identity);
  assert.equal(ids.length, 2 * first.length, 'one failed attempt and one delivery each');
  await page.reload();
  await page.locator('table.deliveries tbody tr[data-status=delivered]').first().waitFor();
  assert.equal(await page.locator('table.deliveries tbody tr[data-status=delivered]').count(), first.length);
  await page.screenshot({ path: join(artifacts, 'health-notifications.png'), fullPage: true });
  await context.close();
  assert.deepEqual(problems, [], 'no console errors');
});
