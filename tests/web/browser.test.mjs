// browser.test.mjs opens the quick-start notebook in classic Notebook 6
// (Debian's jupyter-notebook) in a real headless Chromium (Debian's, driven by
// playwright-core), runs every cell as a person would with Cell > Run All, and
// checks what the page shows: no error output, the "step N: loss" lines, and
// an <svg> chart where the notebook shows a live display. It leaves a
// screenshot in build/screenshots/quickstart.png.
//
// GOTRAIN_KERNEL picks the kernel (default gotrain); see harness.mjs.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';


import {
  chromiumPath,
  kernelName,
  killMatching,
  openBrowser,
  notebookPath,
  parseSteps,
  readNotebook,
  repoRoot,
  seconds,
  snippets,
  startJupyter,
  tempDir,
  waitFor,
} from './harness.mjs';

const screenshotDir = path.join(repoRoot, 'build', 'screenshots');
const notebookFile = 'quickstart.ipynb';

function log(msg) {
  process.stderr.write(`browser: ${msg}\n`);
}

// notebookState reads, inside the page, what the Notebook 6 JS API knows
// about the kernel and the code cells. It runs in the browser.
function notebookState() {
  const J = window.Jupyter;
  if (!J || !J.notebook || !J.notebook._fully_loaded) return { loaded: false };
  const nb = J.notebook;
  const kernel = nb.kernel;
  const icon = document.querySelector('#kernel_indicator_icon');
  const cells = nb
    .get_cells()
    .filter((c) => c.cell_type === 'code')
    .map((c) => ({
      prompt: c.input_prompt_number === undefined ? null : c.input_prompt_number,
      outputs: c.output_area.outputs.map((o) => ({
        type: o.output_type,
        name: o.name,
        text: o.text,
        ename: o.ename,
        evalue: o.evalue,
        mimes: o.data ? Object.keys(o.data) : [],
        html: o.data && typeof o.data['text/html'] === 'string' ? o.data['text/html'] : '',
      })),
    }));
  return {
    loaded: true,
    metadataKernel: nb.metadata.kernelspec ? nb.metadata.kernelspec.name : null,
    kernelName: kernel ? kernel.name : null,
    connected: Boolean(kernel && kernel.is_connected()),
    idle: Boolean(icon && icon.classList.contains('kernel_idle_icon')),
    indicator: icon ? icon.className : 'no indicator',
    cells,
  };
}

function describeState(s) {
  if (!s) return 'no state read from the page yet';
  if (!s.loaded) return 'Jupyter.notebook not loaded yet';
  const prompts = s.cells.map((c) => (c.prompt === null ? '[ ]' : `[${c.prompt}]`)).join(' ');
  return (
    `kernel ${s.kernelName} (metadata ${s.metadataKernel}), connected ${s.connected}, ` +
    `indicator "${s.indicator}", code cell prompts ${prompts}`
  );
}

// screenshot saves the whole notebook to build/screenshots/quickstart.png.
// Notebook 6 scrolls inside #site, so a full-page shot would show one screen:
// the viewport grows to the notebook's height instead.
async function screenshot(page) {
  const height = await page.evaluate(() => {
    const header = document.querySelector('#header');
    const container = document.querySelector('#notebook-container');
    return (header ? header.offsetHeight : 0) + (container ? container.scrollHeight : 0) + 40;
  });
  await page.setViewportSize({ width: 1280, height: Math.min(Math.max(height, 900), 6000) });
  await page.evaluate(() => document.querySelector('#site')?.scrollTo(0, 0));
  fs.mkdirSync(screenshotDir, { recursive: true });
  const shot = path.join(screenshotDir, 'quickstart.png');
  await page.screenshot({ path: shot, timeout: seconds(60) });
  assert.ok(fs.statSync(shot).size > 10_000, `${shot} is suspiciously small`);
  return shot;
}

