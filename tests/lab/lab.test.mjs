// lab.test.mjs drives the JupyterLab application built from tests/lab (see
// main.py and webpack.config.js) in headless Chromium against the gotrain
// kernel: it opens notebooks/01-quickstart.ipynb with the gotrain kernel,
// runs every cell from the Run menu, checks the loss lines, the monitor's
// chart (rendered as <svg> and updated in place), and that no cell shows an
// error; then it interrupts a running training loop from the Kernel menu and
// checks the Interrupted error and that the session still trains; runs
// notebooks/02-mnist.ipynb to its final test accuracy; and in
// notebooks/03-custom-loops.ipynb restarts the kernel from the Kernel menu
// where the notebook says to and checks that the checkpoint saved before
// restores with the same accuracy. Screenshots are kept in $GOTRAIN_LAB_OUT
// (default build/lab-test): quickstart.png, mnist.png,
// custom-loops-restored.png, and last.png of the page as the test ended.
//
// It reuses tests/web/harness.mjs for scratch directories, waits, ports and
// the kill-by-marker cleanup. Environment: JUPYTER_PATH (the kernelspec),
// GOTRAIN_LAB_BUILD (the webpack output, default build/lab),
// GOTRAIN_CHROMIUM, GOTRAIN_WEB_SLOW.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  chromiumPath,
  debianPython,
  freePort,
  killMatching,
  openBrowser,
  parseSteps,
  repoRoot,
  seconds,
  sleep,
  tempDir,
  waitFor,
} from '../web/harness.mjs';

const labDir = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(process.env.GOTRAIN_LAB_OUT || path.join(repoRoot, 'build', 'lab-test'));
const buildDir = path.resolve(process.env.GOTRAIN_LAB_BUILD || path.join(repoRoot, 'build', 'lab'));
const notebookFile = '01-quickstart.ipynb';
const mnistFile = '02-mnist.ipynb';
const loopsFile = '03-custom-loops.ipynb';

function log(msg) {
  process.stderr.write(`lab.test: ${msg}\n`);
}

// startLab starts main.py (a LabServerApp) on loopback in its own process
// group, with runtime, config and settings under scratch, and waits for
// its REST API.
async function startLab(scratch, rootDir) {
  const port = await freePort();
  const token = crypto.randomBytes(24).toString('hex');
  for (const d of ['runtime', 'config', 'state']) fs.mkdirSync(path.join(scratch, d), { recursive: true });
  const args = [
    path.join(labDir, 'main.py'),
    '--ServerApp.ip=127.0.0.1',
    `--ServerApp.port=${port}`,
    '--ServerApp.port_retries=0',
    `--ServerApp.token=${token}`,
    `--ServerApp.root_dir=${rootDir}`,
    '--ServerApp.open_browser=False',
  ];
  if (process.getuid && process.getuid() === 0) args.push('--allow-root');
  const child = spawn(debianPython, args, {
    cwd: rootDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PATH: `/usr/bin:/bin:${process.env.PATH || ''}`,
      JUPYTER_RUNTIME_DIR: path.join(scratch, 'runtime'),
      JUPYTER_CONFIG_DIR: path.join(scratch, 'config'),
      IPYTHONDIR: path.join(scratch, 'ipython'),
      GOTRAIN_LAB_BUILD: buildDir,
      GOTRAIN_LAB_STATE: path.join(scratch, 'state'),
      PYTHONUNBUFFERED: '1',
    },
  });
  const lines = [];
  const keep = (chunk) => {
    for (const line of chunk.toString().split('\n')) {
      if (line) lines.push(line);
      if (lines.length > 300) lines.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const server = {
    url: `http://127.0.0.1:${port}`,
    token,
    logTail: (n = 40) => `--- last ${n} lines of the lab server log ---\n${lines.slice(-n).join('\n')}`,
    async stop() {
      const group = (sig) => {
        try {
          process.kill(-child.pid, sig);
        } catch {
          // gone
        }
      };
      if (!exited()) {
        group('SIGTERM');
        await waitFor('the lab server to exit', async () => exited(), { timeoutMs: seconds(20) }).catch(() => {});
      }
      group('SIGKILL');
    },
  };
  // Ctrl-C or a CI timeout: the harness kills what carries scratch in its
  // command line (kernels, Chromium); the server is this group.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.prependOnceListener(sig, () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    });
  }
  await waitFor(
    `the lab server to answer on ${server.url}`,
    async () => {
      if (exited()) {
        const err = new Error(`the lab server exited early\n${server.logTail()}`);
        err.fatal = true;
        throw err;
      }
      const res = await fetch(`${server.url}/api/status`, { headers: { Authorization: `token ${token}` } });
      return res.ok;
    },
    { timeoutMs: seconds(90), intervalMs: 300 },
  );
  return server;
}

