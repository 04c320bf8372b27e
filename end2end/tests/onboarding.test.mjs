// Onboarding in the pages (issue 13 item 5): an operator creates an estate
// from the city picker, imports Kubernetes manifests into one of its
// clusters (dry run, then Apply) and sees its advice; bad manifests and a
// bad estate file are refused at their lines with nothing written; an
// administrator makes a token that is shown once, works, and stops working
// once revoked; a viewer is kept out of Admin and gets no Apply.
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startServer, makeUser, launch, artifacts, admin, repo, signIn } from '../support.mjs';

// The shared fixtures live beside the repository (a symlink in worktrees).
const boutique = join(repo, '..', 'shared', 'fixtures', 'kubernetes', 'online-boutique.yaml');
const sockShop = join(repo, '..', 'shared', 'fixtures', 'kubernetes', 'sock-shop.yaml');

let server, browser, operator, viewer, administrator;
let page, problems;

before(async () => {
  server = await startServer();
  operator = await makeUser(server.base, 'otto', 'operator');
  viewer = await makeUser(server.base, 'vera', 'viewer');
  administrator = await makeUser(server.base, 'alma', 'admin');
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// No console error and no page error, except the refusals a test provokes
// on purpose and then lets through by name (`expectRefusals`).
let expected = [];
const expectRefusals = (...statuses) => { expected = statuses.map(s => `status of ${s}`); };
beforeEach(async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  problems = [];
  expected = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  page.on('console', m => {
    if (m.type() !== 'error') return;
    const url = m.location()?.url ?? '';
    if (m.text().startsWith('Failed to load resource') && /\/api\/(deciders|driver)$/.test(url)) return;
    problems.push(`console error: ${m.text()} (${url})`);
  });
});

afterEach(async () => {
  await page.context().close();
  const left = problems.filter(p => !expected.some(e => p.includes(e)));
  assert.deepEqual(left, [], 'no console errors');
});

const shot = name => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
const version = async id => (await admin(server.base, 'GET', `/api/estates/${id}`)).version;

test('an operator creates the estate "Lab" from the city picker; the engine places each error at its field first', async () => {
  await signIn(page, server.base, operator);
  await page.getByRole('link', { name: 'New estate' }).click();
  await page.waitForURL(/\/estates\/new/);
  await page.getByLabel('Estate name').fill('Lab');
  assert.equal(await page.getByLabel('Estate id').inputValue(), 'lab', 'the id follows the name');

  const site = n => page.getByRole('group', { name: `Site ${n}` });
  const cluster = n => page.getByRole('group', { name: `Cluster ${n}` });
  await site(1).getByLabel('City').selectOption('Frankfurt');
  assert.equal(await site(1).getByLabel('Site id').inputValue(), 'fra');
  assert.equal(await site(1).getByLabel('Jurisdiction').inputValue(), 'eu');
  assert.equal(await site(1).getByLabel('Latitude').inputValue(), '50.11');
  await page.getByRole('button', { name: 'Add a site' }).click();
  await site(2).getByLabel('City').selectOption('Paris');
  assert.equal(await site(2).getByLabel('Site id').inputValue(), 'par');

  // First with mistakes: CPU that is not a number, a second cluster
  // without an id or sizes.
  await cluster(1).getByLabel('Cluster id').fill('c-fra-1');
  await cluster(1).getByLabel('Site', { exact: true }).selectOption('fra');
  await cluster(1).getByLabel('CPU total (cores)').fill('lots');
  await cluster(1).getByLabel('Memory total (GiB)').fill('128');
  await page.getByRole('button', { name: 'Add a cluster' }).click();
  await page.getByRole('button', { name: 'Check' }).click();
  const at = path => page.locator(`.field-error[data-path="${path}"]`);
  await at('/clusters/0/cpu_total').waitFor();
  assert.match(await at('/clusters/0/cpu_total').textContent(), /number/);
  // The error sits inside the cluster's own fieldset, under its input.
  assert.equal(await cluster(1).locator('.field-error[data-path="/clusters/0/cpu_total"]').count(), 1);
  assert.ok(await cluster(2).locator('.field-error').count() >= 1, 'the second cluster is told what it lacks');
  assert.match(await cluster(2).textContent(), /missing required field "id"/);
  await shot('new-estate-errors');

  await cluster(1).getByLabel('CPU total (cores)').fill('32');
  await cluster(2).getByLabel('Cluster id').fill('c-par-1');
  assert.equal(await cluster(2).getByLabel('Site', { exact: true }).inputValue(), 'par', 'a new cluster starts at the last site');
  await cluster(2).getByLabel('CPU total (cores)').fill('16');
  await cluster(2).getByLabel('Memory total (GiB)').fill('64');
  await page.getByRole('button', { name: 'Check' }).click();
  await page.getByTestId('check-ok').waitFor();
  assert.equal(await page.locator('.field-error').count(), 0);
  await shot('new-estate-form');

  await page.getByRole('button', { name: 'Create the estate' }).click();
  // The form gives way to the next steps (issue 35), then to the estate.
  await page.getByTestId('next-steps').waitFor();
  await page.getByRole('link', { name: 'Open the estate' }).click();
  await page.waitForURL(`${server.base}/estate?estate=lab`);
  const switcher = page.getByTestId('estate-switcher');
  await switcher.locator('option[value=lab]').waitFor({ state: 'attached' });
  assert.equal(await switcher.inputValue(), 'lab');
  await page.locator('[data-testid=clusters] tbody tr').nth(1).waitFor();
  const file = await admin(server.base, 'GET', '/api/estates/lab/file');
  assert.deepEqual(file.sites.map(s => [s.id, s.jurisdiction, s.lat, s.lon]), [['fra', 'eu', 50.11, 8.68], ['par', 'eu', 48.86, 2.35]]);
  assert.deepEqual(file.clusters.map(c => [c.id, c.site, c.cpu_total]), [['c-fra-1', 'fra', 32], ['c-par-1', 'par', 16]]);
  assert.equal(await version('lab'), 1);
});

test('Import: a dry run of Online Boutique reports services and notes and writes nothing; Apply writes; Placement renders and matches the server', async () => {
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/import?estate=lab`);
  const clusterPick = page.getByLabel('Cluster', { exact: true });
  await clusterPick.locator('option[value="c-fra-1"]').waitFor({ state: 'attached' });
  await clusterPick.selectOption('c-fra-1');
  await page.getByLabel('Manifest files').setInputFiles(boutique);
  await page.getByTestId('k8s-picked').waitFor();
  const apply = page.getByTestId('k8s-apply');
  assert.ok(await apply.isDisabled(), 'no Apply before a dry run');
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  const report = page.getByTestId('k8s-report');
  await report.waitFor();
  assert.equal(await report.getAttribute('data-written'), 'false');
  const added = await page.getByTestId('k8s-added').locator('li').allTextContents();
  assert.ok(added.includes('frontend') && added.includes('cartservice'), added.join(', '));
  assert.equal(added.length, 12);
  const notes = page.getByTestId('k8s-notes').locator('li');
  assert.ok(await notes.count() >= 1, 'at least one note');
  // The fixture's frontend names an address no object of it serves, and
  // the load generator's init container declares no request.
  assert.match(await page.locator('[data-testid=k8s-notes] li[data-code=unresolved_address]').textContent(), /frontend.*shoppingassistantservice/);
  assert.match(await page.locator('[data-testid=k8s-notes] li[data-code=init_container_without_request]').textContent(), /loadgenerator/);
  assert.equal(await page.getByTestId('k8s-services').locator('tbody tr').count(), 12);
  assert.ok(await page.getByTestId('k8s-flows-added').locator('li').count() >= 1);
  assert.equal(await version('lab'), 1, 'a dry run writes nothing');
  await shot('import-dry-run');

  // Changing the input takes Apply away until it is checked again.
  await clusterPick.selectOption('c-par-1');
  assert.ok(await apply.isDisabled(), 'another cluster is another input');
  await clusterPick.selectOption('c-fra-1');
  assert.ok(await apply.isDisabled(), 'back to the same input still needs a new dry run');
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  await page.waitForFunction(() => !document.querySelector('[data-testid=k8s-apply]').disabled);
  await apply.click();
  const applied = page.getByTestId('k8s-applied');
  await applied.waitFor();
  assert.match(await applied.textContent(), /version 2/);
  assert.equal(await version('lab'), 2);
  assert.ok(await apply.isDisabled(), 'applied once, Apply waits for the next dry run');
  await shot('import-applied');

  await page.getByRole('link', { name: 'Placement' }).click();
  await page.waitForURL(/\/\?estate=lab/);
  await page.locator('[data-testid=moves] li.move, [data-testid=moves-empty]').first().waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=provenance]')?.dataset.parity !== 'pending');
  const prov = page.getByTestId('provenance');
  assert.equal(await prov.getAttribute('data-parity'), 'match', await prov.textContent());
  assert.match(await prov.textContent(), /version 2/);
  await shot('import-placement');
});

test('Placement names the services that can never move for want of a request (Sock Shop), and does not call the estate settled', async () => {
  const r = await admin(server.base, 'POST', '/api/estates/lab/import/kubernetes', {
    cluster: 'c-par-1', files: [{ name: 'sock-shop.yaml', text: readFileSync(sockShop, 'utf8') }], skip_invalid: true,
  });
  assert.ok(r.written, JSON.stringify(r));
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/?estate=lab`);
  const unknown = page.getByTestId('unknown-requests');
  await unknown.locator('li').first().waitFor();
  const items = await unknown.locator('li').allTextContents();
  assert.ok(items.length >= 1, 'Sock Shop has services without requests');
  for (const i of items) {
    // What is missing, then the fix in the manifests' words and the file's.
    const m = i.match(/^(\S+) on c-par-1: no (CPU|memory|CPU or memory) request\. Fix: add (resources\.requests\.\w+( and resources\.requests\.\w+)?) to every container of (\S+), or set .+ on it in the estate file\.$/);
    assert.ok(m, i);
    assert.equal(m[5], m[1], 'the fix names the service');
    assert.equal(m[3].includes('cpu'), m[2].includes('CPU'), i);
  }
  const empty = page.getByTestId('moves-empty');
  if (await empty.count()) assert.doesNotMatch(await empty.textContent(), /every service is where it should be/);
  await shot('placement-unknown-requests');
});

