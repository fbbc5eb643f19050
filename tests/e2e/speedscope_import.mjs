// speedscope's own importer on a file, as a user opens one: the speedscope app
// of the npm package (dist/release/index.html) in Debian's chromium, the file
// given to its "Browse" input, driven by playwright-core. Prints the page's
// title, the profile chooser's text ("thread 1000 (1/4)") and any page error;
// exit 0 when the app shows the file's profiles, 1 when it does not.
// usage: node speedscope_import.mjs NODE_MODULES FILE
import { createRequire } from 'node:module';
import path from 'node:path';

const [modules, file] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { chromium } = require('playwright-core');
const app = path.join(path.resolve(modules), 'speedscope', 'dist', 'release', 'index.html');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
let status = 1;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', async (d) => { errors.push('dialog: ' + d.message()); await d.dismiss(); });
  await page.goto('file://' + app);
  await page.setInputFiles('input[type=file]', path.resolve(file));
  // the import ends with the file's name in the title, or with an error
  await page.waitForFunction(() => document.title !== 'speedscope', null, { timeout: 15000 }).catch(() => {});
  const text = await page.evaluate(() => document.body.innerText);
  const title = await page.title();
  const chooser = text.split('\n').find((l) => /\(\d+\/\d+\)$/.test(l)) || '';
  console.log('title: ' + title);
  console.log('profile: ' + chooser);
  if (errors.length) console.log('errors: ' + errors.join('; '));
  if (title !== 'speedscope' && !errors.length && !/went wrong/i.test(text)) status = 0;
} finally {
  await browser.close();
}
process.exit(status);
