// The web pages' speed and size (issues 5 and 16), in headless Chromium,
// on each generated estate given:
//  (1) Placement's first meaningful paint from a cold load (a new browser
//      context: empty cache) — navigation start until the list of moves,
//      computed by the engine in the page, is there;
//  (2) the Estate page interactive from a cold load — until the map's
//      sites, the service graph and the first page of facts are drawn and
//      the page answers;
//  (3) a what-if edit re-projected and re-rendered, median of N;
//  (4) a policy edit previewed (the advice under the edited policy beside
//      the saved one, both in the page), median of N;
//  (5) the number of DOM elements of every page once it has settled;
//  (6) the bundle's sizes, raw and gzipped (WebAssembly and JS glue);
//  (7) every page's cold time to interactive and bytes fetched, on the
//      first estate: navigation start until the header has learnt who is
//      signed in (or, on Login, that nobody is), which the page can only
//      do once the module is loaded and the page hydrated; the bytes are
//      what went over the wire (transferSize of the page and everything it
//      fetched until the network was idle). With BENCH_COMPARE_SITE=DIR
//      the same is measured, in the same run, on a second server serving
//      the bundle in DIR (an older build), side by side.
// BENCH_PAGES_ONLY=1 measures (7) only.
// Usage: node bench.mjs NOW ESTATE_FILE...   (scripts/bench-web.sh runs it)
import { readFileSync, statSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, basename } from 'node:path';
import { startServer, admin, makeUser, launch, siteRoot } from './support.mjs';

const [NOW, ...estateFiles] = process.argv.slice(2);
if (!NOW || estateFiles.length === 0) { console.error('usage: node bench.mjs NOW ESTATE_FILE...'); process.exit(2); }
// Cold loads and edits to time: enough for a stable median on a shared
// 2-core machine, few enough to finish in a few minutes per estate.
const COLD_LOADS = 5, EDITS = 15;
const median = xs => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = xs => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

// (7): cold loads per page (a new browser context each: empty cache).
const PAGE_LOADS = 3;
// The pages, each at its address; the admin sees every one of them.
const PAGES = [
  ['Placement', '/'], ['Estate', '/estate'], ['What-if', '/whatif'], ['Policy', '/policy'],
  ['Deciders', '/deciders'], ['Health', '/health'], ['New estate', '/estates/new'],
  ['Import', '/import'], ['Admin', '/admin'], ['Login', '/login'],
];

// (7) on one server: { page: { ms, bytes, wasmBytes, coding } }, medians.
async function pagesCold(browser, base, q) {
  const who = await makeUser(base, 'pages', 'admin');
  const r = await fetch(`${base}/api/session`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: who.name, password: who.password }),
  });
  const [name, value] = r.headers.get('set-cookie').split(';')[0].split('=');
  const out = {};
  for (const [label, path] of PAGES) {
    const ms = [], bytes = [], wasm = [];
    let coding = '';
    for (let i = 0; i < PAGE_LOADS; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      if (path !== '/login') {
        await ctx.addCookies([{ name, value, url: base }, { name: 'berth_signed_in', value: '1', url: base }]);
      }
      const page = await ctx.newPage();
      page.on('response', resp => {
        if (resp.url().endsWith('/pkg/berth_bg.wasm')) coding = resp.headers()['content-encoding'] ?? 'none';
      });
      await page.goto(`${base}${path}?${q}`);
      // The header says "…" until the page, hydrated, knows the session.
      await page.waitForFunction(() => {
        const w = document.querySelector('[data-testid=who]');
        return w && !w.textContent.includes('…');
      }, null, { timeout: 120_000, polling: 'raf' });
      ms.push(await page.evaluate(() => new Promise(done => requestAnimationFrame(() => done(performance.now())))));
      await page.waitForLoadState('networkidle');
      const sizes = await page.evaluate(() => {
        const all = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
        return {
          total: all.reduce((n, e) => n + e.transferSize, 0),
          wasm: all.filter(e => e.name.endsWith('/pkg/berth_bg.wasm')).reduce((n, e) => n + e.transferSize, 0),
        };
      });
      bytes.push(sizes.total);
      wasm.push(sizes.wasm);
      await ctx.close();
    }
    out[label] = { ms: median(ms), bytes: median(bytes), wasmBytes: median(wasm), coding };
  }
  return out;
}

const kb = n => `${(n / 1024).toFixed(0)} KiB`;

