// lab.test.mjs drives a kernel the way JupyterLab does: through
// @jupyterlab/services (the client library JupyterLab's front end is built
// on) talking to Debian's jupyter-server over REST and WebSocket. It runs the
// quick-start notebook's code cells in order, then checks results, errors,
// updatable displays and an interrupt sent through the REST API.
//
// GOTRAIN_KERNEL picks the kernel (default gotrain); see harness.mjs.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import services from '@jupyterlab/services';
import WebSocket from 'ws';

import {
  kernelName,
  notebookPath,
  parseSteps,
  processesMatching,
  killMatching,
  readCodeCells,
  seconds,
  sleep,
  snippets,
  startJupyter,
  tempDir,
  waitFor,
  withTimeout,
} from './harness.mjs';

const { KernelAPI, KernelConnection, KernelSpecAPI, ServerConnection } = services;

function log(msg) {
  process.stderr.write(`lab: ${msg}\n`);
}

// summarize renders iopub messages for a failure message.
function summarize(msgs) {
  return msgs
    .map((m) => {
      const c = m.content || {};
      switch (m.header.msg_type) {
        case 'stream':
          return `stream ${c.name}: ${JSON.stringify(c.text).slice(0, 300)}`;
        case 'error':
          return `error ${c.ename}: ${c.evalue}`;
        case 'status':
          return `status ${c.execution_state}`;
        default:
          return `${m.header.msg_type} ${JSON.stringify(c).slice(0, 300)}`;
      }
    })
    .join('\n');
}

function streamText(msgs, name = 'stdout') {
  return msgs
    .filter((m) => m.header.msg_type === 'stream' && m.content.name === name)
    .map((m) => m.content.text)
    .join('');
}

