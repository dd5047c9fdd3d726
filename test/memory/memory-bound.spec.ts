/**
 * The memory stores fed 1,000,000 distinct assets / readings: with their
 * caps (maxAssets, maxKeys: 100,000 by default) the heap grows to the cap's
 * worth and then stays flat; without a cap in the way (cap 1,000,000) it
 * grows by a steady amount per entry, which is the number README gives for
 * sizing the caps.
 *
 * Heap is measured after full garbage collections, which needs --expose-gc,
 * so the measuring runs in a child process: this same file, started as a
 * script (see the bottom), prints its measurements as one JSON line.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import { idempotencyKey } from '../../src/core/sensor/idempotency-key';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';

const FEED = 1_000_000;
const CAP = 100_000;
const NOW = 1_780_000_000_000;

interface Measurement {
  store: 'window' | 'seen';
  cap: number;
  fed: number;
  size: number;
  /** Heap growth once the cap was reached (or after everything, uncapped). */
  atCapBytes: number;
  /** Heap growth after all FEED entries. */
  finalBytes: number;
  bytesPerEntry: number;
  ms: number;
}

// ---------------------------------------------------------------------------
// The probe (child process)

function heapNow(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  // Twice: the first pass can leave weakly held and finalised objects for the second.
  gc();
  gc();
  // The window store keeps its records in typed arrays, outside the JS heap.
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** The memory store answers before claim() returns; the answer is not needed here. */
const IGNORE = { value: (): void => undefined, error: (error: unknown): never => { throw error; } };

function measure(store: 'window' | 'seen', cap: number): Measurement {
  const settings = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600 };
  // A fixed clock: nothing expires, so only the cap bounds the store.
  const windows = store === 'window' ? new MemoryWindowStore({ ...settings, maxAssets: cap }, () => NOW) : undefined;
  const seen = store === 'seen' ? new MemorySeenStore({ ttlSeconds: 21_600, maxKeys: cap, confirm: false, leaseSeconds: 60, keyMode: 'reading' }, () => NOW) : undefined;
  const base = heapNow();
  let atCap = 0;
  const started = Date.now();
  for (let i = 0; i < FEED; i++) {
    if (windows) {
      windows.decideNow({ assetId: `veh-${i}`, t: NOW + i, lat: 52.52 + (i % 1000) * 1e-4, lon: 13.4 + (i % 997) * 1e-4 });
    } else if (seen) {
      // Keys built as the node builds them, so the strings are the ones it stores.
      const deviceId = `bin-${i % 50_000}`;
      const key = idempotencyKey({ deviceId, seq: i, timeField: 'ts', epochMicros: NOW * 1000, measures: { fill_pct: (i % 1000) / 10 } });
      seen.claim({ claims: [{ key, group: deviceId }], token: i + 1 }, IGNORE, undefined);
    }
    if (i + 1 === Math.min(cap, FEED)) atCap = heapNow() - base;
  }
  const ms = Date.now() - started;
  const finalBytes = heapNow() - base;
  const size = (windows ?? seen)?.size ?? 0;
  return { store, cap, fed: FEED, size, atCapBytes: atCap, finalBytes, bytesPerEntry: Math.round(finalBytes / size), ms };
}

function runProbe(): void {
  const results: Measurement[] = [];
  for (const store of ['window', 'seen'] as const) {
    for (const cap of [CAP, FEED]) results.push(measure(store, cap));
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

// ---------------------------------------------------------------------------
// The test (mocha)

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function defineTests(): void {
  describe('memory: 1,000,000 distinct assets / readings into the memory stores', function () {
    this.timeout(120_000);
    let results: Measurement[] = [];

    before(function () {
      const child = spawnSync(process.execPath, ['--expose-gc', '--require', require.resolve('tsx/cjs'), __filename], {
        encoding: 'utf8',
        timeout: 110_000,
        maxBuffer: 1024 * 1024,
      });
      assert.equal(child.status, 0, `the heap probe failed (${child.status ?? child.signal}):\n${child.stderr}`);
      results = JSON.parse(child.stdout.trim().split('\n').at(-1) as string) as Measurement[];
    });

    for (const store of ['window', 'seen'] as const) {
      it(`${store} store: heap stays flat past its cap of ${CAP.toLocaleString('en')}`, function () {
        const r = results.find((m) => m.store === store && m.cap === CAP) as Measurement;
        assert.equal(r.size, CAP, 'the store holds exactly its cap');
        // Generous: 1 KB per entry would be five to ten times what it takes.
        assert.ok(r.finalBytes < CAP * 1024, `heap grew ${mb(r.finalBytes)} for ${CAP} entries`);
        // Flat: 900,000 more entries after the cap may cost some slack in
        // hash tables that churn, not the nine times as much an unbounded store would.
        const afterCap = r.finalBytes - r.atCapBytes;
        assert.ok(afterCap < 0.5 * r.atCapBytes + 8 * 1024 * 1024, `heap grew another ${mb(afterCap)} after the cap`);
        console.log(
          `      ${store}: cap ${CAP}: ${mb(r.atCapBytes)} at the cap, ${mb(r.finalBytes)} after ${FEED} ` +
            `(${r.bytesPerEntry} bytes per entry, ${r.ms} ms)`,
        );
      });

      it(`${store} store: a steady cost per entry at 1,000,000 entries`, function () {
        const r = results.find((m) => m.store === store && m.cap === FEED) as Measurement;
        assert.equal(r.size, FEED);
        assert.ok(r.bytesPerEntry < 1024, `${r.bytesPerEntry} bytes per entry`);
        console.log(`      ${store}: ${FEED} entries held: ${mb(r.finalBytes)}, ${r.bytesPerEntry} bytes per entry (${r.ms} ms)`);
      });
    }
  });
}

if (require.main === module) runProbe();
else defineTests();