test('a broken manifest is refused at its file and line, Apply stays off, nothing is written; a bad estate file shows the engine\'s errors with lines', async () => {
  expectRefusals(422);
  await signIn(page, server.base, operator);
  const dir = mkdtempSync(join(tmpdir(), 'berth-onboarding-'));
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: broken',
    '  labels: {app: broken',
    'spec:',
    '  replicas: 1',
    '',
  ].join('\n'));
  const before = await version('lab');
  await page.goto(`${server.base}/import?estate=lab`);
  await page.getByLabel('Cluster', { exact: true }).locator('option[value="c-fra-1"]').waitFor({ state: 'attached' });
  await page.getByLabel('Manifest files').setInputFiles(broken);
  await page.getByTestId('k8s-picked').waitFor();
  await page.getByRole('button', { name: 'Check (dry run)' }).click();
  const listed = page.getByTestId('k8s-problems').locator('li');
  await listed.first().waitFor();
  assert.match(await listed.first().textContent(), /^broken\.yaml line \d+/);
  assert.match(await page.getByTestId('k8s-error').textContent(), /nothing imported/);
  assert.ok(await page.getByTestId('k8s-apply').isDisabled(), 'no Apply after a refused dry run');
  assert.equal(await page.getByTestId('k8s-report').count(), 0);
  assert.equal(await version('lab'), before, 'nothing written');
  await shot('import-bad-upload');

  // An estate file with two mistakes, found by the engine in the page.
  const file = await admin(server.base, 'GET', '/api/estates/lab/file');
  file.clusters[0].health = 'fine';
  file.clusters[1].cpu_total = -4;
  const text = JSON.stringify(file, null, 2);
  const requests = [];
  page.on('request', r => requests.push(`${r.method()} ${r.url()}`));
  await page.getByLabel('Estate file text').fill(text);
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  const errors = page.getByTestId('estate-file-problems').locator('li');
  await errors.first().waitFor();
  const lines = await errors.allTextContents();
  const healthLine = text.split('\n').findIndex(l => l.includes('"fine"')) + 1;
  assert.ok(lines.some(l => l.startsWith(`line ${healthLine} /clusters/0/health`)), lines.join(' | '));
  assert.ok(lines.some(l => /\/clusters\/1\/cpu_total/.test(l)), lines.join(' | '));
  assert.ok(await page.getByTestId('file-apply').isDisabled());
  assert.deepEqual(requests, [], 'checked in the browser');
  await shot('import-bad-estate-file');

  // Corrected, it checks with a diff by id, and Apply replaces the estate.
  file.clusters[0].health = 'watch';
  file.clusters[1].cpu_total = 24;
  await page.getByLabel('Estate file text').fill(JSON.stringify(file, null, 2));
  await page.getByRole('button', { name: 'Check', exact: true }).click();
  const diff = page.getByTestId('file-diff');
  await diff.waitFor();
  assert.match(await diff.locator('tr[data-kind=clusters]').textContent(), /c-fra-1, c-par-1/);
  await page.getByTestId('file-apply').click();
  await page.getByTestId('file-applied').waitFor();
  assert.equal(await version('lab'), before + 1);
  await shot('import-estate-file-applied');
});

