// The service graph people already know how to read (issue 35 item 3): on
// the sample at its instant, the graph's text is at least 12 px at the
// fitted view (1×), lines are routed in right angles round the boxes,
// the heaviest lines carry their numbers, a legend says what everything
// means, selecting a service dims what it does not join, and
// /estate?service=ID scrolls the page so that service is in the window.
// Screenshots of the sample and of a generated 1,000-service estate are
// written to artifacts/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { startServer, makeUser, launch, artifacts, signIn, admin, repo, SAMPLE_NOW as NOW } from '../support.mjs';

let server, browser, viewer, context, page;

before(async () => {
  server = await startServer();
  viewer = await makeUser(server.base, 'gretel', 'viewer');
  browser = await launch();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  await signIn(page, server.base, viewer);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const section = () => page.locator('section[aria-labelledby=g-h]');

/// The on-screen size of every text of the graph: its computed font size
/// times the SVG's scale.
const textSizes = () => page.getByTestId('graph').evaluate(svg => {
  const scale = svg.getScreenCTM().a;
  return [...svg.querySelectorAll('text')].map(t => ({
    text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale,
  }));
});

test('the sample: 12 px text, routed lines, numbers on the heaviest lines, a legend', async () => {
  await page.goto(`${server.base}/estate?now=${NOW}`);
  const graph = page.getByTestId('graph');
  await graph.locator('g.g-svc').first().waitFor();
  assert.equal(await graph.getAttribute('data-zoom'), '1.00', 'the fitted view');
  const sizes = await textSizes();
  assert.ok(sizes.length >= 74 + 15 + 8, `${sizes.length} texts`);
  const small = sizes.filter(s => s.px < 12 - 1e-6);
  assert.deepEqual(small, [], 'no text under 12 px');
  // Every name fits its cell as drawn.
  const overflowing = await graph.evaluate(svg => [...svg.querySelectorAll('g.g-svc')]
    .filter(g => g.querySelector('text').getComputedTextLength() + 4 > g.querySelector('rect').getBBox().width)
    .map(g => g.dataset.service));
  assert.deepEqual(overflowing, []);
  // Lines in right angles.
  const slanted = await graph.locator('line.g-edge').evaluateAll(ls => ls.filter(l => l.getAttribute('x1') !== l.getAttribute('x2') && l.getAttribute('y1') !== l.getAttribute('y2')).length);
  assert.equal(slanted, 0);
  // The heaviest lines' numbers, shown.
  const nums = graph.locator('g.g-num');
  assert.ok(await nums.count() >= 6, `${await nums.count()} numbers`);
  await nums.first().waitFor({ state: 'visible' });
  assert.match(await nums.first().locator('text').textContent(), /^\d+(\.\d)? req · \d+(\.\d)? MB\/s$/);
  // No two numbers overlap on screen.
  const boxes = await nums.evaluateAll(gs => gs.map(g => g.getBoundingClientRect().toJSON()));
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i], boxes[j]];
    assert.ok(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top, `numbers ${i} and ${j} overlap`);
  }
  const legend = page.getByTestId('graph-legend');
  await legend.waitFor({ state: 'visible' });
  const words = await legend.textContent();
  for (const w of ['Site', 'Cluster', 'Service', 'wider carries more', 'Across sites', 'stale', 'MB/s', 'Recommended move', 'Not joined to the selected service']) {
    assert.ok(words.includes(w), `legend says ${w}`);
  }
  await section().screenshot({ path: join(artifacts, 'estate-graph-sample.png') });
});

