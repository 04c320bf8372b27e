// Applied moves on Placement (issue 36): a real server whose driver passes
// every second, the sample seeded for the real clock; the first three
// single moves the driver's advice recommends are carried out (one estate
// upload), the driver snapshots the estate again, and an agent posts
// every fact the outcomes wait for. Seen two hours later (?now=),
// Placement shows each move with predicted and observed points (the
// server's figures, not written into the test), the calibration of the
// three in Applied moves and in the Why of a recommendation still open,
// and the history chart marks the upload between the snapshot before it
// and the one after.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startServer, makeUser, launch, artifacts, signIn, admin } from '../support.mjs';

const shots = process.env.BERTH_SHOTS || '/work/notes/shots';
let server, browser, viewer;

// The real clock, to the minute: the sample's facts are fresh now, so its
// advice recommends moves on measured facts.
const seededAt = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString().replace('.000Z', 'Z');
const iso = s => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

before(async () => {
  server = await startServer({ sampleAt: seededAt, extraArgs: ['--driver-every-s', '1'] });
  viewer = await makeUser(server.base, 'ada', 'viewer');
  browser = await launch();
  mkdirSync(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const snapshots = async () =>
  (await admin(server.base, 'GET', '/api/estates/sample/advice-snapshots')).snapshots;

/// The newest snapshot once the driver has one of estate version `v`.
async function snapshotOf(v) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const s = await snapshots();
    if (s.length && s[0].estate_version === v) return s[0];
    if (Date.now() > deadline) throw new Error(`no snapshot of version ${v} in 20 s`);
    await new Promise(r => setTimeout(r, 200));
  }
}

/// An observation batch as an agent of the sample posts it.
async function observe(token, observations) {
  const r = await fetch(`${server.base}/api/estates/sample/observations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ batch_id: `after-the-move-${Date.now()}`, observations }),
  });
  const text = await r.text();
  assert.ok(r.ok, `observations: ${r.status} ${text}`);
  return JSON.parse(text);
}

const signedOne = x => (x < 0 ? '−' : '+') + Math.abs(x).toFixed(1);

test('Placement shows applied moves, predicted against observed, the calibration in every Why, and the history marks them', async () => {
  const meta = await admin(server.base, 'GET', '/api/estates/sample');
  const first = await snapshotOf(meta.version);
  // The first three recommended single moves, carried out by one upload.
  const chosen = first.result.moves.filter(x => !x.evidence && !x.group).slice(0, 3);
  assert.equal(chosen.length, 3, 'the advice recommends three single moves');
  const ids = chosen.map(m => `${m.service}|${m.from}|${m.to}`);
  const file = await admin(server.base, 'GET', '/api/estates/sample/file');
  for (const m of chosen) file.services.find(s => s.id === m.service).cluster = m.to;
  await admin(server.base, 'PUT', '/api/estates/sample/file', file);
  const movedAt = Math.floor(Date.now() / 1000);
  const after = await admin(server.base, 'GET', '/api/estates/sample');
  await snapshotOf(after.version);

  // What the outcomes wait for, measured since: every flow of each step
  // (its weight and MB/s a tenth up), the round trip of every flow whose
  // ends are now on two clusters (a tenth over the estate's), and the
  // free capacity of the clusters the steps left and entered.
  const later = movedAt + 7200;
  let report = await admin(server.base, 'GET', `/api/estates/sample/outcomes?now=${iso(later)}`);
  const now = iso(Math.floor(Date.now() / 1000) + 5);
  const clusterOf = Object.fromEntries(file.services.map(s => [s.id, s.cluster]));
  const path = (a, b) => file.paths.find(p => (p.a === a && p.b === b) || (p.a === b && p.b === a));
  const obs = [];
  const seen = new Set();
  const once = (key, o) => { if (!seen.has(key)) { seen.add(key); obs.push(o); } };
  for (const id of ids) {
    const applied = report.applied.find(a => a.identity === id);
    assert.ok(applied, `${id} applied: ${JSON.stringify(report)}`);
    assert.equal(applied.basis, 'advised');
    for (const f of applied.outcome.flows) {
      once(`w ${f.from} ${f.to}`, { fact: 'flow_weight', from: f.from, to: f.to, value: f.weight_before * 1.1, observed_at: now });
      once(`mb ${f.from} ${f.to}`, { fact: 'flow_mb_s', from: f.from, to: f.to, value: f.mb_s_before * 1.1, observed_at: now });
      const [a, b] = [clusterOf[f.from], clusterOf[f.to]].sort();
      if (a !== b) {
        const known = path(a, b)?.rtt_ms?.value ?? f.rtt_ms_predicted;
        once(`rtt ${a} ${b}`, { fact: 'rtt_ms', a, b, value: known * 1.1, observed_at: now });
      }
    }
    const [, from, to] = id.split('|');
    for (const c of [from, to]) {
      const cl = file.clusters.find(x => x.id === c);
      once(`cpu ${c}`, { fact: 'cpu_free', cluster: c, value: cl.cpu_free?.value ?? cl.cpu_total / 2, observed_at: now });
      once(`mem ${c}`, { fact: 'memory_free_gib', cluster: c, value: cl.memory_free_gib?.value ?? cl.memory_total_gib / 2, observed_at: now });
    }
  }
  const token = (await admin(server.base, 'POST', '/api/tokens', { name: 'agent', role: 'agent', estate: 'sample', clusters: file.clusters.map(c => c.id) })).token;
  const posted = await observe(token, obs);
  assert.equal(posted.applied, obs.length, JSON.stringify(posted));
  report = await admin(server.base, 'GET', `/api/estates/sample/outcomes?now=${iso(later)}`);
  for (const id of ids) {
    const o = report.applied.find(a => a.identity === id).outcome;
    assert.equal(o.status, 'observed', `${id}: ${JSON.stringify(o.waiting_for)}`);
  }
  const line = report.calibration_line;
  assert.match(line, /^in this estate, 3 applied moves delivered a median \d+ % of their predicted gain \(middle half \d+–\d+ %\)$/);
  // The server's Why quotes it beside the result.
  const why = await admin(server.base, 'GET', `/api/estates/sample/advice?why=true&now=${iso(later)}`);
  assert.equal(why.calibration, line);
  const history = await admin(server.base, 'GET', '/api/estates/sample/history');
  assert.ok(history.points.length >= 2, 'a snapshot before the moves and one after');

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', msg => {
    if (msg.type() !== 'error') return;
    const url = msg.location()?.url ?? '';
    if (msg.text().startsWith('Failed to load resource') && /\/api\/(deciders|driver)$/.test(url)) return;
    problems.push(`console error: ${msg.text()} (${url})`);
  });
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/?now=${iso(later)}`);

  // Applied moves: each step observed, with the server's figures.
  for (const [i, id] of ids.entries()) {
    const m = chosen[i];
    const o = report.applied.find(a => a.identity === id).outcome;
    const item = page.locator(`[data-testid=applied-move][data-identity="${id}"]`);
    await item.waitFor();
    assert.equal(await item.getAttribute('data-status'), 'observed');
    const text = await item.textContent();
    assert.ok(text.includes(`${m.service}: ${m.from} → ${m.to}`), text);
    assert.ok(text.includes('advised in the advice of'), text);
    assert.equal(await item.getByTestId('predicted').textContent(), `${signedOne(o.predicted_gain)} points`);
    const ratio = `${(o.observed.ratio * 100).toFixed(0)} % of the prediction`;
    assert.equal(await item.getByTestId('observed-before').textContent(),
      `${signedOne(o.observed.gain_at_demand_before)} points (${ratio})`);
    assert.ok(text.includes(`${o.observed.cross_site_mb_s_before.toFixed(2)} → ${o.observed.cross_site_mb_s_after.toFixed(2)} MB/s`), text);
  }
  assert.equal(await page.getByTestId('calibration').textContent(), `Calibration: ${line}.`);
  // Under it, the calibration split by kind of step and by class, the
  // server's sentences one per line.
  const parts = report.calibration_parts.map(p => `${p.line}.`);
  assert.ok(parts.length >= 2 && parts[0].startsWith('single moves: 3 judged, median '), JSON.stringify(parts));
  assert.deepEqual(await page.getByTestId('calibration-parts').locator('li').allTextContents(), parts);

  // The Why of a recommendation still open quotes the calibration.
  await page.locator('[data-testid=provenance][data-parity=match]').waitFor();
  const card = page.locator('[data-testid=moves] li.move').first();
  await card.locator('details.why > summary').click();
  // (A compound step's card opens one Why per member: each quotes it.)
  const quote = card.getByTestId('why-calibration').first();
  await quote.waitFor();
  const quotes = await card.getByTestId('why-calibration').allTextContents();
  assert.ok(quotes.length >= 1 && quotes.every(q => q === `How past advice held: ${line}.`), JSON.stringify(quotes));
  await card.screenshot({ path: join(shots, 'why-calibration.png') });

  // The history chart: one line for the one upload, between the first
  // snapshot (before it) and the newest.
  const chart = page.getByTestId('history-chart');
  await chart.waitFor();
  assert.equal(await chart.getAttribute('data-marks'), '3');
  assert.equal(await chart.getAttribute('data-mark-lines'), '1');
  const mark = chart.locator('g.mark');
  assert.deepEqual((await mark.getAttribute('data-identities')).split(' ').sort(), [...ids].sort());
  // Three steps of one upload: counted on the chart, named in the list.
  assert.equal(await mark.locator('text').textContent(), '3 moves');
  const xs = await chart.locator('circle.dot.cost').evaluateAll(cs => cs.map(c => Number(c.getAttribute('cx'))));
  const mx = Number(await mark.locator('line').getAttribute('x1'));
  // Times are to the second: the upload may share the first snapshot's.
  assert.ok(mx >= xs[0] && mx < xs[xs.length - 1], `the mark at ${mx} lies between the snapshots ${xs}`);
  // The mark's label stays inside the chart.
  const [svgBox, labelBox] = [await chart.locator('svg').boundingBox(), await mark.locator('text').boundingBox()];
  assert.ok(labelBox.x >= svgBox.x && labelBox.x + labelBox.width <= svgBox.x + svgBox.width, `label ${JSON.stringify(labelBox)} inside ${JSON.stringify(svgBox)}`);
  for (const [i, id] of ids.entries()) {
    const m = chosen[i];
    const listed = await page.getByTestId('history-marks').locator(`li[data-identity="${id}"]`).textContent();
    assert.ok(listed.startsWith(`${m.service}: ${m.from} → ${m.to} at `) && listed.includes('% of the prediction'), listed);
  }

  await page.getByTestId('applied-moves').screenshot({ path: join(shots, 'applied-moves.png') });
  await page.getByTestId('history').screenshot({ path: join(shots, 'history-marked.png') });
  await page.screenshot({ path: join(artifacts, 'applied-moves-page.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(overflow <= 390, `the page scrolls sideways at 390 px: ${overflow}`);
  await page.getByTestId('applied-moves').screenshot({ path: join(shots, 'applied-moves-390.png') });
  await page.getByTestId('history').screenshot({ path: join(shots, 'history-marked-390.png') });
  await context.close();
  assert.deepEqual(problems, [], 'no console errors');
});

test('a move a saved what-if contained is held to what the what-if predicted, and the card says which what-if', async () => {
  // A move no snapshot recommended: a service no advice moves, to a
  // cluster of another site. The what-if first moves the service's
  // first callee there too, so its prediction is its own.
  const all = (await admin(server.base, 'GET', '/api/estates/sample/advice-snapshots?limit=200')).snapshots;
  // (The list may leave a snapshot's result out: the advice of now is
  // added, which every snapshot of this version repeats.)
  const current = (await admin(server.base, 'GET', '/api/estates/sample/advice')).result;
  const advised = new Set([...all.map(s => s.result), current].flatMap(r => (r?.moves ?? []).map(m => `${m.service}|${m.from}|${m.to}`)));
  const file = await admin(server.base, 'GET', '/api/estates/sample/file');
  const siteOf = Object.fromEntries(file.clusters.map(c => [c.id, c.site]));
  let pick = null;
  for (const s of file.services) {
    const callee = file.flows.find(f => f.from === s.id)?.to;
    if (!callee) continue;
    for (const c of file.clusters) {
      if (c.id === s.cluster || siteOf[c.id] === siteOf[s.cluster] || c.health !== 'healthy') continue;
      if (advised.has(`${s.id}|${s.cluster}|${c.id}`)) continue;
      pick = { service: s.id, from: s.cluster, to: c.id, callee };
      break;
    }
    if (pick) break;
  }
  assert.ok(pick, 'a move no snapshot recommended');
  const steps = [{ move: { service: pick.callee, to: pick.to } }, { move: { service: pick.service, to: pick.to } }];
  await admin(server.base, 'PUT', '/api/estates/sample/scenarios/try-it', { schema: 1, name: 'try-it', steps });
  // The move carried out by an upload.
  file.services.find(s => s.id === pick.service).cluster = pick.to;
  await admin(server.base, 'PUT', '/api/estates/sample/file', file);
  const movedAt = Math.floor(Date.now() / 1000);
  const id = `${pick.service}|${pick.from}|${pick.to}`;
  const report = await admin(server.base, 'GET', `/api/estates/sample/outcomes?now=${iso(movedAt + 7200)}`);
  const applied = report.applied.find(a => a.identity === id);
  assert.ok(applied, JSON.stringify(report.applied.map(a => a.identity)));
  assert.equal(applied.basis, 'whatif', JSON.stringify(applied));
  assert.equal(applied.scenario, 'try-it');
  assert.equal(applied.kind, 'single');

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, server.base, viewer);
  await page.goto(`${server.base}/?now=${iso(movedAt + 7200)}`);
  const item = page.locator(`[data-testid=applied-move][data-identity="${id}"]`);
  await item.waitFor();
  const text = await item.textContent();
  assert.ok(text.includes(`tried in the what-if “try-it” saved ${applied.advised_at}: held to what it predicted`), text);
  assert.ok(text.includes('predicted by the what-if'), text);
  assert.equal(await item.getByTestId('predicted').textContent(), `${signedOne(applied.outcome.predicted_gain)} points`);
  await item.screenshot({ path: join(shots, 'applied-move-whatif.png') });
  await page.getByTestId('applied-moves').screenshot({ path: join(shots, 'applied-moves-with-whatif.png') });
  await context.close();
});
