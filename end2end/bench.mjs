// The web pages' speed (issue 5): on the 1,000-service estate in headless
// Chromium, (1) first meaningful paint of Placement from a cold load
// (new browser context: empty cache) — the time from navigation start
// until the list of moves is in the page, computed by the engine in the
// browser; (2) a what-if edit re-projected and re-rendered, median of N;
// (3) the WebAssembly bundle's size, raw and gzipped.
// Usage: node bench.mjs ESTATE_FILE NOW   (scripts/bench-web.sh runs it)
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { startServer, admin, makeUser, launch, siteRoot } from './support.mjs';

const [estateFile, NOW] = process.argv.slice(2);
if (!estateFile || !NOW) { console.error('usage: node bench.mjs ESTATE_FILE NOW'); process.exit(2); }
// Cold loads and edits to time: enough for a stable median on a shared
// 2-core machine, few enough to finish in about a minute.
const COLD_LOADS = 5, EDITS = 21;
const median = xs => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const server = await startServer();
let browser;
try {
  await admin(server.base, 'POST', '/api/estates?id=bench', readFileSync(estateFile, 'utf8'));
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

  const paints = [], engineMs = [];
  let moves = 0;
  for (let i = 0; i < COLD_LOADS; i++) {
    const page = await newPage();
    await page.goto(`${server.base}/?estate=bench&now=${NOW}`);
    await page.waitForSelector('[data-testid=moves], [data-testid=moves-empty]', { timeout: 60_000 });
    paints.push(await page.evaluate(() => performance.now()));
    // The page says how long the engine took to compute the advice.
    const prov = await page.getByTestId('provenance').textContent();
    const m = prov.match(/computed in your browser in (\d+) ms/);
    if (m) engineMs.push(Number(m[1]));
    moves = await page.locator('[data-testid=moves] li.move').count();
    await page.context().close();
  }

  const page = await newPage();
  await page.goto(`${server.base}/whatif?estate=bench&now=${NOW}`);
  await page.waitForSelector('[data-testid=totals]', { timeout: 60_000 });
  const clusters = await page.locator('#ev-cluster option').evaluateAll(os => os.map(o => o.value).filter(Boolean));
  const edits = [];
  for (let i = 0; i < EDITS; i++) {
    // One edit = evacuate a cluster, or remove that step again; timed in
    // the page from the click to the frame after the totals changed.
    const cluster = clusters[i % clusters.length];
    edits.push(await page.evaluate(async ({ cluster, add }) => {
      const totals = () => document.querySelector('[data-testid=totals]')?.textContent;
      const steps = document.querySelector('[data-testid=steps]');
      const before = steps.dataset.count;
      const sel = document.querySelector('#ev-cluster');
      if (add) { sel.value = cluster; sel.dispatchEvent(new Event('change', { bubbles: true })); }
      const button = add
        ? [...document.querySelectorAll('button')].find(b => b.textContent === 'Evacuate')
        : document.querySelector('[data-testid=steps] button');
      const t0 = performance.now();
      button.click();
      await new Promise(done => {
        const check = () => (steps.dataset.count !== before && totals()) ? requestAnimationFrame(() => done()) : requestAnimationFrame(check);
        check();
      });
      return performance.now() - t0;
    }, { cluster, add: true }));
    await page.evaluate(() => document.querySelector('[data-testid=steps] button').click());
    await page.waitForFunction(() => document.querySelector('[data-testid=steps]').dataset.count === '0');
  }

  const wasm = join(siteRoot, 'pkg', 'berth_bg.wasm');
  const raw = statSync(wasm).size;
  const gz = gzipSync(readFileSync(wasm), { level: 9 }).length;
  console.log(`estate: 1,000 services (${moves} moves recommended); headless Chromium; ${COLD_LOADS} cold loads, ${EDITS} edits`);
  console.log(`first meaningful paint of Placement (cold): median ${median(paints).toFixed(0)} ms, max ${Math.max(...paints).toFixed(0)} ms (target <= 1500 ms)`);
  console.log(`of which the engine computing the advice in the page (the Why follows after the paint): median ${median(engineMs)} ms`);
  console.log(`what-if edit re-projected and re-rendered: median ${median(edits).toFixed(1)} ms, max ${Math.max(...edits).toFixed(1)} ms (target <= 100 ms)`);
  console.log(`berth_bg.wasm: ${raw} bytes, ${gz} bytes gzipped`);
} finally {
  await browser?.close();
  await server.stop();
}