// In the page: the current notebook's cells from its model (outputs as the
// kernel sent them) and the kernel's status.
function notebookState() {
  const lab = window.gotrainLab;
  const panel = lab && lab.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.model) return null;
  const cells = [];
  const model = panel.content.model;
  for (let i = 0; i < model.cells.length; i++) {
    const c = model.cells.get(i);
    if (c.type !== 'code') continue;
    const outputs = [];
    for (let j = 0; j < c.outputs.length; j++) outputs.push(c.outputs.get(j).toJSON());
    cells.push({ count: c.executionCount, outputs });
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {
    kernel: kernel ? kernel.name : null,
    status: kernel ? kernel.status : null,
    pending: document.querySelectorAll('.jp-Notebook .jp-InputPrompt').length
      ? [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].filter((p) => p.textContent.includes('*')).length
      : 0,
    cells,
  };
}

function streamText(cell) {
  return cell.outputs
    .filter((o) => o.output_type === 'stream')
    .map((o) => (Array.isArray(o.text) ? o.text.join('') : o.text))
    .join('');
}

function errorsOf(cells) {
  return cells.flatMap((c, i) =>
    c.outputs.filter((o) => o.output_type === 'error').map((o) => ({ cell: i, ename: o.ename, evalue: o.evalue })),
  );
}

// In the page: watch every output node that holds a chart (<svg>, or an
// <img> of an SVG), tagging each node once and counting the distinct
// contents it showed; a node Lab replaced would get a new tag.
function watchCharts() {
  window.gotrainCharts = {};
  let next = 0;
  const scan = () => {
    for (const out of document.querySelectorAll('.jp-OutputArea-output')) {
      const chart = out.querySelector('svg, img[src^="data:image/svg"]');
      if (!chart) continue;
      if (!out.dataset.gotrainChart) out.dataset.gotrainChart = String(++next);
      const rec = (window.gotrainCharts[out.dataset.gotrainChart] ||= { versions: 0, last: '' });
      const html = chart.outerHTML;
      if (html !== rec.last) {
        rec.versions++;
        rec.last = html;
      }
    }
  };
  new MutationObserver(scan).observe(document.body, { childList: true, subtree: true, attributes: true, characterData: true });
}

function chartsSeen() {
  return Object.entries(window.gotrainCharts || {}).map(([id, r]) => ({
    id,
    versions: r.versions,
    connected: !!document.querySelector(`.jp-OutputArea-output[data-gotrain-chart="${id}"]`),
  }));
}