describe(`JupyterLab's client (@jupyterlab/services) drives kernel ${kernelName}`, { timeout: seconds(1500) }, () => {
  let scratch;
  let server;
  let settings;
  let kernel;
  let lang;

  // execute runs one cell and resolves with its reply and iopub messages once
  // the kernel is idle again; on timeout it says which cell and what came.
  async function execute(code, { timeoutMs = seconds(300), onIOPub } = {}) {
    const msgs = [];
    const future = kernel.requestExecute({ code, stop_on_error: false, store_history: true });
    future.onIOPub = (msg) => {
      msgs.push(msg);
      if (onIOPub) onIOPub(msg, future);
    };
    const firstLine = code.split('\n')[0];
    const reply = await withTimeout(
      future.done,
      timeoutMs,
      `the reply and idle status of the cell starting ${JSON.stringify(firstLine)}`,
      () => `iopub so far:\n${summarize(msgs)}\n${server.logTail(20)}`,
    );
    return { reply, msgs, future };
  }

  before(async () => {
    scratch = tempDir('gotrain-web-lab-');
    const rootDir = path.join(scratch, 'root');
    fs.mkdirSync(rootDir);
    server = await startJupyter({ app: 'server', rootDir, scratch, log });
    settings = ServerConnection.makeSettings({
      baseUrl: `${server.url}/`,
      wsUrl: `ws://127.0.0.1:${server.port}/`,
      token: server.token,
      appendToken: true,
      WebSocket,
      fetch,
      Request,
      Headers,
    });
    const specs = await KernelSpecAPI.getSpecs(settings);
    const spec = specs.kernelspecs[kernelName];
    assert.ok(
      spec,
      `kernelspec ${kernelName} not found by jupyter-server; it knows ${Object.keys(specs.kernelspecs).join(', ')} ` +
        `(JUPYTER_PATH=${process.env.JUPYTER_PATH || ''})`,
    );
    lang = spec.language.toLowerCase();
    assert.ok(snippets[lang], `no test cells for kernel language ${lang}`);
    log(`starting kernel ${kernelName} (${spec.display_name}, ${lang})`);
    const model = await KernelAPI.startNew({ name: kernelName }, settings);
    kernel = new KernelConnection({ model, serverSettings: settings, handleComms: false });
    await waitFor(`kernel ${kernelName} to connect over WebSocket`, () => kernel.connectionStatus === 'connected', {
      timeoutMs: seconds(120),
      detail: () =>
        `connection status ${kernel.connectionStatus}, kernel status ${kernel.status}\n${server.logTail(30)}`,
    });
    // KernelConnection sends kernel_info_request the moment the WebSocket
    // opens, while jupyter-server is still connecting the new iopub socket;
    // when the kernel answers before that subscription reaches it, the idle
    // status on iopub is lost and kernel.info never resolves (services says
    // so at the request: "if sent while zmq subscriptions are not
    // established, kernelInfo may not resolve"); one CI run on 2026-11-30
    // waited out its 120 s so. As services suggests there, ask again: any
    // complete reply resolves kernel.info.
    const deadline = Date.now() + seconds(120);
    let asked = 1;
    let info = null;
    for (;;) {
      info = await Promise.race([kernel.info, sleep(seconds(5)).then(() => null)]);
      if (info) break;
      if (Date.now() > deadline) {
        throw new Error(
          `timed out after 120 s waiting for kernel_info_reply from ${kernelName} ` +
            `(${asked} kernel_info_request(s) sent)\n${server.logTail(30)}`,
        );
      }
      asked++;
      log(`kernel_info_reply not complete after 5 s; asking again (request ${asked})`);
      void kernel.requestKernelInfo().catch(() => {});
    }
    log(`kernel ${info.implementation} ${info.implementation_version}, protocol ${info.protocol_version}`);
  });

  after(async () => {
    // Cleanup runs even when a test failed: kernel, server, then anything
    // that still carries this run's scratch path (a kernel's connection file
    // lives there).
    if (kernel && !kernel.isDisposed) {
      try {
        await withTimeout(KernelAPI.shutdownKernel(kernel.id, settings), seconds(30), 'kernel shutdown');
      } catch (err) {
        log(`kernel shutdown: ${err.message}`);
      }
      kernel.dispose();
    }
    if (server) await server.stop();
    if (scratch) {
      const left = killMatching(scratch);
      if (left.length) log(`killed leftover processes: ${left.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('runs the notebook code cells in order and streams the "step N: loss" lines', async () => {
    const cells = readCodeCells(notebookPath);
    assert.ok(cells.length > 0, `no code cells in ${notebookPath}`);
    let stdout = '';
    const displays = [];
    for (const [i, code] of cells.entries()) {
      const { reply, msgs } = await execute(code);
      displays.push(
        ...msgs
          .filter((m) => ['display_data', 'update_display_data'].includes(m.header.msg_type))
          .map((m) => ({ cell: i + 1, type: m.header.msg_type, content: m.content })),
      );
      const errors = msgs.filter((m) => m.header.msg_type === 'error');
      assert.equal(
        reply.content.status,
        'ok',
        `code cell ${i + 1} of ${path.basename(notebookPath)} failed: ` +
          `${reply.content.ename}: ${reply.content.evalue}\n${summarize(msgs)}`,
      );
      assert.deepEqual(errors, [], `code cell ${i + 1} published errors`);
      assert.equal(typeof reply.content.execution_count, 'number', `code cell ${i + 1}: execution_count`);
      const out = streamText(msgs);
      // How many messages carried the step lines is logged, not asserted:
      // batching is the kernel's choice (the ticks test checks liveness).
      const stepMsgs = msgs.filter((m) => m.header.msg_type === 'stream' && /step \d+: loss/.test(m.content.text));
      if (stepMsgs.length) {
        log(`cell ${i + 1}: ${parseSteps(out).length} step lines in ${stepMsgs.length} stream messages`);
      }
      stdout += out;
    }
    const allSteps = parseSteps(stdout);
    assert.ok(allSteps.length > 0, `no "step N: loss X.XXXX" lines on stdout; got:\n${stdout.slice(0, 2000)}`);
    allSteps.forEach((s, i) => {
      assert.equal(s.step, i + 1, `step lines out of order: ${JSON.stringify(allSteps.slice(0, i + 1))}`);
      assert.ok(Number.isFinite(s.loss) && s.loss >= 0, `step ${s.step}: loss ${s.loss} is not a finite cross-entropy`);
    });
    log(`${allSteps.length} steps, loss ${allSteps[0].loss} -> ${allSteps.at(-1).loss}`);

    // A live display (the training monitor) is shown once and then updated in
    // place: every update must name a display id shown before, and every
    // bundle keeps a text/plain fallback for consoles and nbconvert.
    const shownIds = new Set();
    for (const d of displays) {
      const id = d.content.transient?.display_id;
      const mimes = Object.keys(d.content.data || {});
      assert.ok(mimes.includes('text/plain'), `cell ${d.cell}: ${d.type} without text/plain: ${mimes.join(', ')}`);
      if (d.type === 'display_data') {
        if (id) shownIds.add(id);
      } else {
        assert.ok(id && shownIds.has(id), `cell ${d.cell}: update_display_data for display id ${id} never shown`);
      }
    }
    const charts = displays.filter(
      (d) => d.content.data['image/svg+xml'] || /<svg[\s>]/.test(d.content.data['text/html'] || ''),
    );
    log(
      `${displays.filter((d) => d.type === 'display_data').length} display_data, ` +
        `${displays.filter((d) => d.type === 'update_display_data').length} update_display_data, ` +
        `${charts.length} with an SVG chart, in the notebook cells`,
    );
  });

  it('returns execute_result for a simple expression', async () => {
    const { code, want } = snippets[lang].expression;
    const { reply, msgs } = await execute(code);
    assert.equal(reply.content.status, 'ok', summarize(msgs));
    const results = msgs.filter((m) => m.header.msg_type === 'execute_result');
    assert.equal(results.length, 1, `want one execute_result for ${code}, got:\n${summarize(msgs)}`);
    assert.equal(results[0].content.data['text/plain'], want);
    assert.equal(results[0].content.execution_count, reply.content.execution_count);
  });

  it('returns an error cell as an error with ename', async () => {
    const { code, evalueHas } = snippets[lang].error;
    const { reply, msgs } = await execute(code);
    assert.equal(reply.content.status, 'error', `want status error for ${code}, got:\n${summarize(msgs)}`);
    assert.ok(reply.content.ename, 'execute_reply has no ename');
    const errors = msgs.filter((m) => m.header.msg_type === 'error');
    assert.equal(errors.length, 1, `want one error message on iopub, got:\n${summarize(msgs)}`);
    const e = errors[0].content;
    assert.equal(typeof e.ename, 'string');
    assert.ok(e.ename.length > 0, 'error message has an empty ename');
    assert.ok(e.evalue.includes(evalueHas), `evalue ${JSON.stringify(e.evalue)} does not name ${evalueHas}`);
    assert.ok(Array.isArray(e.traceback), 'traceback is not a list');
    log(`error cell: ${e.ename}: ${e.evalue}`);
  });

  it('publishes display_data and update_display_data for a display handle', async () => {
    const s = snippets[lang];
    const setup = await execute(s.displaySetup);
    assert.equal(setup.reply.content.status, 'ok', summarize(setup.msgs));
    const { reply, msgs } = await execute(s.display);
    assert.equal(reply.content.status, 'ok', summarize(msgs));
    const shown = msgs.filter((m) => m.header.msg_type === 'display_data');
    assert.equal(shown.length, 1, `want one display_data, got:\n${summarize(msgs)}`);
    const id = shown[0].content.transient?.display_id;
    assert.ok(id, `display_data carries no transient.display_id: ${JSON.stringify(shown[0].content)}`);
    assert.match(shown[0].content.data['text/html'], /first/);
    assert.ok(shown[0].content.data['text/plain'] !== undefined, 'display_data has no text/plain fallback');
    const updates = msgs.filter((m) => m.header.msg_type === 'update_display_data');
    assert.equal(updates.length, 1, `want one update_display_data, got:\n${summarize(msgs)}`);
    assert.equal(updates[0].content.transient?.display_id, id, 'update names another display id');
    assert.match(updates[0].content.data['text/html'], /second/);
  });

  it('stops a sleeping loop on an interrupt through the REST API, and keeps the kernel usable', async () => {
    const s = snippets[lang];
    const setup = await execute(s.sleepSetup);
    assert.equal(setup.reply.content.status, 'ok', summarize(setup.msgs));
    let sleeping;
    const started = new Promise((resolve) => {
      sleeping = resolve;
    });
    const running = execute(s.sleepLoop, {
      timeoutMs: seconds(50),
      onIOPub: (msg) => {
        if (msg.header.msg_type === 'stream' && msg.content.text.includes('sleeping')) sleeping();
      },
    });
    // The loop runs about 60 s if nothing stops it; the cell's own timeout
    // (50 s) fails the test before the loop could finish by itself.
    await withTimeout(started, seconds(40), 'the sleeping loop to print "sleeping"');
    log(`interrupting kernel ${kernel.id} through POST /api/kernels/${kernel.id}/interrupt`);
    await KernelAPI.interruptKernel(kernel.id, settings);
    const { reply, msgs } = await running;
    assert.notEqual(reply.content.status, 'ok', `the loop was not interrupted:\n${summarize(msgs)}`);
    assert.ok(!streamText(msgs).includes('loop finished'), 'the loop ran to the end');
    if (reply.content.status === 'error') {
      log(`interrupted cell: ${reply.content.ename}: ${reply.content.evalue}`);
      assert.ok(reply.content.ename, 'interrupted cell has no ename');
    }
    const { code, want } = s.afterInterrupt;
    const next = await execute(code, { timeoutMs: seconds(60) });
    assert.equal(
      next.reply.content.status,
      'ok',
      `the kernel is not usable after the interrupt:\n${summarize(next.msgs)}`,
    );
    const result = next.msgs.find((m) => m.header.msg_type === 'execute_result');
    assert.equal(result?.content.data['text/plain'], want);
  });

  it('streams output while a cell runs, not only at its end', async () => {
    const s = snippets[lang];
    // Importing again what an earlier cell imported must be harmless.
    const setup = await execute(s.sleepSetup);
    assert.equal(setup.reply.content.status, 'ok', `importing again failed:\n${summarize(setup.msgs)}`);
    const { reply, msgs } = await execute(s.ticks, { timeoutMs: seconds(60) });
    assert.equal(reply.content.status, 'ok', summarize(msgs));
    assert.equal(streamText(msgs), 'tick 1\ntick 2\ntick 3\n');
    // Half a second between prints is longer than any front end's or
    // kernel's flush interval, so a live kernel sends several messages.
    const ticks = msgs.filter((m) => m.header.msg_type === 'stream' && m.content.text.includes('tick'));
    assert.ok(ticks.length >= 2, `want the ticks in several stream messages, got ${ticks.length}:\n${summarize(msgs)}`);
  });

  it('gives no execute_result for a cell ending in a call that returns nothing', async () => {
    // As in every Jupyter kernel: Out[N] shows a value, and a call with no
    // results has none (the quick-start's monitor.Done() must not show one).
    const { reply, msgs } = await execute(snippets[lang].voidCall);
    assert.equal(reply.content.status, 'ok', summarize(msgs));
    const results = msgs.filter((m) => m.header.msg_type === 'execute_result');
    assert.deepEqual(
      results.map((m) => m.content.data['text/plain']),
      [],
      `${snippets[lang].voidCall} returns nothing, yet the kernel sent an execute_result`,
    );
  });

  it('shuts the kernel and the server down without orphan processes', async () => {
    const id = kernel.id;
    await withTimeout(KernelAPI.shutdownKernel(id, settings), seconds(60), `shutdown of kernel ${id}`);
    kernel.dispose();
    const running = await KernelAPI.listRunning(settings);
    assert.deepEqual(
      running.map((k) => k.id),
      [],
      'kernels still listed after shutdown',
    );
    await server.stop();
    // The kernel's command line names its connection file in the scratch
    // runtime dir; nothing with that path may outlive the server.
    const left = await waitFor(
      'every kernel process of this run to exit',
      () => {
        const procs = processesMatching(scratch);
        return procs.length === 0 ? [] : null;
      },
      {
        timeoutMs: seconds(20),
        detail: () => processesMatching(scratch).map((p) => `${p.pid} ${p.cmd}`).join('\n'),
      },
    ).catch((err) => err);
    assert.ok(!(left instanceof Error), left instanceof Error ? left.message : '');
  });
});
