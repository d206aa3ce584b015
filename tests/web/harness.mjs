// harness.mjs starts and stops what the web tests drive: a Jupyter server
// (Debian's jupyter-server or classic Notebook 6) on loopback with a random
// port and token, in a temporary root, and it finds every process the tests
// left behind. It is not a test file: node --test only picks *.test.mjs.
//
// Parameters come from the environment so scripts/test.sh can pass them:
//   GOTRAIN_KERNEL    kernel name to start (default gotrain; python3 runs the
//                     same harness against Debian's ipykernel)
//   GOTRAIN_NOTEBOOK  notebook whose code cells run (default: the quick-start
//                     notebook for gotrain, testdata/quickstart-python3.ipynb
//                     for python3)
//   JUPYTER_PATH      passed through to the server, so a kernelspec installed
//                     with `gotrain install --prefix P` is found
//   GOTRAIN_WEB_SLOW  multiplies every timeout (default 1)

import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const webDir = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(webDir, '..', '..');

// Debian's Python: Jupyter comes from Debian's packages, and the first python3
// on PATH may be another one that lacks it.
export const debianPython = '/usr/bin/python3';

export const kernelName = process.env.GOTRAIN_KERNEL || 'gotrain';

export const notebookPath = path.resolve(
  repoRoot,
  process.env.GOTRAIN_NOTEBOOK ||
    (kernelName === 'gotrain'
      ? 'notebooks/01-quickstart.ipynb'
      : path.join('tests', 'web', 'testdata', `quickstart-${kernelName}.ipynb`)),
);

const slow = Number(process.env.GOTRAIN_WEB_SLOW || '1') || 1;

// seconds scales a timeout: the test machine has two cores shared with other
// jobs, so every wait is generous and can be stretched further.
export function seconds(s) {
  return Math.round(s * 1000 * slow);
}

// Cells in the kernel's language for the checks the notebook does not cover.
// Keyed by the kernelspec's language, so the same test runs against ipykernel
// while gotrain is being built.
export const snippets = {
  go: {
    expression: { code: '6 * 7', want: '42' },
    error: { code: 'undefinedName + 1', evalueHas: 'undefinedName' },
    displaySetup: 'import "github.com/gotrain/gotrain/display"',
    display: [
      'h := display.NewHandle()',
      'h.Show(display.HTML("<b>first</b>"))',
      'h.Update(display.HTML("<b>second</b>"))',
    ].join('\n'),
    sleepSetup: 'import (\n\t"fmt"\n\t"time"\n)',
    sleepLoop: [
      'for i := 0; i < 1200; i++ {',
      '\tif i == 0 {',
      '\t\tfmt.Println("sleeping")',
      '\t}',
      '\ttime.Sleep(50 * time.Millisecond)',
      '}',
      'fmt.Println("loop finished")',
    ].join('\n'),
    afterInterrupt: { code: '1 + 1', want: '2' },
    // time.Sleep is a compiled function (the session maps it to an
    // interruptible one) with no results.
    voidCall: 'time.Sleep(time.Millisecond)',
    ticks: [
      'for i := 1; i <= 3; i++ {',
      '\tfmt.Printf("tick %d\\n", i)',
      '\ttime.Sleep(500 * time.Millisecond)',
      '}',
    ].join('\n'),
  },
  python: {
    expression: { code: '6 * 7', want: '42' },
    error: { code: 'undefined_name + 1', evalueHas: 'undefined_name' },
    displaySetup: 'from IPython.display import HTML, display',
    display: [
      "h = display(HTML('<b>first</b>'), display_id=True)",
      "h.update(HTML('<b>second</b>'))",
    ].join('\n'),
    sleepSetup: 'import time',
    sleepLoop: [
      'for i in range(1200):',
      '    if i == 0:',
      "        print('sleeping', flush=True)",
      '    time.sleep(0.05)',
      "print('loop finished')",
    ].join('\n'),
    afterInterrupt: { code: '1 + 1', want: '2' },
    // time.Sleep is a compiled function (the session maps it to an
    // interruptible one) with no results.
    voidCall: 'time.Sleep(time.Millisecond)',
    voidCall: 'time.sleep(0.001)',
    ticks: ['for i in range(1, 4):', "    print(f'tick {i}')", '    time.sleep(0.5)'].join('\n'),
  },
};