test('an administrator creates a viewer token, sees it once, it reads the API; revoked in the page, it is refused', async () => {
  await signIn(page, server.base, administrator);
  await page.getByRole('link', { name: 'Admin' }).click();
  await page.waitForURL(/\/admin/);
  await page.getByTestId('users').locator('tr[data-user=otto]').waitFor();
  await page.getByLabel('Token name').fill('ci-reader');
  await page.getByLabel('Token role').selectOption('viewer');
  await page.getByRole('button', { name: 'Create token' }).click();
  const once = page.getByTestId('token-once');
  await once.waitFor();
  assert.match(await once.textContent(), /will not be shown again/);
  const secret = (await page.getByTestId('token-secret').textContent()).trim();
  assert.ok(secret.length >= 32, 'a token');
  const row = page.locator('[data-testid=tokens] tr', { hasText: 'ci-reader' });
  await row.waitFor();
  assert.equal(await row.getByTestId('token-state').textContent(), 'live');
  assert.ok(!(await page.getByTestId('tokens').textContent()).includes(secret), 'the list never shows the token');
  await shot('admin-tokens');

  const read = () => fetch(`${server.base}/api/estates`, { headers: { authorization: `Bearer ${secret}` } });
  const ok = await read();
  assert.equal(ok.status, 200);
  assert.ok((await ok.json()).estates.some(e => e.id === 'lab'));

  // Shown once: a reload has only the list.
  await page.reload();
  await row.waitFor();
  assert.equal(await page.getByTestId('token-once').count(), 0);
  await row.getByRole('button', { name: 'Revoke ci-reader' }).click();
  await row.getByRole('button', { name: 'Yes, revoke' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=tokens] tr')]
    .some(r => r.textContent.includes('ci-reader') && r.querySelector('[data-testid=token-state]')?.textContent.startsWith('revoked')));
  assert.equal(await row.getByRole('button', { name: /Revoke/ }).count(), 0, 'a revoked token has nothing left to revoke');
  await shot('admin-token-revoked');
  assert.equal((await read()).status, 401);

  // Users: one made and deleted here.
  await page.getByLabel('User name').fill('temp-user');
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  // The rules are said at their fields as they are typed (the engine's,
  // the server's own), before anything is sent (issue 35).
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByLabel('User name').focus();
  assert.equal(await page.getByTestId('user-password-problem').textContent(), 'At least 12 characters; this one has 5.');
  await page.getByLabel('User name').fill('Temp');
  await page.getByLabel('Password', { exact: true }).focus();
  assert.match(await page.getByTestId('user-name-problem').textContent(), /^Character 1 'T' is a capital letter; a user name is 1–64 characters of a–z/);
  await page.getByRole('button', { name: 'Create user' }).click();
  assert.equal(await page.getByTestId('users-error').count(), 0, 'nothing went to the server');
  await shot('admin-user-field-problems');
  await page.getByLabel('User name').fill('temp-user');
  assert.equal(await page.getByTestId('user-name-problem').textContent(), '');
  await page.getByLabel('Password', { exact: true }).fill('temp-user-password-long');
  await page.getByRole('button', { name: 'Create user' }).click();
  const temp = page.getByTestId('users').locator('tr[data-user=temp-user]');
  await temp.waitFor();
  await temp.getByRole('button', { name: 'Delete temp-user' }).click();
  await temp.getByRole('button', { name: 'Yes, delete' }).click();
  await temp.waitFor({ state: 'detached' });
  await shot('admin-users');
});

test('a viewer gets the administrators-only message on Admin, and Import offers no Apply', async () => {
  await signIn(page, server.base, viewer);
  // The header's pages (Placement's next steps may name the Import page).
  const nav = page.getByRole('navigation', { name: 'Pages' });
  assert.equal(await nav.getByRole('link', { name: 'Admin' }).count(), 0);
  assert.equal(await nav.getByRole('link', { name: 'Import' }).count(), 0);
  await page.goto(`${server.base}/admin`);
  await page.getByTestId('admins-only').waitFor();
  assert.match(await page.getByTestId('admins-only').textContent(), /administrators only/);
  assert.equal(await page.getByLabel('Token name').count(), 0);
  await shot('admin-viewer');
  await page.goto(`${server.base}/import?estate=lab`);
  await page.getByTestId('operators-only').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Apply' }).count(), 0);
  assert.equal(await page.getByLabel('Manifest files').count(), 0);
  await page.goto(`${server.base}/estates/new`);
  await page.getByTestId('operators-only').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Create the estate' }).count(), 0);
});