describe(`classic Notebook in headless Chromium runs the quick-start notebook on kernel ${kernelName}`, {
  timeout: seconds(1500),
}, () => {
  let scratch;
  let server;
  let context;
  let page;
  let displayName;
  let lang; // the kernelspec's language, which picks the cells in snippets
  let state; // the last notebookState read from the page
  const read = async () => {
    state = await page.evaluate(notebookState);
    return state;
  };
  const detail = () => `${describeState(state)}\n${pageErrors.slice(-10).join('\n')}\n${server.logTail(30)}`;
  const pageErrors = [];

  before(async () => {
    assert.ok(fs.existsSync(chromiumPath), `no browser at ${chromiumPath}; run tests/web/setup.sh`);
    scratch = tempDir('gotrain-web-browser-');
    const rootDir = path.join(scratch, 'notebooks');
    fs.mkdirSync(rootDir);
    fs.copyFileSync(notebookPath, path.join(rootDir, notebookFile));
    server = await startJupyter({ app: 'notebook', rootDir, scratch, log });
    // Fail now, not after a long wait on a kernel-not-found dialog.
    const specs = await server.api('GET', '/api/kernelspecs');
    assert.ok(
      specs.kernelspecs[kernelName],
      `kernelspec ${kernelName} not found by the notebook server; ` +
        `it knows ${Object.keys(specs.kernelspecs).join(', ')} ` +
        `(JUPYTER_PATH=${process.env.JUPYTER_PATH || ''})`,
    );
    displayName = specs.kernelspecs[kernelName].spec.display_name;
    lang = specs.kernelspecs[kernelName].spec.language.toLowerCase();
    assert.ok(snippets[lang], `no test cells for kernel language ${lang}`);
    const profile = path.join(scratch, 'chromium-profile'); // fresh for every run
    ({ context, page } = await openBrowser(profile, { width: 1280, height: 900 }, pageErrors));
  });

  after(async () => {
    // Cleanup runs even when a test failed: the browser, the server (which
    // shuts its kernels down), then anything still carrying this run's
    // scratch path (the browser profile and kernel connection files live there).
    const t0 = Date.now();
    if (context) {
      let timer;
      const closed = await Promise.race([
        context.close().then(() => true, () => true),
        new Promise((r) => {
          timer = setTimeout(() => r(false), seconds(20));
        }),
      ]);
      clearTimeout(timer);
      if (!closed) log('the browser did not close in time; its processes are killed below');
      log(`browser closed in ${Date.now() - t0} ms`);
    }
    const t1 = Date.now();
    if (server) await server.stop();
    log(`server stopped in ${Date.now() - t1} ms`);
    if (scratch) {
      // A kernel has until the server exits to go; the browser's helpers
      // until close returns. Whatever is left is an orphan: kill it, and fail.
      const left = killMatching(scratch);
      fs.rmSync(scratch, { recursive: true, force: true });
      assert.deepEqual(
        left.map((p) => `${p.pid} ${p.cmd}`),
        [],
        'processes outlived the browser and the notebook server (now killed)',
      );
    }
  });

  it('runs every cell with Run All and shows the training output', async () => {
    const nb = readNotebook(notebookPath);
    const url = `${server.url}/notebooks/${notebookFile}?token=${server.token}`;
    log(`opening ${url.replace(server.token, '<token>')}`);
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: seconds(120) });


    await waitFor('the notebook to load and its kernel to connect and go idle', async () => {
      const s = await read();
      return s.loaded && s.connected && s.idle;
    }, { timeoutMs: seconds(180), intervalMs: 500, detail });

    // The notebook's metadata names the kernel; the page must have started
    // that one, not a fallback.
    assert.equal(state.metadataKernel, nb.metadata.kernelspec.name, 'kernelspec in the page metadata');
    if (state.kernelName !== kernelName) {
      log(`page started kernel ${state.kernelName}; selecting ${kernelName}`);
      await page.evaluate((name) => window.Jupyter.notebook.kernel_selector.set_kernel(name), kernelName);
      await waitFor(`kernel ${kernelName} to be selected, connect and go idle`, async () => {
        const s = await read();
        return s.kernelName === kernelName && s.connected && s.idle;
      }, { timeoutMs: seconds(180), intervalMs: 500, detail });
    }
    assert.equal(state.kernelName, kernelName, 'kernel running in the page');
    // What a person sees in the menu bar.
    const shownName = await page.locator('#kernel_indicator .kernel_indicator_name').innerText();
    assert.equal(shownName.trim(), displayName, 'kernel name shown in the menu bar');

    // Run All through the menu, as a person would; the JS API is the fallback
    // should the menu be hidden.
    if (await page.locator('#cell_menu').count()) {
      await clickMenu(page, 'cell_menu', 'run_all_cells');
    } else {
      await page.evaluate(() => window.Jupyter.notebook.execute_all_cells());
    }
    log('Run All clicked; waiting for every code cell to get an execution count');

    // Run All stops at the first cell that fails, leaving later cells
    // unnumbered; an error output therefore also ends the wait. The state
    // must hold for two polls in a row, since the idle indicator can flip
    // between two cells.
    let settled = 0;
    await waitFor('every code cell to have an execution count and the kernel to be idle', async () => {
      const s = await read();
      const finished =
        s.loaded &&
        s.idle &&
        s.cells.every((c) => c.prompt !== '*') &&
        (s.cells.every((c) => typeof c.prompt === 'number') ||
          s.cells.some((c) => c.outputs.some((o) => o.type === 'error')));
      settled = finished ? settled + 1 : 0;
      return settled >= 2;
    }, { timeoutMs: seconds(600), intervalMs: 1000, detail });

    // The screenshot is taken after the checks, or after the first failed
    // one, so a failure leaves a picture too.
    let failed = true;
    try {
      await checkPage(page, state, detail);
      failed = false;
    } finally {
      try {
        const shot = await screenshot(page);
        log(`screenshot saved to ${path.relative(repoRoot, shot)}`);
      } catch (err) {
        if (!failed) throw err;
        log(`no screenshot: ${err.message}`);
      }
    }
  });

  it('stops a running cell with Kernel > Interrupt, and the kernel still evaluates', async () => {
    const cells = snippets[lang];
    // A new cell at the bottom, run from the page; the quick-start's
    // session is still live, so this also checks that state survives.
    const index = await page.evaluate((code) => {
      const nb = window.Jupyter.notebook;
      const cell = nb.insert_cell_at_bottom('code');
      cell.set_text(code);
      cell.execute();
      return nb.get_cells().indexOf(cell);
    }, `${cells.sleepSetup}\n${cells.sleepLoop}`);
    const output = page.locator('#notebook .cell').nth(index).locator('.output_area');
    await waitFor(
      'the sleeping loop to print "sleeping" in the page',
      async () => (await output.allInnerTexts()).join('\n').includes('sleeping'),
      { timeoutMs: seconds(60), detail },
    );
    log('clicking Kernel > Interrupt');
    await clickMenu(page, 'kernel_menu', 'int_kernel');
    // The loop runs about 60 s if nothing stops it. Neither the idle
    // indicator nor the execution count says the cell's output is all in:
    // the interrupt_request's own idle status turns the indicator idle, and
    // the count comes with execute_reply on the shell channel, which may
    // overtake the error output on iopub (the protocol orders messages
    // within a channel only). So the wait is for the error output too, or
    // for the loop's last line should the interrupt not have stopped it.
    const cell = await waitFor('the interrupted cell to show its error and the kernel to be idle', async () => {
      const s = await read();
      const c = s.cells.at(-1);
      const ended = c.outputs.some((o) => o.type === 'error' || (o.text || '').includes('loop finished'));
      return s.idle && typeof c.prompt === 'number' && ended ? c : null;
    }, { timeoutMs: seconds(45), intervalMs: 500, detail });
    const text = cell.outputs.map((o) => o.text || '').join('');
    assert.ok(!text.includes('loop finished'), 'the loop ran to the end');
    const errors = cell.outputs.filter((o) => o.type === 'error');
    assert.equal(errors.length, 1, `want one error output, got ${JSON.stringify(cell.outputs)}`);
    assert.ok(errors[0].ename, 'the interrupt error has no ename');
    log(`interrupted cell shows ${errors[0].ename}: ${errors[0].evalue}`);

    const { code, want } = cells.afterInterrupt;
    const next = await page.evaluate((src) => {
      const nb = window.Jupyter.notebook;
      const c = nb.insert_cell_at_bottom('code');
      c.set_text(src);
      c.execute();
      return nb.get_cells().indexOf(c);
    }, code);
    // As above, the Out[] arrives on iopub and may come after the count.
    await waitFor(`${code} to be evaluated after the interrupt`, async () => {
      const s = await read();
      const c = s.cells.at(-1);
      return s.idle && typeof c.prompt === 'number' && c.outputs.some((o) => o.type === 'execute_result' || o.type === 'error');
    }, { timeoutMs: seconds(60), intervalMs: 500, detail });
    const result = state.cells.at(-1).outputs.find((o) => o.type === 'execute_result');
    assert.ok(result, `no Out[] for ${code}: ${JSON.stringify(state.cells.at(-1).outputs)}`);
    const shown = await page.locator('#notebook .cell').nth(next).locator('.output_area').allInnerTexts();
    assert.match(shown.join('\n'), new RegExp(`Out\\[\\d+\\]:\\s*${want}\\b`));
  });
});

