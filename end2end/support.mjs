// Shared by the end-to-end tests and the speed bench: start a real
// `berth serve` (release build, fresh SQLite directory, known admin
// token) on a free port, make users through its API, and launch Debian's
// Chromium through playwright-core (Playwright's own browser downloads
// are not reachable here).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..');
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(repo, 'target');
// BERTH_E2E_BIN: another build of berth (e.g. a debug one while the
// release build is busy); the release build by default.
export const berthBin = process.env.BERTH_E2E_BIN || join(targetDir, 'release', 'berth');
// Where scripts/build-web.sh writes the bundle (its default, or BERTH_SITE_ROOT).
export const siteRoot = resolve(repo, process.env.BERTH_SITE_ROOT || 'target/site');
export const artifacts = join(here, 'artifacts');
// 64 hex characters: the server wants 32 or more.
export const ADMIN_TOKEN = 'e2e0'.repeat(16);

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
}

// The instant the sample estate was written for (Makefile SAMPLE_NOW): the
// tests seed it for this time (--sample-at) and evaluate at it (?now=), so
// the advice is the same whenever they run.
export const SAMPLE_NOW = '2026-11-30T04:05:00Z';

/// Start a server; resolves once /readyz answers 200. By default on the
/// bundle directory (--site-root) with the sample seeded for SAMPLE_NOW;
/// `{ embedded: true }` starts it in an empty directory with no
/// --site-root (the binary's own copy of the web application), and
/// `{ sampleAt: null }` seeds the sample for the real clock; `extraArgs`
/// are added to `berth serve`'s (e.g. a faster driver); `site` serves
/// another bundle directory than siteRoot (bench.mjs compares two).
export async function startServer({ embedded = false, sampleAt = SAMPLE_NOW, extraArgs = [], site = siteRoot } = {}) {
  const needed = embedded ? [berthBin] : [berthBin, join(site, 'pkg', 'berth.js')];
  for (const f of needed) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run scripts/build-web.sh and cargo build --release -p berth --features bundle first (make test does both)`);
  }
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));
  const cwd = embedded ? mkdtempSync(join(tmpdir(), 'berth-e2e-cwd-')) : repo;
  const base = `http://127.0.0.1:${port}`;
  const args = ['serve', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir,
    // The external-decider test runs its decider on this machine.
    '--decider-allow', '127.0.0.1/32'];
  if (!embedded) args.push('--site-root', site);
  if (sampleAt) args.push('--sample-at', sampleAt);
  args.push(...extraArgs);
  const env = { ...process.env, BERTH_ADMIN_TOKEN: ADMIN_TOKEN, RUST_LOG: embedded ? 'info' : 'warn' };
  delete env.BERTH_SITE_ROOT;
  const child = spawn(berthBin, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', d => { log += d; });
  // 30 s: a cold first start runs the migrations; it takes well under 1 s.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`berth serve exited ${child.exitCode}: ${log}`);
    try { if ((await fetch(`${base}/readyz`)).ok) break; } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`berth serve did not become ready in 30 s: ${log}`);
    await new Promise(r => setTimeout(r, 100));
  }
  return {
    base,
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      await new Promise(r => child.once('exit', r));
      // The server's log is kept beside the screenshots; a panic in it is
      // a failure even when the page that hit it was retried or lucky (a
      // panicking request is answered with nothing: ERR_EMPTY_RESPONSE).
      mkdirSync(artifacts, { recursive: true });
      writeFileSync(join(artifacts, `server-${port}.log`), log);
      rmSync(dataDir, { recursive: true, force: true });
      if (embedded) rmSync(cwd, { recursive: true, force: true });
      const panic = log.split('\n').findIndex(l => l.includes('panicked'));
      if (panic >= 0) {
        throw new Error(`berth serve panicked (log in artifacts/server-${port}.log):\n${log.split('\n').slice(panic, panic + 4).join('\n')}`);
      }
    },
  };
}

/// An API call as the bootstrap administrator.
export async function admin(base, method, path, body) {
  const r = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

export async function makeUser(base, name, role) {
  const password = `${name}-password-long-enough`;
  await admin(base, 'POST', '/api/users', { name, role, password });
  return { name, password };
}

export async function launch() {
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

// Sign-in sessions by server and user: each user signs in through the page
// once per server, and later tests reuse that session's cookie. The server
// allows 10 sign-in attempts per address, then one every 6 s (a guessing
// defence; token creation spends from the same budget), which a suite
// signing in before every test would spend in seconds.
const sessions = new Map();

/// Sign `user` in on `page` (through the login page the first time), and
/// wait until the header names them.
export async function signIn(page, base, user) {
  const key = `${base} ${user.name}`;
  const saved = sessions.get(key);
  if (saved) {
    await page.context().addCookies(saved);
    await page.goto(`${base}/`);
  } else {
    await page.goto(`${base}/login`);
    await page.getByLabel('User name').fill(user.name);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A refused sign-in shows an alert and stays on the page: fail at once
    // with what it says rather than waiting out the navigation.
    const refused = page.locator('fieldset.login [role=alert]').waitFor({ timeout: 60_000 })
      .then(async () => { throw new Error(`sign-in as ${user.name} refused: ${await page.locator('fieldset.login [role=alert]').textContent()}`); },
        () => {});
    await Promise.race([page.waitForURL(`${base}/`, { timeout: 60_000 }), refused]);
  }
  await page.getByTestId('who').getByText(`${user.name} (`).waitFor();
  if (!saved) sessions.set(key, await page.context().cookies());
}
