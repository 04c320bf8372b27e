// Every page of the sample at the two sizes new users bring (issue 34):
// 1280×800 and 390×844, full page, signed in as an administrator, at the
// sample's instant. Writes artifacts/pages/<page>-<width>.png and prints
// each page's height and horizontal overflow, for a person to look at; a
// tall page is also cut into screens of the viewport's size
// (<page>-<width>-s<k>.png, at most SCREENS of them, default 6), which an
// image viewer shows at a readable scale.
// Run after the bundle and the release binary are built:
//   node end2end/screenshots.mjs
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, makeUser, launch, artifacts, signIn, SAMPLE_NOW } from './support.mjs';

const pages = [
  ['placement', '/', '[data-testid=moves] li.move'],
  ['whatif', '/whatif', 'h1'],
  ['deciders', '/deciders', 'h1'],
  ['estate', '/estate', '[data-testid=map] circle'],
  ['policy', '/policy', 'h1'],
  ['health', '/health', '[data-testid=estate-health]'],
  ['new-estate', '/estates/new', 'h1'],
  ['import', '/import', 'h1'],
  ['admin', '/admin', '[data-testid=users]'],
];
const out = join(artifacts, 'pages');
mkdirSync(out, { recursive: true });
const server = await startServer();
const ada = await makeUser(server.base, 'ada', 'admin');
const browser = await launch();
try {
  for (const [w, h] of [[1280, 800], [390, 844]]) {
    const context = await browser.newContext({ viewport: { width: w, height: h } });
    const page = await context.newPage();
    await signIn(page, server.base, ada);
    for (const [name, path, ready] of pages) {
      await page.goto(`${server.base}${path}?now=${SAMPLE_NOW}`);
      await page.locator(ready).first().waitFor({ timeout: 60_000 });
      await page.waitForLoadState('networkidle');
      const { height, overflow } = await page.evaluate(() => ({
        height: document.documentElement.scrollHeight,
        overflow: document.documentElement.scrollWidth - window.innerWidth,
      }));
      const file = join(out, `${name}-${w}.png`);
      await page.screenshot({ path: file, fullPage: true });
      const screens = Math.min(Math.ceil(height / h), Number(process.env.SCREENS ?? 6));
      for (let k = 0; k < screens; k++) {
        const clip = { x: 0, y: k * h, width: w, height: Math.min(h, height - k * h) };
        await page.screenshot({ path: join(out, `${name}-${w}-s${k + 1}.png`), clip, fullPage: true });
      }
      console.log(`${name.padEnd(11)} ${String(w).padStart(4)} px: ${height} px tall, ${overflow > 1 ? `${overflow} px too wide` : 'no horizontal scroll'} → ${file}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
