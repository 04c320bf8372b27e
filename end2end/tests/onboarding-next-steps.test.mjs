// Onboarding with round trips and next steps (issue 35 items 1 and 2):
// a 2-site, 3-cluster estate made in the New estate page, its round trip
// pre-filled from Azure's published medians and stored as a reported fact
// naming that source; the next-steps checklist turning done as Online
// Boutique is imported through the Import page and a flow batch is
// posted; the Sock Shop import's note that manifests gave few call edges.
// Screenshots of the New estate page and the checklist at 1280×800 and
// 390×844 go to artifacts/ and, when it exists, /work/notes/shots/.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { startServer, makeUser, launch, artifacts, admin, repo, signIn } from '../support.mjs';

const boutique = join(repo, '..', 'shared', 'fixtures', 'kubernetes', 'online-boutique.yaml');
const sockShop = join(repo, '..', 'shared', 'fixtures', 'kubernetes', 'sock-shop.yaml');
const notesShots = '/work/notes/shots';

let server, browser, operator;
let page, problems;

before(async () => {
  server = await startServer();
  operator = await makeUser(server.base, 'olga', 'operator');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const open = async (width, height) => {
  const context = await browser.newContext({ viewport: { width, height } });
  page = await context.newPage();
  problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => {
    if (m.type() !== 'error') return;
    const url = m.location()?.url ?? '';
    if (m.text().startsWith('Failed to load resource') && /\/api\/(deciders|driver)$/.test(url)) return;
    problems.push(`console error: ${m.text()} (${url})`);
  });
};

beforeEach(async () => { await open(1280, 800); });

afterEach(async () => {
  await page.context().close();
  assert.deepEqual(problems, [], 'no console errors');
});

const shot = async name => {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  if (existsSync(notesShots)) await page.screenshot({ path: join(notesShots, `${name}.png`), fullPage: true });
};

const steps = async () => {
  const box = page.getByTestId('next-steps');
  await box.waitFor();
  const out = {};
  for (const li of await box.locator('li[data-step]').all()) {
    out[await li.getAttribute('data-step')] = {
      done: (await li.getAttribute('data-done')) === 'true',
      status: (await li.getByTestId('step-status').textContent()).trim(),
    };
  }
  return out;
};

test('a 2-site, 3-cluster estate: the round trip pre-filled from the published table, stored as reported with its source; next steps after creation', async () => {
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/estates/new`);
  await page.getByLabel('Estate name').fill('Two Sites');
  const site = n => page.getByRole('group', { name: `Site ${n}` });
  const cluster = n => page.getByRole('group', { name: `Cluster ${n}` });
  await site(1).getByLabel('City').selectOption('Frankfurt');
  await page.getByRole('button', { name: 'Add a site' }).click();
  await site(2).getByLabel('City').selectOption('Dublin');

  // Pre-filled: the mean of Azure's two published medians (26 and 27 ms).
  const rtt = page.getByLabel('Round trip fra ↔ dub (ms)');
  assert.equal(await rtt.inputValue(), '26.5');
  const source = page.getByTestId('round-trip').filter({ has: rtt }).getByTestId('rtt-source');
  assert.match(await source.textContent(), /^Pre-filled from Azure's published median, Germany West Central \(Frankfurt\) ↔ North Europe \(Dublin\), 30 days to 2026-07-30 \(source\): stored as reported/);
  assert.equal(await source.getByRole('link', { name: 'source' }).getAttribute('href'), 'https://learn.microsoft.com/en-us/azure/networking/azure-network-latency');

  // A third site outside the table's regions: the estimate is shown, not
  // sent, and the page says what leaving it empty costs.
  await page.getByRole('button', { name: 'Add a site' }).click();
  await site(3).getByLabel('City').selectOption('Stockholm');
  const sto = page.getByLabel('Round trip fra ↔ sto (ms)');
  assert.equal(await sto.inputValue(), '');
  assert.match(await sto.getAttribute('placeholder'), /^≈ \d+(\.\d)? \(estimate\)$/);
  const stoNote = await page.getByTestId('round-trip').filter({ has: sto }).getByTestId('rtt-source').textContent();
  assert.match(stoNote, /Left empty, the engine estimates \d+(\.\d)? ms from the distance: inferred \(±35 %\)/);
  // Typed by a person: reported by that person.
  await sto.fill('31');
  assert.match(await page.getByTestId('round-trip').filter({ has: sto }).getByTestId('rtt-source').textContent(), /^Typed by you: stored as reported, source user:olga\./);
  await page.getByRole('button', { name: 'Remove site 3' }).click();
  assert.equal(await page.getByLabel('Round trip fra ↔ sto (ms)').count(), 0);

  // Three clusters, two in Frankfurt; Dublin's free capacity left unknown.
  const fill = async (n, id, siteId, cpu, mem, cpuFree, memFree) => {
    await cluster(n).getByLabel('Cluster id').fill(id);
    await cluster(n).getByLabel('Site', { exact: true }).selectOption(siteId);
    await cluster(n).getByLabel('CPU total (cores)').fill(cpu);
    await cluster(n).getByLabel('Memory total (GiB)').fill(mem);
    if (cpuFree) await cluster(n).getByLabel(/^CPU free/).fill(cpuFree);
    if (memFree) await cluster(n).getByLabel(/^Memory free/).fill(memFree);
  };
  await fill(1, 'c-fra-1', 'fra', '32', '128', '20', '80');
  await page.getByRole('button', { name: 'Add a cluster' }).click();
  await fill(2, 'c-fra-2', 'fra', '32', '128', '24', '96');
  await page.getByRole('button', { name: 'Add a cluster' }).click();
  await fill(3, 'c-dub-1', 'dub', '16', '64');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByTestId('check-ok').waitFor();
  await shot('new-estate-round-trips-1280');

  await page.getByRole('button', { name: 'Create the estate' }).click();
  await page.getByTestId('created').waitFor();
  const s = await steps();
  assert.deepEqual(Object.keys(s), ['capacities', 'services', 'traffic', 'round_trips']);
  assert.ok(Object.values(s).every(x => !x.done), JSON.stringify(s));
  assert.match(s.capacities.status, /^2 of 3 clusters know their free CPU and memory; unknown on c-dub-1/);
  assert.equal(s.services.status, 'No services yet: there is nothing to place.');
  assert.equal(s.round_trips.status, '0 of 2 pairs of clusters on different sites measured; 2 reported.');
  // Each open item says how: the Import page, and the exact commands.
  const box = page.getByTestId('next-steps');
  assert.equal(await box.locator('li[data-step=services]').getByRole('link').first().getAttribute('href'), '/import?estate=two-sites');
  assert.match(await box.locator('li[data-step=round_trips] code').textContent(), new RegExp(`^BERTH_TOKEN=… berth agent --server ${server.base.replace(/\./g, '\\.')} --estate two-sites --cluster c-dub-1 --probe-listen `));
  await shot('next-steps-created-1280');

  // The created estate holds the pre-filled figure as a reported fact
  // that names its source.
  const file = await admin(server.base, 'GET', '/api/estates/two-sites/file');
  assert.equal(file.links.length, 1);
  const link = file.links[0];
  assert.deepEqual([link.a, link.b].sort(), ['dub', 'fra']);
  assert.deepEqual([link.rtt_ms.value, link.rtt_ms.class], [26.5, 'reported']);
  assert.match(link.rtt_ms.source, /^published: Azure P50, 30 days to 2026-07-30, Germany West Central ↔ North Europe/);
  assert.deepEqual(file.clusters.map(c => c.id).sort(), ['c-dub-1', 'c-fra-1', 'c-fra-2']);
});

test('the checklist turns done as Online Boutique is imported through the Import page and a flow batch is posted', async () => {
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/?estate=two-sites`);
  let s = await steps();
  assert.equal(s.services.done, false);

  // Import through the page, as a person would.
  await page.goto(`${server.base}/import?estate=two-sites`);
  const clusterPick = page.getByLabel('Cluster', { exact: true });
  await clusterPick.locator('option[value="c-fra-1"]').waitFor({ state: 'attached' });
  await clusterPick.selectOption('c-fra-1');
  await page.getByLabel('Manifest files').setInputFiles(boutique);
  await page.getByTestId('k8s-picked').waitFor();
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  await page.waitForFunction(() => !document.querySelector('[data-testid=k8s-apply]').disabled);
  // Online Boutique's manifests name 16 calls for 12 services: no
  // few-edges sentence.
  assert.doesNotMatch(await page.locator('[data-testid=k8s-notes] li[data-code=traffic_unknown]').textContent(), /call edges? for/);
  await page.getByTestId('k8s-apply').click();
  await page.getByTestId('k8s-applied').waitFor();

  await page.goto(`${server.base}/?estate=two-sites`);
  s = await steps();
  assert.equal(s.services.done, true, JSON.stringify(s));
  assert.equal(s.services.status, '12 services: 12 from Kubernetes, 0 written in the estate file.');
  assert.equal(s.traffic.done, false);
  assert.match(s.traffic.status, /^Traffic observed for 0 of 12 services \(0 declared in the file\); never observed for /);
  assert.equal(s.capacities.done, false);

  // A flow batch, as an agent posts it: every service's traffic seen over
  // the last 5 minutes, two flows' weights, Dublin's free capacity.
  const at = new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  const services = (await admin(server.base, 'GET', '/api/estates/two-sites/file')).services.map(x => x.id);
  assert.equal(services.length, 12);
  const observations = [
    ...services.map(service => ({ fact: 'traffic', service, value: 300, observed_at: at })),
    { fact: 'flow_weight', from: 'frontend', to: 'cartservice', value: 40, observed_at: at },
    { fact: 'flow_weight', from: 'checkoutservice', to: 'paymentservice', value: 6, observed_at: at },
    { fact: 'cpu_free', cluster: 'c-dub-1', value: 10, observed_at: at },
    { fact: 'memory_free_gib', cluster: 'c-dub-1', value: 40, observed_at: at },
  ];
  const answer = await admin(server.base, 'POST', '/api/estates/two-sites/observations', { batch_id: 'e2e-onboarding-1', observations });
  assert.equal(answer.applied, observations.length, JSON.stringify(answer));

  await page.goto(`${server.base}/?estate=two-sites`);
  s = await steps();
  assert.equal(s.services.done, true);
  assert.equal(s.traffic.done, true, JSON.stringify(s));
  assert.match(s.traffic.status, /^Every service's traffic is known \(12 observed, 0 declared in the file\); \d+ flows\.$/);
  assert.equal(s.capacities.done, true, JSON.stringify(s));
  assert.equal(s.round_trips.done, false);
  assert.match(await page.getByTestId('next-steps').locator('h2').textContent(), /^Next steps \(3 of 4 done\)$/);
  await page.getByTestId('next-steps').scrollIntoViewIfNeeded();
  await shot('next-steps-placement-1280');

  // The service graph of the onboarded Online Boutique: its call edges
  // drawn, for a person to look at (artifacts/estate-graph-online-boutique.png).
  await page.goto(`${server.base}/estate?estate=two-sites`);
  const graph = page.locator('section[aria-labelledby=g-h]');
  await graph.locator('g.g-svc').first().waitFor();
  assert.ok(await graph.locator('line.g-edge').count() > 0, "Online Boutique's call edges are drawn");
  await graph.screenshot({ path: join(artifacts, 'estate-graph-online-boutique.png') });

  // The same checklist on a phone.
  await page.context().close();
  await open(390, 844);
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/?estate=two-sites`);
  await steps();
  const fits = sel => page.evaluate(q => {
    const e = document.querySelector(q);
    return [e.scrollWidth, e.clientWidth, Math.round(e.getBoundingClientRect().right)];
  }, sel);
  const [sw, cw, right] = await fits('[data-testid=next-steps]');
  assert.ok(sw <= cw && right <= 390, `the checklist fits 390 px (scroll ${sw}, client ${cw}, right edge ${right})`);
  await shot('next-steps-placement-390');
  await page.goto(`${server.base}/estates/new`);
  await page.getByRole('group', { name: 'Site 1' }).getByLabel('City').selectOption('Frankfurt');
  await page.getByRole('button', { name: 'Add a site' }).click();
  await page.getByRole('group', { name: 'Site 2' }).getByLabel('City').selectOption('Dublin');
  await page.getByLabel('Round trip fra ↔ dub (ms)').waitFor();
  const [fsw, fcw, fright] = await fits('[data-testid=round-trips]');
  assert.ok(fsw <= fcw && fright <= 390, `the round trips fit 390 px (scroll ${fsw}, client ${fcw}, right edge ${fright})`);
  await shot('new-estate-round-trips-390');
});

test('Sock Shop: the import says it found 1 call edge for 14 services and where flows will come from', async () => {
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/import?estate=two-sites`);
  const clusterPick = page.getByLabel('Cluster', { exact: true });
  await clusterPick.locator('option[value="c-dub-1"]').waitFor({ state: 'attached' });
  await clusterPick.selectOption('c-dub-1');
  await page.getByLabel('Manifest files').setInputFiles(sockShop);
  await page.getByTestId('k8s-picked').waitFor();
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  const note = page.locator('[data-testid=k8s-notes] li[data-code=traffic_unknown]');
  await note.waitFor();
  const text = await note.textContent();
  assert.match(text, /Only 1 call edge for 14 services: these manifests name few of the calls the application makes/);
  assert.match(text, /berth import prometheus --url PROMETHEUS_URL/);
  assert.match(text, /berth agent --prometheus PROMETHEUS_URL/);
  await note.scrollIntoViewIfNeeded();
  await shot('import-sock-shop-few-edges-1280');
  // The dry run wrote nothing.
  assert.equal((await admin(server.base, 'GET', '/api/estates/two-sites/file')).services.length, 12);
  assert.ok(readFileSync(sockShop, 'utf8').includes('user-db'));
});