test('selecting a service lights its lines and neighbours and dims the rest', async () => {
  await page.goto(`${server.base}/estate?now=${NOW}`);
  const graph = page.getByTestId('graph');
  await graph.locator('g.g-svc').first().waitFor();
  await page.getByRole('button', { name: 'Service cart: show its flows' }).click();
  await graph.locator('g.g-svc.selected[data-service=cart]').waitFor();
  const state = await graph.evaluate(svg => {
    const routes = [...svg.querySelectorAll('g.g-route')].map(g => ({ a: g.dataset.a, b: g.dataset.b, cls: g.getAttribute('class') }));
    const cells = [...svg.querySelectorAll('g.g-svc')].map(g => ({ id: g.dataset.service, cls: g.getAttribute('class'), opacity: Number(getComputedStyle(g).opacity) }));
    return { routes, cells };
  });
  const mine = state.routes.filter(r => r.a === 'cart' || r.b === 'cart');
  assert.ok(mine.length >= 1);
  assert.ok(mine.every(r => /\blit\b/.test(r.cls)), 'its lines lit');
  assert.ok(state.routes.filter(r => r.a !== 'cart' && r.b !== 'cart').every(r => /\bdim\b/.test(r.cls)), 'the other lines dimmed');
  const near = new Set(mine.map(r => (r.a === 'cart' ? r.b : r.a)));
  for (const c of state.cells) {
    if (c.id === 'cart') { assert.match(c.cls, /\bselected\b/); continue; }
    if (near.has(c.id)) {
      assert.match(c.cls, /\blit\b/, c.id);
      assert.equal(c.opacity, 1, c.id);
    } else {
      assert.match(c.cls, /\bdim\b/, c.id);
      assert.ok(c.opacity < 0.5, `${c.id} faded (${c.opacity})`);
    }
  }
  await section().screenshot({ path: join(artifacts, 'estate-graph-selected.png') });
  await page.getByRole('button', { name: 'Clear the selection' }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=graph] .dim').length === 0);
});

test('/estate?service=ID scrolls the page to the graph with that service in the window', async () => {
  // The service drawn lowest on the graph: the farthest from the top.
  await page.goto(`${server.base}/estate?now=${NOW}`);
  await page.getByTestId('graph').locator('g.g-svc').first().waitFor();
  const id = await page.getByTestId('graph').evaluate(svg => [...svg.querySelectorAll('g.g-svc')]
    .map(g => ({ id: g.dataset.service, y: g.querySelector('rect').getBBox().y }))
    .sort((a, b) => b.y - a.y)[0].id);
  await page.goto(`${server.base}/estate?service=${id}&now=${NOW}`);
  await page.getByTestId('graph-panel').locator('h3', { hasText: id }).waitFor();
  const cell = page.locator(`[data-testid=graph] g.g-svc[data-service="${id}"] rect`);
  await page.waitForFunction(() => window.scrollY > 0);
  await page.waitForTimeout(300);
  const at = await cell.evaluate(r => ({ box: r.getBoundingClientRect().toJSON(), w: innerWidth, h: innerHeight, scrolled: scrollY }));
  assert.ok(at.scrolled > 0, 'the page scrolled');
  assert.ok(at.box.top >= 0 && at.box.bottom <= at.h && at.box.left >= 0 && at.box.right <= at.w, `in the window: ${JSON.stringify(at)}`);
  // In the middle, give or take a quarter of the window.
  assert.ok(Math.abs((at.box.top + at.box.bottom) / 2 - at.h / 2) <= at.h / 4, `centred: ${JSON.stringify(at)}`);
  await page.screenshot({ path: join(artifacts, 'estate-graph-show-service.png') });
});

test('a 1,000-service estate: clusters closed, lines routed, readable', async t => {
  const gen = join(repo, 'target', 'release', 'examples', 'gen_estate');
  if (!existsSync(gen)) {
    t.skip('target/release/examples/gen_estate is not built (cargo build --release -p berth --example gen_estate)');
    return;
  }
  const doc = execFileSync(gen, ['1000', '20', '3'], { maxBuffer: 64 << 20 }).toString();
  await admin(server.base, 'POST', '/api/estates?id=big', doc);
  await page.goto(`${server.base}/estate?estate=big&now=${NOW}`);
  const graph = page.getByTestId('graph');
  await graph.locator('g.g-cluster').first().waitFor({ timeout: 120_000 });
  assert.equal(await graph.locator('g.g-cluster').count(), 20);
  assert.equal(await graph.locator('g.g-cluster[data-expanded=true]').count(), 0, 'closed at first');
  assert.ok(await graph.locator('g.g-num').count() >= 1, 'numbers on the heaviest lines');
  assert.deepEqual((await textSizes()).filter(s => s.px < 12 - 1e-6), []);
  await section().screenshot({ path: join(artifacts, 'estate-graph-1000.png') });
  // One cluster opened: its services drawn, lines still routed.
  const first = await graph.locator('g.g-cluster').first().getAttribute('data-cluster');
  await graph.getByRole('button', { name: `Open cluster ${first}`, exact: true }).click();
  await graph.locator(`g.g-cluster[data-cluster="${first}"][data-expanded=true]`).waitFor();
  assert.ok(await graph.locator('g.g-svc').count() >= 1);
  await section().screenshot({ path: join(artifacts, 'estate-graph-1000-one-open.png') });
});
