// Stale evidence is never drawn as fresh (issue 34 item 8): wherever the
// Estate page draws a fact — a cluster's capacity bar, a link on the map,
// a flow on the service graph, the facts table — a fact past its class's
// staleness window is marked, with its class and age on hover. A real
// server, Debian's Chromium, the sample estate at its instant; which facts
// are stale is worked out here from the estate file and the policy's
// windows (docs/advice.md §2), not written into the test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts, signIn, admin, SAMPLE_NOW as NOW } from '../support.mjs';

let server, browser, viewer, estate, policy;

before(async () => {
  server = await startServer();
  viewer = await makeUser(server.base, 'stella', 'viewer');
  browser = await launch();
  estate = await admin(server.base, 'GET', '/api/estates/sample/file');
  ({ policy } = await admin(server.base, 'GET', '/api/estates/sample/policy'));
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const seconds = t => Date.parse(t) / 1000;
const now = seconds(NOW);
const order = ['measured', 'reported', 'inferred', 'guessed'];

/// The class a fact counts as at `now` (docs/advice.md §2: windows
/// cumulative from the observation, a stored class starting at its own
/// window); null for a fact without a time or a value.
function classNow(f) {
  if (f === null || typeof f !== 'object' || f.value === null || !f.observed_at) return null;
  const w = policy.staleness;
  const ends = { measured: w.measured_s, reported: w.measured_s + w.reported_s, inferred: w.measured_s + w.reported_s + w.inferred_s };
  const start = { measured: 0, reported: ends.measured, inferred: ends.reported, guessed: Infinity }[f.class];
  const age = Math.max(0, now - seconds(f.observed_at)) + start;
  return order.find(c => c === 'guessed' || age < ends[c]);
}
const stale = f => { const c = classNow(f); return c !== null && c !== f.class; };
const hours = f => Math.floor((now - seconds(f.observed_at)) / 3600);
/// A fact's age as the page writes it (web/src/pages/mod.rs `age`).
const ageWords = f => {
  const s = Math.max(0, now - seconds(f.observed_at));
  return s < 120 ? `${s} s` : s < 7200 ? `${Math.floor(s / 60)} min` : s < 172800 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86400)} d`;
};

test('capacity bars, map links and graph lines mark stale facts, with class and age on hover', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/estate?now=${NOW}`);
  const table = page.getByTestId('clusters');
  await table.locator('tbody tr').first().waitFor();

  // Capacity: c-pdx-1's CPU was measured 38 h before the sample's instant.
  const pdx = estate.clusters.find(c => c.id === 'c-pdx-1');
  assert.ok(stale(pdx.cpu_free), 'c-pdx-1 capacity is stale at the sample instant');
  assert.equal(hours(pdx.cpu_free), 38);
  let checked = 0;
  for (const c of estate.clusters) {
    const bar = table.locator('tbody tr').filter({ has: page.locator(`th:text-is("${c.id}")`) }).locator('.loadbar').first();
    const f = c.cpu_free;
    if (f === null || f === undefined || (typeof f === 'object' && f.value === null)) continue;
    const want = stale(f);
    assert.equal(await bar.getAttribute('data-stale'), String(want), `${c.id} CPU`);
    const cls = await bar.getAttribute('class');
    assert.equal(/\bstale\b/.test(cls), want, `${c.id}: class "${cls}"`);
    if (want) {
      assert.match(await bar.locator('em').textContent(), new RegExp(`^CPU \\d+% \\(stale: ${ageWords(f)} old\\)$`));
      assert.equal(await bar.getAttribute('title'), `CPU free: ${f.class}, ${ageWords(f)} old; stale: counts as ${classNow(f)} now`);
      checked++;
    } else {
      assert.match(await bar.locator('em').textContent(), /\(\w+ class\)$/);
    }
  }
  assert.ok(checked >= 1);

  // Map links: faded when stale, class and age in the hover text.
  const map = page.getByTestId('map');
  let staleLinks = 0, freshLinks = 0;
  for (const l of estate.links) {
    const f = l.rtt_ms;
    if (f === null || typeof f !== 'object' || !f.observed_at) continue;
    const line = map.locator(`line.link[data-link="${l.a}-${l.b}"], line.link[data-link="${l.b}-${l.a}"]`);
    if (await line.count() === 0) continue; // a site without coordinates
    const want = stale(f);
    assert.equal(await line.getAttribute('data-stale'), String(want), `link ${l.a}-${l.b}`);
    const title = await line.locator('title').textContent();
    if (want) {
      staleLinks++;
      assert.match(title, new RegExp(`\\(${f.class}, \\d+ [hd] old; stale: counts as ${classNow(f)} now\\)$`), title);
    } else {
      freshLinks++;
      assert.doesNotMatch(title, /stale/);
    }
  }
  assert.ok(staleLinks >= 1 && freshLinks >= 1, `${staleLinks} stale, ${freshLinks} fresh links checked`);

  // The graph: a line over a flow whose weight or MB/s is stale says so.
  const staleFlows = estate.flows.filter(f => stale(f.weight) || stale(f.mb_s));
  assert.ok(staleFlows.length >= 1);
  const graph = page.getByTestId('graph');
  await graph.locator('g.g-svc').first().waitFor();
  const edges = await graph.locator('line.g-edge').evaluateAll(ls => ls.map(l => ({ stale: l.dataset.stale, title: l.querySelector('title').textContent, cls: l.getAttribute('class') })));
  let staleEdges = 0;
  for (const f of staleFlows) {
    const e = edges.find(e => e.title.startsWith(`${f.from} — ${f.to}:`) || e.title.startsWith(`${f.to} — ${f.from}:`));
    if (!e) continue; // summed into a collapsed cluster's line
    staleEdges++;
    assert.equal(e.stale, 'true', e.title);
    assert.match(e.cls, /\bstale\b/);
    assert.match(e.title, /; flow \S+→\S+ (weight|mb_s) [\d.]+ \((measured|reported|inferred), \d+ [hd] old; stale\)/, e.title);
  }
  assert.ok(staleEdges >= 1, 'a stale flow drawn as a line');
  assert.ok(edges.some(e => e.stale === 'false'), 'fresh lines stay unmarked');

  // A collapsed cluster's summed line: close the cluster of a stale
  // flow's caller (the flow leaves it), and every line then drawn is
  // stale exactly when a flow summed into it has a stale weight or MB/s,
  // which its hover names with class and age.
  const clusterOf = Object.fromEntries(estate.services.map(s => [s.id, s.cluster]));
  const leaving = staleFlows.find(f => clusterOf[f.from] !== clusterOf[f.to]);
  assert.ok(leaving, 'a stale flow between two clusters');
  const closed = clusterOf[leaving.from];
  const g = graph.locator(`g.g-cluster[data-cluster="${closed}"]`);
  if (await g.getAttribute('data-expanded') === 'true') {
    await graph.getByRole('button', { name: `Close cluster ${closed}`, exact: true }).click();
  }
  await graph.locator(`g.g-cluster[data-cluster="${closed}"][data-expanded=false]`).waitFor();
  const open = new Set(await graph.locator('g.g-cluster[data-expanded=true]').evaluateAll(gs => gs.map(g => g.dataset.cluster)));
  const node = s => (open.has(clusterOf[s]) ? s : `cluster:${clusterOf[s]}`);
  const lines = await graph.locator('line.g-edge').evaluateAll(ls => ls.map(l => ({ stale: l.dataset.stale, title: l.querySelector('title').textContent, cls: l.getAttribute('class') })));
  let summedStale = 0, summedFresh = 0;
  for (const l of lines) {
    // "a — b: weight …", a and b a service or "cluster:ID".
    const sep = l.title.indexOf(' — ');
    const [a, b] = [l.title.slice(0, sep), l.title.slice(sep + 3, l.title.indexOf(': weight'))];
    if (!a.startsWith('cluster:') && !b.startsWith('cluster:')) continue;
    const summed = estate.flows.filter(f => {
      const [x, y] = [node(f.from), node(f.to)];
      return (x === a && y === b) || (x === b && y === a);
    });
    assert.ok(summed.length >= 1, `flows of ${l.title}`);
    const want = summed.some(f => stale(f.weight) || stale(f.mb_s));
    assert.equal(l.stale, String(want), l.title);
    assert.equal(/\bstale\b/.test(l.cls), want, l.cls);
    if (want) {
      summedStale++;
      assert.match(l.title, /; flow \S+→\S+ (weight|mb_s) [\d.]+ \((measured|reported|inferred), \d+ (s|min|h|d) old; stale\)/, l.title);
    } else {
      summedFresh++;
      assert.doesNotMatch(l.title, /stale/);
    }
  }
  assert.ok(summedStale >= 1, `a collapsed cluster's summed line is marked stale (${summedStale} stale, ${summedFresh} fresh)`);
  await graph.screenshot({ path: join(artifacts, 'estate-graph-collapsed-stale.png') });

  // The facts table: the same capacity, stale, with its class and age.
  await page.getByLabel('Age', { exact: true }).selectOption('stale');
  const row = page.locator('tr.stale').filter({ hasText: 'c-pdx-1 cpu_free' });
  await row.waitFor();
  assert.match(await row.textContent(), /measured.*38 h \(stale\)/);

  await page.getByTestId('clusters').screenshot({ path: join(artifacts, 'estate-stale-capacity.png') });
  await context.close();
  assert.deepEqual(problems, [], 'no console errors');
});
