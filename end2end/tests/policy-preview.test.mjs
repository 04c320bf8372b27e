// Policy shows its effect first (issue 35 item 5): the preview sits at the
// top of the page and, as a weight is typed, lists the moves it would add,
// remove and send elsewhere (by service, from → to) and the headline
// totals under the saved policy and the edited one (round-trip points,
// cross-site MB/s, $/month), a saving positive and drawn good; durations
// read in human units with their seconds still editable; the page fits a
// 390 px phone. Also: New estate shows no staleness banner of the estate
// chosen before it. A real server, Debian's Chromium, the sample estate
// at its instant; what the preview must say is worked out here from the
// server's own advice under both policies, not written into the test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts, signIn, admin, SAMPLE_NOW as NOW } from '../support.mjs';

// The edit: round trips weighed at a fifth of the default (1), so moves
// made to shorten them go, others are sent elsewhere and one is added
// (on the sample at its instant: 1 added, 4 removed, 5 sent elsewhere).
const FIELD = 'round_trip_weight';
const VALUE = 0.2;

let server, browser, operator, saved, edited;

before(async () => {
  server = await startServer();
  operator = await makeUser(server.base, 'petra', 'operator');
  browser = await launch();
  // The server's advice under the saved policy and under the edited one
  // (saved for a moment, then put back).
  const { policy } = await admin(server.base, 'GET', '/api/estates/sample/policy');
  saved = (await admin(server.base, 'GET', `/api/estates/sample/advice?now=${NOW}`)).result;
  await admin(server.base, 'PUT', '/api/estates/sample/policy', { ...policy, [FIELD]: VALUE });
  edited = (await admin(server.base, 'GET', `/api/estates/sample/advice?now=${NOW}`)).result;
  await admin(server.base, 'PUT', '/api/estates/sample/policy', policy);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function newPage(viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', e => problems.push(`page error: ${e.message}`));
  // The endpoints of features a server may lack answer 404: that is how
  // the pages learn it (as in web.test.mjs).
  page.on('console', m => {
    if (m.type() !== 'error') return;
    const url = m.location()?.url ?? '';
    if (m.text().startsWith('Failed to load resource') && /\/api\/(deciders|driver)$/.test(url)) return;
    problems.push(`console error: ${m.text()} (${url})`);
  });
  return { page, problems };
}

/// The preview's lines, worked out from the two advices by service.
function expectedChanges() {
  const rec = r => r.moves.filter(m => !m.evidence);
  const before = new Map(rec(saved).map(m => [m.service, m]));
  const after = new Map(rec(edited).map(m => [m.service, m]));
  const line = m => `${m.service}: ${m.from} → ${m.to}`;
  return {
    added: rec(edited).filter(m => !before.has(m.service)).map(line),
    removed: rec(saved).filter(m => !after.has(m.service)).map(line),
    changed: rec(edited).filter(m => before.has(m.service) && before.get(m.service).to !== m.to)
      .map(m => `${line(m)} (instead of → ${before.get(m.service).to})`),
  };
}

const items = async (page, testid) => page.locator(`[data-testid=${testid}] li`).allTextContents();

test('the preview at the top lists the moves a weight adds, removes and sends elsewhere, and the totals before and after', async () => {
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/policy?estate=sample&now=${NOW}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=policy-digest]')?.textContent.length > 0);
  await page.getByLabel(FIELD, { exact: true }).fill(String(VALUE));
  const summary = page.getByTestId('preview-summary');
  await summary.waitFor();

  // At the top: above the first table of fields.
  const previewBox = await page.getByTestId('policy-preview').boundingBox();
  const firstGroup = await page.locator('section.policy-group').first().boundingBox();
  assert.ok(previewBox.y + previewBox.height <= firstGroup.y, `preview ${JSON.stringify(previewBox)} above the fields ${JSON.stringify(firstGroup)}`);

  const want = expectedChanges();
  assert.ok(want.added.length > 0 && want.removed.length > 0 && want.changed.length > 0, `the edit adds, removes and sends elsewhere: ${JSON.stringify(want)}`);
  assert.deepEqual(await items(page, 'preview-added'), want.added);
  assert.deepEqual(await items(page, 'preview-removed'), want.removed);
  assert.deepEqual(await items(page, 'preview-changed'), want.changed);
  const rec = r => r.moves.filter(m => !m.evidence).length;
  assert.equal(await summary.getAttribute('data-before'), String(rec(saved)));
  assert.equal(await summary.getAttribute('data-after'), String(rec(edited)));

  // The headline totals: the server's, under each policy, and the
  // saving signed before − after, drawn good when positive.
  const totals = page.getByTestId('preview-totals');
  for (const [testid, key] of [['preview-total-cost', 'cost'], ['preview-total-rtt', 'round_trip'], ['preview-total-cross', 'cross_site_mb_s']]) {
    const row = totals.getByTestId(testid);
    const b = Number(await row.getAttribute('data-before'));
    const a = Number(await row.getAttribute('data-after'));
    assert.ok(Math.abs(b - saved.totals_after[key]) < 1e-3, `${key} before: ${b} vs ${saved.totals_after[key]}`);
    assert.ok(Math.abs(a - edited.totals_after[key]) < 1e-3, `${key} after: ${a} vs ${edited.totals_after[key]}`);
    const saving = row.locator('td').last();
    const cls = await saving.getAttribute('class');
    if (b - a > 0.05) assert.match(cls, /\bgood\b/, `${key}: ${cls}`);
    if (b - a < -0.05) assert.match(cls, /\bbad\b/, `${key}: ${cls}`);
    assert.match(await saving.textContent(), b - a < -0.05 ? /^−/ : /^\+/);
  }
  assert.match(await totals.getByTestId('preview-total-cross').textContent(), /MB\/s/);
  assert.match(await totals.getByTestId('preview-total-usd').textContent(), /\$[\d,]+\/month.*\$[\d,]+\/month/);
  await page.screenshot({ path: join(artifacts, 'policy-preview-top.png') });

  // It follows the typing: back to the saved value, nothing changes.
  const at = await summary.getAttribute('data-at');
  await page.getByRole('button', { name: new RegExp(`^Reset ${FIELD} to its default`) }).click();
  await page.waitForFunction(a => document.querySelector('[data-testid=preview-summary]')?.dataset.at !== a, at);
  assert.equal(await page.locator('[data-testid=preview-added] li, [data-testid=preview-removed] li, [data-testid=preview-changed] li').count(), 0);
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('durations read in human units, and seconds or words are both accepted', async () => {
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/policy?estate=sample&now=${NOW}`);
  const measured = page.getByLabel('staleness.measured_s', { exact: true });
  await measured.waitFor();
  assert.equal(await measured.inputValue(), '900', 'the seconds, editable');
  const human = path => page.getByTestId(`human-${path}`);
  assert.equal(await human('staleness.measured_s').textContent(), '= 15 min');
  assert.equal(await human('staleness.reported_s').textContent(), '= 1 day');
  assert.equal(await human('staleness.inferred_s').textContent(), '= 7 days');
  const row = page.locator('tr', { has: measured });
  assert.match(await row.textContent(), /15 min \(900 s\)/, 'the default in human units');
  // Words typed: read as seconds, no problem, the preview computes.
  await measured.fill('2 h');
  await page.waitForFunction(() => document.querySelector('[data-testid="human-staleness.measured_s"]')?.textContent === '= 2 h');
  assert.equal(await page.getByTestId('error-staleness.measured_s').textContent(), '');
  await page.getByTestId('preview-summary').waitFor();
  // Seconds typed: the same.
  await measured.fill('7200');
  await page.waitForFunction(() => document.querySelector('[data-testid="human-staleness.measured_s"]')?.textContent === '= 2 h');
  // Neither: said at the field.
  await measured.fill('soon');
  await page.getByTestId('error-staleness.measured_s').getByText(/is not a duration/).waitFor();
  assert.equal(await measured.getAttribute('aria-invalid'), 'true');
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('at 390 × 844 the policy page with its preview does not scroll sideways', async () => {
  const { page, problems } = await newPage({ width: 390, height: 844 });
  await signIn(page, server.base, operator);
  await page.goto(`${server.base}/policy?estate=sample&now=${NOW}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=policy-digest]')?.textContent.length > 0);
  await page.getByLabel(FIELD, { exact: true }).fill(String(VALUE));
  await page.getByTestId('preview-summary').waitFor();
  await page.getByLabel('staleness.measured_s', { exact: true }).waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `scrollWidth ${width}`);
  await page.screenshot({ path: join(artifacts, 'policy-390.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('New estate shows no staleness banner of the estate chosen before it', async () => {
  const { page, problems } = await newPage();
  await signIn(page, server.base, operator);
  // Half a year on, the sample is stale: Placement says so.
  const later = new Date(Date.parse(NOW) + 183 * 86400e3).toISOString().replace(/\.\d+Z$/, 'Z');
  await page.goto(`${server.base}/?estate=sample&now=${later}`);
  const banner = page.getByTestId('stale-banner');
  await banner.waitFor();
  // The header's link to New estate: the banner goes.
  await page.getByRole('link', { name: 'New estate', exact: true }).click();
  await page.waitForURL(/\/estates\/new/);
  await page.getByRole('heading', { name: 'New estate' }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid=stale-banner]'));
  // Opened directly too, once the estate is picked (the switcher shows it).
  await page.goto(`${server.base}/estates/new?estate=sample&now=${later}`);
  await page.waitForFunction(() => document.querySelector('[data-testid=estate-switcher]')?.value === 'sample');
  await page.waitForTimeout(500);
  assert.equal(await banner.count(), 0);
  // Back on an estate's page it is said again.
  await page.getByRole('link', { name: 'Placement', exact: true }).click();
  await banner.waitFor();
  assert.deepEqual(problems, []);
  await page.context().close();
});
