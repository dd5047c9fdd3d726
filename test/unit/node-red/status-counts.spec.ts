/**
 * The status line of counts (src/node-red/status-counts.ts): each count is
 * worded by its own catalog entry with { count } as a number, so i18next
 * picks that entry's plural form; read here through Node-RED's own i18n,
 * with the shipped catalogs.
 */
import assert from 'node:assert/strict';
import type { Ping } from '../../../src/core/window/sliding-window';
import { WINDOW_REASONS, type WindowReason } from '../../../src/core/window/window-reasons';
import { countsLine, windowStatus } from '../../../src/node-red/status-counts';
import { closeRun, windowTelemetry } from '../../../src/telemetry/records';
import { nodeRedTranslator } from '../../support/node-red-i18n';

/** A node's translator as the lifecycle makes it: keys relative to the node type. */
async function nodeT(type: string, lang: string): Promise<(key: string, subs?: Record<string, string | number>) => string> {
  const t = await nodeRedTranslator(type, lang);
  return (key, subs) => t(`${type}.${key}`, subs);
}

describe('node-red/status-counts', () => {
  it('hands each count to its own entry as a number named count, then fills the template', () => {
    const calls: [string, Record<string, string | number> | undefined][] = [];
    const t = (key: string, subs?: Record<string, string | number>): string => {
      calls.push([key, subs]);
      return key === 'status.tally' ? `${String(subs?.a)} | ${String(subs?.b)}` : `<${key} ${String(subs?.count)}>`;
    };
    assert.equal(countsLine(t, { a: 1, b: 20 }), '<status.count.a 1> | <status.count.b 20>');
    assert.deepEqual(calls, [
      ['status.count.a', { count: 1 }],
      ['status.count.b', { count: 20 }],
      ['status.tally', { a: '<status.count.a 1>', b: '<status.count.b 20>' }],
    ]);
  });

  it('sliding-window dedup: the English line is the one the node always showed', async () => {
    const t = await nodeT('sliding-window-dedup', 'en-US');
    assert.equal(countsLine(t, { admitted: 1, suppressed: 0, rejected: 1 }), '1 admitted / 0 suppressed / 1 rejected');
  });

  it('sliding-window dedup: the suppressed count says how many pings were no fix, a poor fix or a jump, once there is one, in en-US, de and ja', async () => {
    const record = windowTelemetry({
      id: 'status-fix',
      type: 'sliding-window-dedup',
      name: '',
      store: 'memory',
      settings: { minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets: 10, eventFields: [], accuracyProperty: '' },
      sampleSize: 0,
    });
    const run = record.start(() => ({ kind: 'memory' }));
    try {
      const status = windowStatus(record);
      const ping: Ping = { assetId: 'van', t: 0, lat: 1, lon: 1 };
      const decide = (reason: WindowReason): void =>
        record.decided(ping, { admit: WINDOW_REASONS[reason].admit, reason, dtSeconds: null, distanceMetres: null, headingChange: null, valueChange: null, accepted: 1, suppressed: 1 });
      const en = await nodeT('sliding-window-dedup', 'en-US');
      decide('first');
      decide('window');
      assert.equal(status.line(en), '1 admitted / 1 suppressed / 0 rejected', 'no fix suppressed yet: the line as it always was');
      decide('no-fix');
      decide('jump');
      decide('jump');
      assert.equal(status.line(en), '1 admitted / 4 suppressed (1 no fix, 2 jumps) / 0 rejected');
      decide('poor-fix');
      assert.equal(status.line(await nodeT('sliding-window-dedup', 'de')), '1 zugelassen / 5 unterdrückt (1 ohne Position, 1 mit schlechter Position, 2 Sprünge) / 0 abgewiesen');
      assert.equal(status.line(await nodeT('sliding-window-dedup', 'ja')), '通過 1 / 抑制 5 (測位なし 1, 測位品質不足 1, ジャンプ 2) / 拒否 0');
    } finally {
      closeRun(record, run, true);
    }
  });

  it('sensor reconnect dedup with Confirm delivery: one lease expired, two leases expired, in en-US, de and ja', async () => {
    const counts = (expired: number): Record<string, number> => ({ received: 9, unique: 6, suppressed: 3, rejected: 0, expired });
    const en = await nodeT('sensor-reconnect-dedup', 'en-US');
    assert.equal(countsLine(en, counts(1), 'status.tallyConfirm'), '9 received / 6 unique / 3 suppressed / 0 rejected / 1 lease expired');
    assert.equal(countsLine(en, counts(2), 'status.tallyConfirm'), '9 received / 6 unique / 3 suppressed / 0 rejected / 2 leases expired');
    const de = await nodeT('sensor-reconnect-dedup', 'de');
    assert.equal(countsLine(de, counts(1), 'status.tallyConfirm'), '9 empfangen / 6 eindeutig / 3 unterdrückt / 0 abgewiesen / 1 Lease abgelaufen');
    assert.equal(countsLine(de, counts(2), 'status.tallyConfirm'), '9 empfangen / 6 eindeutig / 3 unterdrückt / 0 abgewiesen / 2 Leases abgelaufen');
    const ja = await nodeT('sensor-reconnect-dedup', 'ja');
    assert.equal(countsLine(ja, counts(2), 'status.tallyConfirm'), '受信 9 / 一意 6 / 抑制 3 / 拒否 0 / リース切れ 2');
  });

  it('dedup confirm: its confirm and release lines in de', async () => {
    const de = await nodeT('dedup-confirm', 'de');
    assert.equal(countsLine(de, { confirmed: 4, unmatched: 1 }, 'status.tallyConfirmed'), '4 bestätigt / 1 ohne Treffer');
    assert.equal(countsLine(de, { released: 2, unmatched: 0 }, 'status.tallyReleased'), '2 freigegeben / 0 ohne Treffer');
  });
});