// clickMenu opens a Notebook 6 menu (by the id of its list) and clicks one
// of its items (by the item's id), as a person would.
async function clickMenu(page, menuId, itemId) {
  await page.locator(`li:has(> #${menuId}) > a.dropdown-toggle`).click({ timeout: seconds(10) });
  await page.locator(`#${itemId} > a`).click({ timeout: seconds(10) });
}

// checkPage asserts what a person should see once Run All is done: no error
// output, every code cell numbered, the step lines, and the live chart.
async function checkPage(page, state, detail) {
  const outputs = state.cells.flatMap((c, i) => c.outputs.map((o) => ({ cell: i + 1, ...o })));
  const errors = outputs.filter((o) => o.type === 'error');
  assert.deepEqual(
    errors.map((o) => `code cell ${o.cell}: ${o.ename}: ${o.evalue}`),
    [],
    'error output in the page',
  );
  state.cells.forEach((c, i) =>
    assert.equal(typeof c.prompt, 'number', `code cell ${i + 1} has no execution count (prompt ${c.prompt})`),
  );
  const stderr = outputs.filter((o) => o.type === 'stream' && o.name === 'stderr');
  for (const o of stderr) log(`stderr in code cell ${o.cell}: ${JSON.stringify(o.text).slice(0, 300)}`);
  // The page must show what the kernel sent: read the rendered text, not the
  // JS model, for the step lines.
  const rendered = (await page.locator('#notebook .output_area').allInnerTexts()).join('\n');
  const steps = parseSteps(rendered);
  assert.ok(steps.length > 0, `no "step N: loss X.XXXX" line in the rendered output:\n${rendered.slice(0, 2000)}`);
  steps.forEach((s, i) => assert.equal(s.step, i + 1, `rendered step lines out of order at line ${i + 1}`));
  log(`${steps.length} step lines rendered, loss ${steps[0].loss} -> ${steps.at(-1).loss}`);

  // A live display (image/svg+xml, or HTML holding an <svg>) must render as
  // an <svg> element inside an output area.
  const live = outputs.filter((o) => o.mimes.includes('image/svg+xml') || /<svg[\s>]/.test(o.html));
  if (live.length) {
    const charts = page.locator('#notebook .output_area svg');
    await waitFor('an <svg> chart to render in an output area', async () => (await charts.count()) > 0, {
      timeoutMs: seconds(30),
      detail,
    });
    assert.ok(await charts.first().isVisible(), 'the <svg> chart is not visible');
    log(`${await charts.count()} <svg> element(s) in output areas`);
  } else {
    log('the notebook shows no live display; no <svg> chart expected');
  }
}
