// The advice history on Placement (issue 17, item 4): a real server whose
// driver passes every second, the sample changed through the API between
// passes (a policy change, a flow weight, a flow's MB/s), so the driver
// leaves several snapshots; the page draws them and says what changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts, signIn, admin, SAMPLE_NOW } from '../support.mjs';

let server, browser, viewer;

before(async () => {
  // A pass a second: each change below is snapshotted within seconds.
  server = await startServer({ extraArgs: ['--driver-every-s', '1'] });
  viewer = await makeUser(server.base, 'hilda', 'viewer');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const snapshots = async () =>
  (await admin(server.base, 'GET', '/api/estates/sample/advice-snapshots')).snapshots;

/// Wait until the driver has made `n` snapshots; the newest's advice.
async function snapshotCount(n) {
  // 20 s: twenty passes of a 1 s driver, each well under a second here.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = await snapshots();
    if (s.length >= n) return s[0].result;
    if (Date.now() > deadline) throw new Error(`the driver made ${s.length} snapshots in 20 s, ${n} expected`);
    await new Promise(r => setTimeout(r, 200));
  }
}

/// The first recommended single move's first deciding fact of `kind`
/// (`weight` or `mb_s`), as [from, to, key, value].
function flowFact(advice, kind) {
  for (const m of advice.moves) {
    if (m.evidence || m.group) continue;
    const f = m.facts.find(f => f.fact.startsWith('flow ') && f.fact.endsWith(` ${kind}`));
    if (f) {
      const [from, to] = f.fact.slice('flow '.length, -(kind.length + 1)).split('→');
      return [from, to, f.fact, f.value, `${m.service}|${m.from}|${m.to}`];
    }
  }
  return null;
}

test('Placement charts the snapshots and lists what changed since the last', async () => {
  await snapshotCount(1);
  await admin(server.base, 'PUT', '/api/estates/sample/policy', { min_gain_points: 7.5 });
  const second = await snapshotCount(2);
  const traffic = flowFact(second, 'mb_s');
  if (traffic) {
    await admin(server.base, 'POST', '/api/estates/sample/facts', {
      updates: [{ fact: 'flow_mb_s', from: traffic[0], to: traffic[1], value: traffic[3] * 3, class: 'measured' }],
    });
  } else {
    await admin(server.base, 'PUT', '/api/estates/sample/policy', { min_gain_points: 6 });
  }
  const third = await snapshotCount(3);
  const weight = flowFact(third, 'weight');
  assert.ok(weight, 'a recommendation rests on a flow weight');
  const [from, to, key, oldWeight, identity] = weight;
  await admin(server.base, 'POST', '/api/estates/sample/facts', {
    updates: [{ fact: 'flow_weight', from, to, value: 0, class: 'measured' }],
  });
  await snapshotCount(4);

  const history = await admin(server.base, 'GET', '/api/estates/sample/history');
  assert.equal(history.points.length, 4);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/?now=${SAMPLE_NOW}`);
  const chart = page.getByTestId('history-chart');
  await chart.waitFor();
  assert.equal(await chart.getAttribute('data-points'), '4');
  // Three series, each a line or a step, under its title, with a legend.
  assert.equal(await chart.locator('path.series').count(), 3);
  const svg = await chart.locator('svg').textContent();
  for (const title of ['Cost (points)', 'Cross-site traffic (MB/s)', 'Open recommendations', 'UTC']) {
    assert.ok(svg.includes(title), `the chart says ${title}: ${svg}`);
  }
  assert.match(await chart.locator('svg').getAttribute('aria-label'), /^Over 4 snapshots from .* open recommendations \d+ → \d+\.$/);
  // The three series in the legend, then a key for each kind of
  // annotation drawn: the policy change and the new estate versions.
  const legend = await page.getByTestId('history-legend').locator('li').allTextContents();
  assert.deepEqual(legend.slice(0, 3), ['cost of the estate as it stood (points)', 'traffic between sites (MB/s)', 'recommendations open (count)']);
  assert.ok(legend.includes('a policy change') && legend.includes('a new estate version'), legend.join(' | '));
  // The policy change is a marker on the chart: who, what, when on hover
  // (its <title>), and its effect on the advice across it.
  const policyMark = chart.locator('g.annot-policy').first();
  assert.ok(await chart.locator('g.annot-policy').count() >= 1);
  const hover = await policyMark.locator('title').textContent();
  // The field in words, as the Policy page lists it (its meaning, its
  // name there, its unit), not the audit's JSON pointer.
  assert.match(hover, /^Policy changed by \S+ at \d{4}-\d\d-\d\dT[\d:.]+Z: a move must gain at least this many points \(min_gain_points\): 2(\.0)? → 7\.5 points($|\. Across it: the estate cost [\d.]+ → [\d.]+ points)/);
  assert.ok(!hover.includes('/min_gain_points'), hover);
  // ("Across it" needs a snapshot on each side of the change, to the
  // second; the next test checks the effect where it waits for both.)
  assert.equal(await policyMark.locator('text').textContent(), 'policy');
  // Each facts post made a new estate version: a marker each, v2 → …
  assert.ok(await chart.locator('g.annot-estate').count() >= 1);
  assert.match(await page.getByTestId('history-annotations').textContent(), /Policy changed by/);
  assert.equal(await page.getByTestId('history-table').locator('tbody tr').count(), 4);

  // What changed: the move that rested on the weight is gone (or kept
  // with the weight changed), the weight shown old → new.
  const changed = page.getByTestId('what-changed');
  const item = changed.locator(`li[data-identity="${identity}"]`);
  await item.waitFor();
  const text = await item.textContent();
  assert.ok(text.includes(key), `${key} among the facts: ${text}`);
  const old = Number(oldWeight).toFixed(2);
  assert.ok(text.includes(`${old} (`) && text.includes('→'), `old weight ${old} shown: ${text}`);
  const counts = {};
  for (const k of ['appeared', 'disappeared', 'changed']) {
    counts[k] = Number(await page.getByTestId(`changes-${k}`).getAttribute('data-count'));
    assert.equal(counts[k], history.changes[k].length, k);
  }

  await page.getByTestId('history').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, 'placement-history.png'), fullPage: true });
  await page.getByTestId('history').screenshot({ path: join(artifacts, 'placement-history-section.png') });
  // On a phone: the chart scales down and stays inside the page.
  await page.setViewportSize({ width: 390, height: 844 });
  const box = await chart.locator('svg').boundingBox();
  assert.ok(box.width <= 390 && box.width > 300, `chart ${box.width} px wide at 390`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(overflow <= 390, `the page scrolls sideways at 390 px: ${overflow}`);
  await page.getByTestId('history').screenshot({ path: join(artifacts, 'placement-history-390.png') });
  await context.close();
  assert.deepEqual(problems, [], 'no console errors');
});

test('a policy change is a marker, and "What changed" names it with its effect on the advice', async () => {
  const n = (await snapshots()).length;
  await admin(server.base, 'PUT', '/api/estates/sample/policy', { min_gain_points: 7.5, cross_site_weight: 16 });
  await snapshotCount(n + 1);
  const history = await admin(server.base, 'GET', '/api/estates/sample/history');
  const [b, a] = history.points.slice(-2);
  assert.notEqual(b.policy_digest, a.policy_digest, 'the newest snapshot is of the new policy');
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/?now=${SAMPLE_NOW}`);
  const chart = page.getByTestId('history-chart');
  await chart.waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=history-chart] g.annot-policy').length === 2);
  const last = await chart.locator('g.annot-policy').last().locator('title').textContent();
  assert.match(last, /cost of traffic whose two ends are on different sites \(cross_site_weight\): 8(\.0)? → 16(\.0)? points per MB\/s\. Across it: /);
  assert.ok(!last.includes(': /'), last);
  // In "What changed": the change between the two newest snapshots and
  // its effect, the figures those snapshots hold.
  const causes = page.getByTestId('changes-causes');
  await causes.waitFor();
  const policy = await causes.locator('li[data-kind=policy]').textContent();
  const effect = `Across it: the estate cost ${b.cost.toFixed(1)} → ${a.cost.toFixed(1)} points, cross-site traffic ${b.cross_site_mb_s.toFixed(2)} → ${a.cross_site_mb_s.toFixed(2)} MB/s, open recommendations ${b.open} → ${a.open}`;
  assert.ok(policy.includes('cross_site_weight') && policy.includes(effect), `${policy}\nexpected: ${effect}`);
  await page.getByTestId('history').screenshot({ path: join(artifacts, 'placement-history-policy.png') });
  await context.close();
  assert.deepEqual(problems, [], 'no console errors');
});

test('with fewer than two snapshots the page says so plainly', async () => {
  // A new estate, never changed: the driver makes at most one snapshot
  // of it, however many passes run.
  const doc = await admin(server.base, 'GET', '/api/estates/sample/file');
  doc.name = 'Short history';
  await admin(server.base, 'POST', '/api/estates?id=short', doc);
  const h = await admin(server.base, 'GET', '/api/estates/short/history');
  assert.ok(h.points.length < 2);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/?estate=short&now=${SAMPLE_NOW}`);
  const short = page.getByTestId('history-short');
  await short.waitFor();
  assert.match(await short.textContent(), /a history needs two/);
  await context.close();
});