describe('a JupyterLab application in headless Chromium runs the quick-start notebook on gotrain', {
  timeout: seconds(900),
}, () => {
  let scratch;
  let server;
  let context;
  let page;
  let state;
  const pageErrors = [];
  const read = async () => {
    state = await page.evaluate(notebookState);
    return state;
  };
  const detail = () =>
    `state: ${JSON.stringify(state && { ...state, cells: state.cells.map((c) => ({ count: c.count, outputs: c.outputs.length })) })}\n` +
    `error outputs: ${JSON.stringify(state ? errorsOf(state.cells) : [])}\n` +
    `${pageErrors.slice(-10).join('\n')}\n${server ? server.logTail(30) : ''}`;
  const idleAndDone = (st) => st && st.status === 'idle' && st.pending === 0 && st.cells.every((c) => c.count !== null);

  // open opens a notebook of the scratch root with the gotrain kernel and
  // waits for the kernel to be idle.
  const open = async (file) => {
    await page.evaluate(
      (p) => window.gotrainLab.commands.execute('docmanager:open', { path: p, factory: 'Notebook', kernel: { name: 'gotrain' } }).then(() => true),
      file,
    );
    await waitFor(`${file} to open with the gotrain kernel idle`, async () => {
      const st = await read();
      return st && st.kernel === 'gotrain' && st.status === 'idle' && st.cells.length > 0;
    }, { timeoutMs: seconds(120), detail });
  };
  const shoot = async (name) => {
    fs.mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: path.join(outDir, name), timeout: seconds(60) });
  };
  const allRan = async (what) =>
    waitFor(what, async () => {
      const st = await read();
      return idleAndDone(st) && st.cells.every((c) => c.count > 0);
    }, { timeoutMs: seconds(600), intervalMs: 500, detail });

  // menu clicks top, then item once it is enabled. A menu that opened
  // while the page was busy may miss its item: it is closed and opened
  // again, at most three times, logging what the page showed.
  const menu = async (top, item) => {
    for (let attempt = 1; ; attempt++) {
      await page.locator('.lm-MenuBar-item', { hasText: new RegExp(`^${top}$`) }).click({ timeout: seconds(30) });
      const entry = page.locator('.lm-Menu-item:visible:not(.lm-mod-disabled)', {
        has: page.locator('.lm-Menu-itemLabel', { hasText: new RegExp(`^${item}$`) }),
      });
      try {
        await entry.click({ timeout: seconds(10) });
        return;
      } catch (err) {
        const shown = await page.locator('.lm-Menu-item:visible').allTextContents().catch(() => []);
        log(`${top} > ${item}, attempt ${attempt}: ${err.message.split('\n')[0]}; the menu shows ${JSON.stringify(shown)}`);
        await page.keyboard.press('Escape');
        if (attempt === 3) throw err;
      }
    }
  };

  before(async () => {
    assert.ok(fs.existsSync(chromiumPath), `no browser at ${chromiumPath}; run tests/web/setup.sh`);
    assert.ok(fs.existsSync(path.join(buildDir, 'bundle.js')), `no bundle in ${buildDir}; run tests/lab/run.sh`);
    scratch = tempDir('gotrain-lab-');
    const rootDir = path.join(scratch, 'notebooks');
    fs.mkdirSync(rootDir);
    for (const f of [notebookFile, mnistFile, loopsFile]) {
      fs.copyFileSync(path.join(repoRoot, 'notebooks', f), path.join(rootDir, f));
    }
    server = await startLab(scratch, rootDir);
    const res = await fetch(`${server.url}/api/kernelspecs`, { headers: { Authorization: `token ${server.token}` } });
    const specs = await res.json();
    assert.ok(
      specs.kernelspecs.gotrain,
      `kernelspec gotrain not found; the server knows ${Object.keys(specs.kernelspecs).join(', ')} (JUPYTER_PATH=${process.env.JUPYTER_PATH || ''})`,
    );
    ({ context, page } = await openBrowser(path.join(scratch, 'chromium-profile'), { width: 1400, height: 1000 }, pageErrors));
  });

  after(async () => {
    if (page) {
      try {
        fs.mkdirSync(outDir, { recursive: true });
        const shot = path.join(outDir, 'last.png');
        await page.screenshot({ path: shot, timeout: seconds(60) });
        log(`screenshot saved to ${path.relative(repoRoot, shot)}`);
      } catch (err) {
        log(`no screenshot: ${err.message}`);
      }
    }
    if (context) {
      await Promise.race([context.close().catch(() => {}), sleep(seconds(20))]);
    }
    if (server) await server.stop();
    if (scratch) {
      const left = killMatching(scratch);
      fs.rmSync(scratch, { recursive: true, force: true });
      assert.deepEqual(left.map((p) => `${p.pid} ${p.cmd}`), [], 'processes outlived the browser and the lab server (now killed)');
    }
  });

  it('opens the quick-start notebook on gotrain, runs all cells and renders the chart in place', async () => {
    await page.goto(`${server.url}/lab?token=${server.token}`, { waitUntil: 'domcontentloaded', timeout: seconds(120) });
    await waitFor('the JupyterLab application to start', async () => page.evaluate(() => document.body.dataset.gotrainLab === 'ready'), {
      timeoutMs: seconds(120),
      detail,
    });
    await page.evaluate(watchCharts);
    await page.evaluate(
      (p) => window.gotrainLab.commands.execute('docmanager:open', { path: p, factory: 'Notebook', kernel: { name: 'gotrain' } }),
      notebookFile,
    );
    await waitFor('the notebook to open with the gotrain kernel idle', async () => {
      const st = await read();
      return st && st.kernel === 'gotrain' && st.status === 'idle';
    }, { timeoutMs: seconds(120), detail });
    // The kernel's name in the toolbar, as a user picks it.
    await waitFor('the toolbar to name the kernel', async () =>
      (await page.locator('.jp-KernelName').first().textContent({ timeout: seconds(5) })).includes('gotrain'),
    { timeoutMs: seconds(30), detail });
    const t0 = Date.now();
    await menu('Run', 'Run All Cells');
    await waitFor('every cell to run and the kernel to go idle', async () => {
      const st = await read();
      return idleAndDone(st) && st.cells.every((c) => c.count > 0);
    }, { timeoutMs: seconds(600), intervalMs: 500, detail });
    log(`Run All took ${((Date.now() - t0) / 1000).toFixed(1)} s over ${state.cells.length} code cells`);

    assert.deepEqual(errorsOf(state.cells), [], 'a cell shows an error output');
    const text = state.cells.map(streamText).join('');
    const steps = parseSteps(text);
    assert.ok(steps.length >= 2, `no loss lines in the output:\n${text.slice(0, 2000)}`);
    assert.ok(steps.every((s) => Number.isFinite(s.loss)), 'a loss is not a number');
    log(`${steps.length} loss lines, first ${steps[0].loss}, last ${steps.at(-1).loss}`);

    const charts = page.locator('.jp-Notebook .jp-OutputArea-output svg');
    await waitFor('an <svg> chart in an output area', async () => (await charts.count()) > 0, { timeoutMs: seconds(30), detail });
    assert.ok(await charts.first().isVisible(), 'the chart is not visible');
    const seen = await page.evaluate(chartsSeen);
    log(`chart output nodes: ${JSON.stringify(seen)}`);
    assert.ok(
      seen.some((c) => c.connected && c.versions >= 2),
      `no chart output node was updated in place: ${JSON.stringify(seen)}`,
    );
    await charts.first().scrollIntoViewIfNeeded();
    await shoot('quickstart.png');
  });

  it('interrupts a running training loop from the Kernel menu, and the session still trains', async () => {
    // A new last cell that trains until stopped, printing every 50th step:
    // a line per step would flood the page, which then answers clicks late.
    const loop = [
      'fmt.Println("looping")',
      'for i := 0; i < 1000000; i++ {',
      '    for it := dist.Iter(); it.Next(); {',
      '        loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))',
      '        step++',
      '        if step%50 == 0 {',
      '            fmt.Printf("step %d: loss %.4f\\n", step, loss.Scalar())',
      '        }',
      '    }',
      '}',
      'fmt.Println("loop finished")',
    ].join('\n');
    const addAndRun = async (code) =>
      page.evaluate(async (src) => {
        const lab = window.gotrainLab;
        const nb = lab.shell.currentWidget.content;
        const cell = nb.model.contentFactory.createCodeCell({});
        cell.value.text = src;
        nb.model.cells.push(cell);
        nb.activeCellIndex = nb.model.cells.length - 1;
        // Not awaited: the command resolves when the cell has run.
        void lab.commands.execute('notebook:run-cell');
        return nb.model.cells.length;
      }, code);
    await addAndRun(loop);
    const last = (st) => st.cells[st.cells.length - 1];
    await waitFor('the loop to print loss lines', async () => {
      const st = await read();
      return parseSteps(streamText(last(st))).length >= 3;
    }, { timeoutMs: seconds(120), detail });
    log('clicking Kernel > Interrupt Kernel');
    await menu('Kernel', 'Interrupt Kernel');
    const cell = await waitFor('the interrupted cell to show its error and the kernel to go idle', async () => {
      const st = await read();
      const c = last(st);
      return idleAndDone(st) && c.outputs.some((o) => o.output_type === 'error') ? c : null;
    }, { timeoutMs: seconds(60), detail });
    const errs = cell.outputs.filter((o) => o.output_type === 'error');
    log(`interrupted cell shows ${errs[0].ename}: ${errs[0].evalue}`);
    assert.match(`${errs[0].ename} ${errs[0].evalue}`, /Interrupt/, 'the error is not an interruption');
    assert.ok(!streamText(cell).includes('loop finished'), 'the loop ran to its end');

    // The session keeps its model, data and step: one more epoch trains.
    await addAndRun('trainEpoch()');
    const after = await waitFor('one more epoch to run', async () => {
      const st = await read();
      return idleAndDone(st) && st.cells.length === state.cells.length ? last(st) : null;
    }, { timeoutMs: seconds(120), detail });
    assert.deepEqual(after.outputs.filter((o) => o.output_type === 'error'), [], 'the epoch after the interrupt failed');
    const steps = parseSteps(streamText(after));
    assert.ok(steps.length >= 1, `no loss lines after the interrupt: ${JSON.stringify(after.outputs).slice(0, 1000)}`);
    log(`after the interrupt: ${steps.length} loss lines, last step ${steps.at(-1).step}`);
  });

  it('runs the MNIST notebook with no error, and it reaches a test accuracy', async () => {
    await open(mnistFile);
    await menu('Run', 'Run All Cells');
    await allRan('every MNIST cell to run');
    assert.deepEqual(errorsOf(state.cells), [], 'a cell of the MNIST notebook shows an error');
    const text = state.cells.map(streamText).join('');
    const m = text.match(/final test accuracy: (\d\.\d+)/);
    assert.ok(m, `no final test accuracy in the output:\n${text.slice(-2000)}`);
    log(`MNIST final test accuracy ${m[1]}`);
    await shoot('mnist.png');
  });

  it('restarts the kernel from the Kernel menu in notebook 03, and the checkpoint restores', async () => {
    await open(loopsFile);
    // The tagged cell's index among all cells, and how many code cells
    // come before it.
    const [restartAt, codeBefore] = await page.evaluate(() => {
      const model = window.gotrainLab.shell.currentWidget.content.model;
      let code = 0;
      for (let i = 0; i < model.cells.length; i++) {
        const c = model.cells.get(i);
        if ((c.metadata.get('tags') || []).includes('restart-before')) return [i, code];
        if (c.type === 'code') code++;
      }
      return [-1, 0];
    });
    assert.ok(restartAt > 0, 'notebook 03 has no cell tagged restart-before');
    const quiet = (st) => st && st.status === 'idle' && st.pending === 0;
    const select = (i) => page.evaluate((k) => { window.gotrainLab.shell.currentWidget.content.activeCellIndex = k; }, i);
    await select(restartAt);
    await page.evaluate(() => { void window.gotrainLab.commands.execute('notebook:run-all-above'); });
    await waitFor('the cells above the restart to run', async () => {
      const st = await read();
      return quiet(st) && st.cells.slice(0, codeBefore).every((c) => c.count > 0);
    }, { timeoutMs: seconds(600), intervalMs: 500, detail });
    assert.deepEqual(errorsOf(state.cells), [], 'a cell above the restart shows an error');
    const saved = streamText(state.cells[5]).match(/saved after step 48 \(48 optimizer updates\); validation accuracy (\d\.\d+)/);
    assert.ok(saved, `no checkpoint saved: ${streamText(state.cells[5])}`);

    log('clicking Kernel > Restart Kernel…');
    await menu('Kernel', 'Restart Kernel…');
    await page.locator('.jp-Dialog .jp-Dialog-button.jp-mod-accept').click({ timeout: seconds(30) });
    await waitFor('the restarted kernel to be idle', async () => {
      const st = await read();
      return st && st.status === 'idle';
    }, { timeoutMs: seconds(120), detail });
    await select(restartAt);
    await page.evaluate(() => { void window.gotrainLab.commands.execute('notebook:run-all-below'); });
    await waitFor('the cells from the restart on to run', async () => {
      const st = await read();
      return quiet(st) && st.cells.slice(codeBefore).every((c) => c.count > 0);
    }, { timeoutMs: seconds(600), intervalMs: 500, detail });
    assert.deepEqual(errorsOf(state.cells.slice(codeBefore)), [], 'a cell after the restart shows an error');
    const restored = streamText(state.cells[7]).match(/restored on 1 replica: 48 optimizer updates; validation accuracy (\d\.\d+)/);
    assert.ok(restored, `the checkpoint did not restore: ${streamText(state.cells[7])}`);
    assert.equal(restored[1], saved[1], 'the restored model scores differently from the saved one');
    log(`checkpoint saved and restored after the restart, validation accuracy ${saved[1]} both times`);
    await shoot('custom-loops-restored.png');
  });
});
