/**
 * Saving a memory store to disk (issue 9), in a process of its own, with
 * the real StateJournal (src/persist/state-journal.ts) writing to a
 * temporary directory and the sliding-window memory store it saves.
 *
 * 1. The event loop during a save of 100,000 entries. A probe schedules
 *    itself with setImmediate over and over and keeps the longest gap
 *    between two of its turns: the longest time the loop was held by
 *    anything else. Measured during a save in which all 100,000 entries
 *    changed (journal append plus the compaction it triggers), during a
 *    compaction alone (a snapshot of 100,000), and, side by side, for as
 *    long with nothing saving (the probe's own floor), and for the same
 *    entries turned into one JSON document in one go (what Node-RED's file
 *    context store does on each flush; see STYLE.md).
 *
 * 2. Bytes written at a steady 100 admissions a second into a set of
 *    100,000 assets, on a simulated clock (the store's injected clock; the
 *    journal's saves are called every simulated 10 s, its default
 *    interval), long enough for several compactions: bytes per admission
 *    (journal), per compaction (snapshot), and the projection per day.
 */
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { performance } from 'perf_hooks';
import type { WindowEntry } from '../src/stores/memory-window-store';
import { PING_EPOCH_MS } from './data';
import { answerParent, gc } from './runtime';

/* eslint-disable @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { MemoryWindowStore } = require('../nodes/stores/memory-window-store') as typeof import('../src/stores/memory-window-store');
const { StateJournal } = require('../nodes/persist/state-journal') as typeof import('../src/persist/state-journal');
const { windowCodec } = require('../nodes/persist/codecs') as typeof import('../src/persist/codecs');
/* eslint-enable @typescript-eslint/no-require-imports */

export interface SavingJob {
  entries: number;
  admissionsPerSecond: number;
  saveEverySeconds: number;
  simulatedSeconds: number;
}

export interface LoopHold {
  /** Longest gap between two probe turns, ms. */
  maxTurnMs: number;
  /** How long the measured work took, ms. */
  ms: number;
}

export interface SavingResult {
  entries: number;
  idle: LoopHold;
  fullSave: LoopHold & { bytes: number };
  compaction: LoopHold & { bytes: number };
  json: LoopHold & { bytes: number };
  admissionsPerSecond: number;
  simulatedSeconds: number;
  admissions: number;
  journalBytes: number;
  compactionBytes: number;
  compactions: number;
  bytesPerAdmission: number;
  bytesPerCompaction: number;
  gbPerDay: number;
}

const WINDOW = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600 };

function assetId(i: number): string {
  return `veh-${String(i).padStart(6, '0')}`;
}

/** Runs `work` while a setImmediate probe measures the longest turn anything else held the loop. */
async function probed(work: () => unknown): Promise<LoopHold> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  running = false;
  // One more turn, so that a hold at the very end is seen.
  await new Promise((r) => setImmediate(r));
  return { maxTurnMs: longest, ms };
}

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function measureSaving(job: SavingJob): Promise<SavingResult> {
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-bench-state-'));
  try {
    let clock = PING_EPOCH_MS;
    const store = new MemoryWindowStore({ ...WINDOW, maxAssets: job.entries }, () => clock);
    const journal = new StateJournal<WindowEntry>(
      windowCodec,
      { entry: (key) => store.entry(key), keys: () => store.keys(), target: store },
      { dir, intervalMs: job.saveEverySeconds * 1000, warn: (text) => process.stderr.write(`${text}\n`) },
    );
    store.onChange = (key) => journal.changed(key);
    store.onClear = () => journal.clearedAll();
    for (let i = 0; i < job.entries; i++) {
      store.decideNow({ assetId: assetId(i), t: clock, lat: 40 + (i % 997) * 0.01, lon: -3 + (i % 991) * 0.01 });
    }
    gc();

    // 1. The loop during saves, and the same length of time with none.
    const beforeFull = { ...journal.stats };
    const fullSave = await probed(() => journal.save());
    const afterFull = { ...journal.stats };
    const compaction = await probed(() => journal.compact());
    const afterCompaction = { ...journal.stats };
    const idle = await probed(() => wait(Math.max(fullSave.ms, compaction.ms)));
    const entries = store.keys().map((key) => store.entry(key));
    let jsonBytes = 0;
    const json = await probed(() => {
      jsonBytes = Buffer.byteLength(JSON.stringify(entries, null, 4));
    });

    // 2. Steady admissions on the simulated clock.
    const stats = { ...journal.stats };
    const perSave = job.admissionsPerSecond * job.saveEverySeconds;
    let next = 0;
    let admissions = 0;
    for (let s = 0; s < job.simulatedSeconds; s += job.saveEverySeconds) {
      for (let k = 0; k < perSave; k++) {
        // Each admission a different asset, round-robin: every one is a
        // record of its own in the next save, the costliest case. An
        // asset comes round every entries / rate seconds, long past the
        // window, so each ping is admitted as `elapsed`.
        clock += (job.saveEverySeconds * 1000) / perSave;
        const i = next++ % job.entries;
        const outcome = store.decideNow({ assetId: assetId(i), t: clock, lat: 40 + (i % 997) * 0.01, lon: -3 + (i % 991) * 0.01 });
        if (outcome.admit) admissions++;
      }
      await journal.save();
    }
    const end = journal.stats;
    const journalBytes = end.journalBytes - stats.journalBytes;
    const compactionBytes = end.compactionBytes - stats.compactionBytes;
    const compactions = end.compactions - stats.compactions;
    return {
      entries: job.entries,
      idle,
      fullSave: { ...fullSave, bytes: afterFull.journalBytes - beforeFull.journalBytes + afterFull.compactionBytes - beforeFull.compactionBytes },
      compaction: { ...compaction, bytes: afterCompaction.compactionBytes - afterFull.compactionBytes },
      json: { ...json, bytes: jsonBytes },
      admissionsPerSecond: job.admissionsPerSecond,
      simulatedSeconds: job.simulatedSeconds,
      admissions,
      journalBytes,
      compactionBytes,
      compactions,
      bytesPerAdmission: journalBytes / admissions,
      bytesPerCompaction: compactions > 0 ? compactionBytes / compactions : Number.NaN,
      gbPerDay: ((journalBytes + compactionBytes) / job.simulatedSeconds) * 86_400 / 1e9,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) answerParent(measureSaving(JSON.parse(process.argv[2] ?? '{}') as SavingJob));
