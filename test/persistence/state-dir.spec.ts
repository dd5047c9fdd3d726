/**
 * Where the memory stores save their state, as an admin sets it (issue 9):
 * the runtime setting `dedupStateDir` moves it, `false` turns saving off
 * for every node, and a node's *Save every* of 0 turns it off for that node.
 * Also the smaller things of the same issue that a flow sees at start: the
 * warning for a *Forget after* shorter than the heartbeat, and the rejected
 * count in the sliding window's status.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { helper, loadDedup, runtimeSettings, sleep, startServer, stopServer, until, warningsOf } from '../support/node-red-helper';

const PING = { assetId: 'veh-1', ts: 1_780_000_000, lat: 52.5, lon: 13.4 };

describe('saving the memory stores: where, and when not', function () {
  this.timeout(20_000);
  let dir: string;
  before(startServer);
  after(stopServer);
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'dedup-state-dir-'));
  });
  afterEach(async function () {
    await helper.unload();
    runtimeSettings({});
    rmSync(dir, { recursive: true, force: true });
  });

  it('saves under dedupStateDir, one directory per node, within Save every', async function () {
    runtimeSettings({ dedupStateDir: dir });
    const h = await loadDedup('sliding-window-dedup', 'memory', { persistSeconds: '1', version: 2 });
    h.send({ ...PING });
    await until(() => h.admitted.length === 1, 'the admission');
    await until(() => existsSync(join(dir, 'dedup')) && readdirSync(join(dir, 'dedup')).some((f) => f.startsWith('journal-')), 'the journal written', 3000);
  });

  it('saves nothing when dedupStateDir is false, even with a user directory', async function () {
    runtimeSettings({ dedupStateDir: false, userDir: dir });
    const h = await loadDedup('sensor-reconnect-dedup', 'memory', { persistSeconds: '1', version: 2 });
    h.send([{ device_id: 'bin-1', seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 1 }]);
    await until(() => h.admitted.length === 1, 'the admission');
    await sleep(1500);
    assert.deepEqual(readdirSync(dir), [], 'nothing saved');
  });

  it('saves nothing for a node whose Save every is 0, and removes what it had saved', async function () {
    runtimeSettings({ dedupStateDir: dir });
    const first = await loadDedup('sliding-window-dedup', 'memory', { persistSeconds: '1', version: 2 });
    first.send({ ...PING });
    await until(() => existsSync(join(dir, 'dedup')), 'saved while saving was on', 3000);
    await helper.unload();
    const second = await loadDedup('sliding-window-dedup', 'memory', { persistSeconds: '0', version: 2 });
    second.send({ ...PING, ts: PING.ts + 120 });
    await until(() => second.admitted.length === 1, 'the admission');
    await until(() => !existsSync(join(dir, 'dedup')), 'the saved state removed', 3000);
  });

  it('warns once at start when Forget after is shorter than the heartbeat', async function () {
    await loadDedup('sliding-window-dedup', 'memory', { minSeconds: '120', ttlSeconds: '60', version: 2 });
    const warnings = warningsOf('dedup');
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0] ?? '', /Forget after \(60 s\) is shorter than the heartbeat \(120 s\)/);
  });

  it('shows the rejected count in the sliding window\'s status', async function () {
    const h = await loadDedup('sliding-window-dedup', 'memory', { version: 2 });
    h.send({ ...PING });
    h.send({ assetId: 'veh-2', ts: 'yesterday', lat: 1, lon: 1 });
    await until(
      () => h.statuses.some((m) => (m.status as { text?: string }).text === '1 admitted / 0 suppressed / 1 rejected'),
      'the status with the rejected count',
      3000,
    );
  });
});