const server = await startServer();
let browser;
try {
  const user = await makeUser(server.base, 'bench', 'operator');
  const login = await fetch(`${server.base}/api/session`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: user.name, password: user.password }),
  });
  const cookie = login.headers.get('set-cookie').split(';')[0].split('=');
  browser = await launch();
  const newPage = async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // The session, and the marker that tells the page it is signed in.
    await ctx.addCookies([{ name: cookie[0], value: cookie[1], url: server.base },
      { name: 'berth_signed_in', value: '1', url: server.base }]);
    return ctx.newPage();
  };
  // Time from navigation start until `selector` is in the page and a
  // frame has been painted after it.
  const coldLoad = async (path, selector) => {
    const page = await newPage();
    await page.goto(`${server.base}${path}`);
    await page.waitForSelector(selector, { timeout: 120_000, state: 'attached' });
    const t = await page.evaluate(() => new Promise(done => requestAnimationFrame(() => done(performance.now()))));
    return { page, t };
  };
  const domSize = page => page.evaluate(() => document.getElementsByTagName('*').length);

  {
    // (7), on the first estate, this bundle and (if asked) the other.
    const file = estateFiles[0];
    // Its own id: the timings below load the same file under the plain one.
    const id = `${basename(file).replace(/\.json$/, '').replace(/[^a-z0-9-]/g, '-')}-pages`;
    const body = readFileSync(file, 'utf8');
    const q = `estate=${id}&now=${NOW}`;
    const runs = [['this build', siteRoot, server]];
    const other = process.env.BENCH_COMPARE_SITE;
    let second;
    if (other) {
      second = await startServer({ site: other });
      runs.unshift([`BENCH_COMPARE_SITE`, other, second]);
    }
    try {
      const results = [];
      for (const [label, site, srv] of runs) {
        await admin(srv.base, 'POST', `/api/estates?id=${id}`, body);
        results.push([label, site, await pagesCold(browser, srv.base, q)]);
      }
      console.log(`\nevery page, cold (median of ${PAGE_LOADS}; estate ${id}): time to interactive, bytes fetched (of which the module)`);
      for (const [label, site, r] of results) {
        const coding = [...new Set(Object.values(r).map(x => x.coding))].join('/');
        console.log(`  ${label} (${site}; module sent as ${coding}):`);
        for (const [page, x] of Object.entries(r)) {
          console.log(`    ${page.padEnd(11)} ${String(Math.round(x.ms)).padStart(5)} ms  ${kb(x.bytes).padStart(9)} (${kb(x.wasmBytes)})`);
        }
      }
    } finally {
      await second?.stop();
    }
  }

  for (const file of process.env.BENCH_PAGES_ONLY ? [] : estateFiles) {
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    const id = basename(file).replace(/\.json$/, '').replace(/[^a-z0-9-]/g, '-');
    await admin(server.base, 'POST', `/api/estates?id=${id}`, JSON.stringify(doc));
    const q = `estate=${id}&now=${NOW}`;
    const dom = {};

    const paints = [], engineMs = [];
    let moves = 0;
    for (let i = 0; i < COLD_LOADS; i++) {
      const { page, t } = await coldLoad(`/?${q}`, '[data-testid=moves], [data-testid=moves-empty]');
      paints.push(t);
      const prov = await page.getByTestId('provenance').textContent();
      const m = prov.match(/computed in your browser in (\d+) ms/);
      if (m) engineMs.push(Number(m[1]));
      moves = await page.locator('[data-testid=moves] li.move').count();
      if (i === 0) {
        // Settled: the Why panels and the server's digest check are in.
        await page.waitForTimeout(1500);
        dom.placement = await domSize(page);
      }
      await page.context().close();
    }

    const estate = [];
    for (let i = 0; i < COLD_LOADS; i++) {
      const { page, t } = await coldLoad(`/estate?${q}`,
        '[data-testid=map] g.site ~ g.site, [data-testid=graph] g.g-cluster');
      await page.waitForSelector('[data-testid=graph] g.g-cluster', { state: 'attached' });
      await page.waitForSelector('[data-testid=facts] tbody tr', { state: 'attached' });
      // Interactive: the page answers a click on the graph's tools within
      // the frame after it (closing every cluster redraws the graph).
      const answered = await page.evaluate(() => new Promise(done => {
        const b = [...document.querySelectorAll('button')].find(x => x.textContent === 'Close every cluster');
        b.click();
        requestAnimationFrame(() => done(performance.now()));
      }));
      estate.push(Math.max(t, answered));
      if (i === 0) {
        const reopened = await newPage();
        await reopened.goto(`${server.base}/estate?${q}`);
        await reopened.waitForSelector('[data-testid=facts] tbody tr', { timeout: 120_000 });
        await reopened.waitForTimeout(500);
        dom.estate = await domSize(reopened);
        await reopened.context().close();
      }
      await page.context().close();
    }

    const page = await newPage();
    await page.goto(`${server.base}/whatif?${q}`);
    await page.waitForSelector('[data-testid=totals]', { timeout: 120_000 });
    dom.whatif = await domSize(page);
    const clusters = await page.locator('#ev-cluster option').evaluateAll(os => os.map(o => o.value).filter(Boolean));
    const edits = [];
    for (let i = 0; i < EDITS; i++) {
      // One edit = evacuate a cluster, timed in the page from the click
      // to the frame after the totals changed; then the step is removed.
      const cluster = clusters[i % clusters.length];
      edits.push(await page.evaluate(async ({ cluster }) => {
        const totals = () => document.querySelector('[data-testid=totals]')?.textContent;
        const steps = document.querySelector('[data-testid=steps]');
        const before = steps.dataset.count;
        const sel = document.querySelector('#ev-cluster');
        sel.value = cluster; sel.dispatchEvent(new Event('change', { bubbles: true }));
        const button = [...document.querySelectorAll('button')].find(b => b.textContent === 'Evacuate');
        const t0 = performance.now();
        button.click();
        await new Promise(done => {
          const check = () => (steps.dataset.count !== before && totals()) ? requestAnimationFrame(() => done()) : requestAnimationFrame(check);
          check();
        });
        return performance.now() - t0;
      }, { cluster }));
      await page.evaluate(() => document.querySelector('[data-testid=steps] button').click());
      await page.waitForFunction(() => document.querySelector('[data-testid=steps]').dataset.count === '0');
    }

    await page.goto(`${server.base}/policy?${q}`);
    await page.waitForSelector('#pf-min_gain_points', { timeout: 120_000 });
    dom.policy = await domSize(page);
    // The preview appears at the first edit, once the estate is in the
    // engine: one edit untimed, then the timed ones.
    await page.fill('#pf-min_gain_points', '3');
    // (3, not 2 or 5, so the first timed edit changes the summary.)
    await page.waitForSelector('[data-testid=preview-summary]', { timeout: 120_000 });
    // One edit = min_gain_points typed in, timed from the input event to
    // the frame after the preview's summary changed: alternately 5 and 2
    // (the default), as someone tuning the bar would; then, apart, a bar
    // no move clears, the slowest case (with no single move clearing the
    // bar, the engine searches compound steps over the whole estate).
    const preview = value => page.evaluate(async value => {
        const input = document.querySelector('#pf-min_gain_points');
        const summary = () => document.querySelector('[data-testid=preview-summary]');
        const before = summary()?.dataset.at;
        input.value = value;
        const t0 = performance.now();
        input.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise(done => {
          const check = () => ((summary() && summary().dataset.at !== before) || performance.now() - t0 > 20_000) ? requestAnimationFrame(() => done()) : requestAnimationFrame(check);
          check();
        });
        return performance.now() - t0;
      }, value);
    const previews = [], previewsNone = [];
    for (let i = 0; i < EDITS; i++) previews.push(await preview(i % 2 === 0 ? '5' : '2'));
    for (let i = 0; i < 3; i++) {
      previewsNone.push(await preview('100000'));
      await preview('2');
    }

    for (const [name, path, ready] of [
      ['deciders', `/deciders?${q}`, 'button:has-text("Run the deciders"):enabled'],
      ['place', `/place?${q}&service=${encodeURIComponent(doc.services[0].id)}`, '[data-testid=place-verdict]'],
      ['health', `/health?${q}`, '[data-testid=ready]'],
    ]) {
      await page.goto(`${server.base}${path}`);
      await page.waitForSelector(ready, { timeout: 120_000, state: 'attached' });
      await page.waitForTimeout(500);
      dom[name] = await domSize(page);
    }
    await page.context().close();

    const n = doc.services.length, c = doc.clusters.length, f = doc.flows.length;
    console.log(`\nestate ${id}: ${n} services, ${c} clusters, ${f} flows (${moves} moves recommended); headless Chromium; ${COLD_LOADS} cold loads, ${EDITS} edits`);
    console.log(`  Placement first meaningful paint (cold): ${fmt(paints)}`);
    console.log(`    of which the engine computing the advice in the page: median ${median(engineMs)} ms`);
    console.log(`  Estate page interactive (cold): ${fmt(estate)}`);
    console.log(`  what-if edit re-projected and re-rendered: median ${median(edits).toFixed(1)} ms, max ${Math.max(...edits).toFixed(1)} ms`);
    console.log(`  policy edit previewed (min_gain_points 5 ↔ 2): median ${median(previews).toFixed(1)} ms, max ${Math.max(...previews).toFixed(1)} ms`);
    console.log(`  policy edit previewed, a bar no move clears (min_gain_points 100000): median ${median(previewsNone).toFixed(1)} ms, max ${Math.max(...previewsNone).toFixed(1)} ms`);
    console.log(`  DOM elements: ${Object.entries(dom).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }

  const pkg = join(siteRoot, 'pkg');
  console.log('');
  for (const name of readdirSync(pkg).filter(x => /\.(wasm|js)$/.test(x)).sort()) {
    const path = join(pkg, name);
    const gz = gzipSync(readFileSync(path), { level: 9 }).length;
    console.log(`bundle ${name}: ${statSync(path).size} bytes, ${gz} bytes gzipped`);
  }
} finally {
  await browser?.close();
  await server.stop();
}
