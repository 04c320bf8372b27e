// The self-contained binary (issue 13): `berth serve` started in an empty
// directory with no --site-root serves the web application built into it,
// the sample is seeded for the real clock (fresh today, whatever today
// is), the estate switcher keeps its choice in the address across pages,
// and a stale estate gets a banner.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts, admin, repo, signIn } from '../support.mjs';

let server, browser, operator;

before(async () => {
  server = await startServer({ embedded: true, sampleAt: null });
  operator = await makeUser(server.base, 'oskar', 'operator');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => {
    if (m.type() !== 'error') return;
    const url = m.location()?.url ?? '';
    // This server has no advice driver or deciders configured: their 404s
    // are how the pages learn it.
    if (m.text().startsWith('Failed to load resource') && /\/api\/(deciders|driver)$/.test(url)) return;
    problems.push(`console error: ${m.text()} (${url})`);
  });
  return { page, problems };
}

test('the binary serves its own bundle from an empty directory, compressed and revalidated', async () => {
  assert.match(server.log(), /web application embedded in the binary/, server.log());
  const plain = await fetch(`${server.base}/pkg/berth_bg.wasm`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get('content-type'), 'application/wasm');
  const bytes = new Uint8Array(await plain.arrayBuffer());
  assert.deepEqual([...bytes.slice(0, 4)], [0, 0x61, 0x73, 0x6d], 'a WebAssembly module');
  const onDisk = readFileSync(join(repo, 'target/site/pkg/berth_bg.wasm'));
  assert.equal(bytes.length, onDisk.length, 'the module built by scripts/build-web.sh');
  // fetch() decompresses; the raw header says what was sent.
  const gz = await fetch(`${server.base}/pkg/berth_bg.wasm`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(gz.headers.get('content-encoding'), 'gzip');
  assert.ok(Number(gz.headers.get('content-length')) < onDisk.length / 2, 'the gzip copy is sent');
  assert.equal(gz.headers.get('vary'), 'accept-encoding');
  assert.ok(Buffer.from(await gz.arrayBuffer()).equals(onDisk), 'the gzip copy unpacks to the module');
  // What Chromium sends (to loopback too): the Brotli copy, smaller
  // than the gzip one, unpacking to the same module.
  const br = await fetch(`${server.base}/pkg/berth_bg.wasm`, { headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
  assert.equal(br.headers.get('content-encoding'), 'br');
  assert.equal(br.headers.get('vary'), 'accept-encoding');
  assert.ok(Number(br.headers.get('content-length')) < Number(gz.headers.get('content-length')), 'the Brotli copy is the smaller');
  assert.ok(Buffer.from(await br.arrayBuffer()).equals(onDisk), 'the Brotli copy unpacks to the module');
  const etag = plain.headers.get('etag');
  assert.ok(etag, 'an ETag');
  const again = await fetch(`${server.base}/pkg/berth_bg.wasm`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
  for (const [path, type] of [['/pkg/berth.js', 'text/javascript'], ['/style/berth.css', 'text/css'], ['/favicon.svg', 'image/svg+xml'], ['/world.svg', 'image/svg+xml']]) {
    const r = await fetch(server.base + path);
    assert.equal(r.status, 200, path);
    assert.ok(r.headers.get('content-type').startsWith(type), `${path}: ${r.headers.get('content-type')}`);
  }
  assert.equal((await fetch(`${server.base}/pkg/nothing.js`)).status, 404);
  const api = await fetch(`${server.base}/api/nothing`);
  assert.equal(api.status, 404);
  assert.match(await api.text(), /no route GET \/api\/nothing/);
});

test('signed in, the Placement page hydrates on a sample fresh today, with no stale banner', async () => {
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  // No ?now=: the real clock, the day this test runs.
  await page.goto(`${server.base}/`);
  const moves = page.locator('[data-testid=moves] li.move');
  await moves.first().waitFor();
  assert.ok(await moves.count() >= 1, 'the sample has recommended moves today');
  await page.waitForFunction(() => document.querySelector('[data-testid=provenance]')?.dataset.parity !== 'pending');
  assert.equal(await page.getByTestId('provenance').getAttribute('data-parity'), 'match');
  assert.equal(await page.getByTestId('stale-banner').count(), 0, 'no stale banner on a fresh sample');
  assert.equal(await page.getByTestId('bundle-missing').count(), 0);
  await page.screenshot({ path: join(artifacts, 'selfcontained-placement.png'), fullPage: true });
  // The facts keep their designed classes today: mostly measured.
  await page.getByRole('link', { name: 'Estate', exact: true }).click();
  const badges = page.locator('table .badge');
  await badges.first().waitFor();
  const classes = await badges.evaluateAll(bs => bs.map(b => b.textContent));
  const measured = classes.filter(c => c === 'measured').length;
  assert.ok(measured > classes.length / 2, `most facts measured today: ${JSON.stringify(classes)}`);
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('the estate switcher lists every estate and its choice is kept across pages', async () => {
  const sample = JSON.parse(readFileSync(join(repo, 'examples/estates/sample.json'), 'utf8'));
  sample.name = 'Second estate';
  await admin(server.base, 'POST', '/api/estates?id=second', sample);
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  const switcher = page.getByTestId('estate-switcher');
  await switcher.waitFor();
  const options = await switcher.locator('option').evaluateAll(os => os.map(o => [o.value, o.textContent]));
  assert.deepEqual(options.map(o => o[0]).sort(), ['sample', 'second']);
  assert.ok(options.some(([v, t]) => v === 'second' && t === 'Second estate (second)'), JSON.stringify(options));
  await switcher.selectOption('second');
  await page.waitForURL(/\?estate=second$/);
  await page.locator('[data-testid=moves] li.move').first().waitFor();
  assert.equal(await switcher.inputValue(), 'second');
  // Navigation keeps it.
  await page.getByRole('link', { name: 'Estate', exact: true }).click();
  await page.waitForURL(`${server.base}/estate?estate=second`);
  await page.getByRole('link', { name: 'Policy', exact: true }).click();
  await page.waitForURL(`${server.base}/policy?estate=second`);
  assert.equal(await page.getByTestId('estate-switcher').inputValue(), 'second');
  await page.screenshot({ path: join(artifacts, 'selfcontained-switcher.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('an estate whose newest fact is past the reported window shows a banner', async () => {
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  // Half a year on: nothing has reported since the sample was seeded.
  const later = new Date(Date.now() + 183 * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  await page.goto(`${server.base}/?estate=sample&now=${later}`);
  const banner = page.getByTestId('stale-banner');
  await banner.waitFor();
  assert.match(await banner.textContent(), /newest fact of this estate was observed at .*past the reported window/);
  await page.screenshot({ path: join(artifacts, 'selfcontained-stale-banner.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.context().close();
});