// stepLine matches one line the quick-start training loop prints.
export const stepLine = /^step (\d+): loss (-?\d+\.\d{4})$/;

// parseSteps returns the {step, loss} pairs found in text, in order.
export function parseSteps(text) {
  const steps = [];
  for (const line of text.split(/\r?\n/)) {
    const m = stepLine.exec(line.trim());
    if (m) steps.push({ step: Number(m[1]), loss: Number(m[2]) });
  }
  return steps;
}

// readCodeCells returns the source of each code cell of an .ipynb, in order.
export function readCodeCells(file) {
  const nb = JSON.parse(fs.readFileSync(file, 'utf8'));
  return nb.cells
    .filter((c) => c.cell_type === 'code')
    .map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source));
}

export function readNotebook(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// Everything a test file started must go even when the run is cut short
// (Ctrl-C, or a CI timeout sending SIGTERM): after() hooks do not run then.
// Each scratch directory marks the processes started for it (kernels name
// their connection file there, Chromium its profile), and each server runs
// in its own process group, so the handler below can find and kill them all.
const scratchDirs = new Set();
const serverGroups = new Set();

function abortCleanup() {
  for (const pid of serverGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of scratchDirs) {
    killMatching(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    // Synchronous: process.exit below would drop a pending asynchronous write.
    fs.writeSync(2, `harness: ${sig}: killing the servers, kernels and browsers this run started\n`);
    abortCleanup();
    process.exit(128 + os.constants.signals[sig]);
  });
}

// tempDir makes a scratch directory that the abort handler cleans up.
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratchDirs.add(dir);
  return dir;
}

// freePort asks the kernel for an unused loopback port. Another process could
// take it before the server binds; the server is started with port_retries=0
// so that shows up as a clear startup failure instead of a silent other port.
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// waitFor polls check until it returns a truthy value and returns that value.
// On timeout it throws an error that says what it was waiting for, with the
// output of detail() (say, a server's log) to show why.
export async function waitFor(what, check, { timeoutMs, intervalMs = 250, detail } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastErr;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if (err && err.fatal) throw err; // waiting longer cannot help
      lastErr = err;
    }
    if (Date.now() > deadline) {
      let msg = `timed out after ${(timeoutMs / 1000).toFixed(0)} s waiting for ${what}`;
      if (lastErr) msg += `\nlast error: ${lastErr.message || lastErr}`;
      if (detail) msg += `\n${detail()}`;
      throw new Error(msg);
    }
    await sleep(intervalMs);
  }
}

// withTimeout rejects with a message naming what was awaited when p does not
// settle in time; detail() adds what had been seen so far.
export function withTimeout(p, ms, what, detail) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      let msg = `timed out after ${(ms / 1000).toFixed(0)} s waiting for ${what}`;
      if (detail) msg += `\n${detail()}`;
      reject(new Error(msg));
    }, ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// processesMatching lists live processes whose command line contains marker
// (a temporary directory only this test run created), so a kernel or browser
// that outlived its parent can be found without guessing by name.
export function processesMatching(marker) {
  const found = [];
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    let cmdline;
    try {
      cmdline = fs.readFileSync(`/proc/${ent}/cmdline`, 'utf8');
    } catch {
      continue; // gone, or not ours to read
    }
    if (cmdline.includes(marker)) {
      let state = '';
      try {
        state = /^State:\s+(\S)/m.exec(fs.readFileSync(`/proc/${ent}/status`, 'utf8'))?.[1] || '';
      } catch {
        continue;
      }
      if (state === 'Z') continue; // a zombie is already dead; its parent reaps it
      found.push({ pid: Number(ent), cmd: cmdline.split('\0').join(' ').trim() });
    }
  }
  return found;
}

