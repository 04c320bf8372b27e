import { readFileSync } from 'node:fs';
import { startServer, admin, makeUser, launch } from './support.mjs';
const server = await startServer();
const browser = await launch();
try {
  await admin(server.base, 'POST', '/api/estates?id=b', readFileSync('/tmp/e5k.json', 'utf8'));
  const user = await makeUser(server.base, 'bench', 'operator');
  const login = await fetch(`${server.base}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: user.name, password: user.password }) });
  const cookie = login.headers.get('set-cookie').split(';')[0].split('=');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addCookies([{ name: cookie[0], value: cookie[1], url: server.base }, { name: 'berth_signed_in', value: '1', url: server.base }]);
  const page = await ctx.newPage();
  for (const [p, sel] of [['/', '[data-testid=moves-empty], [data-testid=moves]'], ['/whatif', '[data-testid=totals]'], ['/place?service=' + JSON.parse(readFileSync('/tmp/e5k.json')).services[0].id, '[data-testid=place-verdict]']]) {
    await page.goto(`${server.base}${p}${p.includes('?') ? '&' : '?'}estate=b&now=2026-11-30T04:05:00Z`);
    await page.waitForSelector(sel, { timeout: 60000 });
    await page.waitForTimeout(2000);
    console.log(p, await page.evaluate(() => [...document.querySelectorAll('main section, main > *, main select, main ul, main table')].map(s => `${s.tagName}#${s.id || s.getAttribute('aria-labelledby') || s.className} ${s.getElementsByTagName('*').length}`).filter(x => Number(x.split(' ').at(-1)) > 200).join('\n')));
  }
} finally { await browser.close(); await server.stop(); }