// killMatching SIGKILLs, by pid, each process processesMatching finds.
export function killMatching(marker) {
  const procs = processesMatching(marker);
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return procs;
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child, ms) {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function killGroup(child, signal) {
  try {
    // The server runs in its own process group (detached), so a negative pid
    // reaches it and anything it forked that stayed in the group.
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone
  }
}

// startJupyter starts `python3 -m jupyter_server` (app 'server') or
// `python3 -m notebook` (app 'notebook') on 127.0.0.1 and waits until its
// REST API answers. Every file it writes (runtime, config, IPython dir) goes
// under one temporary directory, whose path is also the marker that finds its
// kernels later: their connection files live in its runtime dir.
export async function startJupyter({ app, rootDir, scratch, log = () => {} }) {
  const port = await freePort();
  const token = crypto.randomBytes(24).toString('hex');
  const cls = app === 'notebook' ? 'NotebookApp' : 'ServerApp';
  const module = app === 'notebook' ? 'notebook' : 'jupyter_server';
  const runtimeDir = path.join(scratch, 'runtime');
  const configDir = path.join(scratch, 'config');
  fs.mkdirSync(runtimeDir, { recursive: true });
  fs.mkdirSync(configDir, { recursive: true });
  const args = [
    '-m',
    module,
    '--no-browser',
    `--${cls}.ip=127.0.0.1`,
    `--${cls}.port=${port}`,
    `--${cls}.port_retries=0`,
    `--${cls}.token=${token}`,
    `--${cls}.${app === 'notebook' ? 'notebook_dir' : 'root_dir'}=${rootDir}`,
    `--${cls}.open_browser=False`,
  ];
  // CI runs as root, which Jupyter refuses without this flag.
  if (process.getuid && process.getuid() === 0) args.push('--allow-root');
  const env = {
    ...process.env,
    PATH: `/usr/bin:/bin:${process.env.PATH || ''}`,
    JUPYTER_RUNTIME_DIR: runtimeDir,
    JUPYTER_CONFIG_DIR: configDir,
    IPYTHONDIR: path.join(scratch, 'ipython'),
    PYDEVD_DISABLE_FILE_VALIDATION: '1',
    PYTHONUNBUFFERED: '1',
  };
  const child = spawn(debianPython, args, {
    cwd: rootDir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  const keep = (chunk) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      lines.push(line);
      if (lines.length > 400) lines.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const logTail = (n = 60) => `--- last ${n} lines of the ${module} log ---\n${lines.slice(-n).join('\n')}`;

  const url = `http://127.0.0.1:${port}`;
  const server = {
    app,
    url,
    port,
    token,
    scratch,
    runtimeDir,
    child,
    logTail,
    // api calls the REST API with the token.
    async api(method, p, body) {
      const res = await fetch(`${url}${p}`, {
        method,
        headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text.slice(0, 500)}`);
      return text ? JSON.parse(text) : null;
    },
    // stop asks the server to shut down (it then shuts its kernels down), and
    // kills the process group if it has not exited in time. Idempotent.
    async stop() {
      if (!exited(child)) {
        killGroup(child, 'SIGTERM');
        // Jupyter asks for confirmation on the first SIGINT only on a tty;
        // SIGTERM stops the loop and runs its kernel cleanup.
        if (!(await waitExit(child, seconds(20)))) {
          log(`${module} did not exit on SIGTERM; killing its process group`);
          killGroup(child, 'SIGKILL');
          await waitExit(child, seconds(5));
        }
      }
      killGroup(child, 'SIGKILL'); // stragglers left in the group
    },
  };
  serverGroups.add(child.pid);
  child.once('exit', () => serverGroups.delete(child.pid));
  log(`started ${module} pid ${child.pid} at ${url}`);
  try {
    await waitFor(
      `${module} to answer on ${url}/api/status`,
      async () => {
        if (exited(child)) {
          const how = `code ${child.exitCode}, signal ${child.signalCode}`;
          const err = new Error(`${module} exited early (${how})\n${logTail()}`);
          err.fatal = true;
          throw err;
        }
        const res = await fetch(`${url}/api/status`, { headers: { Authorization: `token ${token}` } });
        return res.ok;
      },
      { timeoutMs: seconds(90), intervalMs: 300, detail: logTail },
    );
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

// chromiumPath is Debian's Chromium, or GOTRAIN_CHROMIUM.
export const chromiumPath = process.env.GOTRAIN_CHROMIUM || '/usr/bin/chromium';

// openBrowser starts headless Chromium on a fresh profile and returns its
// context and first page; page errors and console errors are appended to
// pageErrors, which the tests assert empty.
export async function openBrowser(profile, viewport, pageErrors) {
  const { chromium } = await import('playwright-core');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
    timeout: seconds(120),
  });
  const page = context.pages()[0] || (await context.newPage());
  page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`);
  });
  return { context, page };
}
