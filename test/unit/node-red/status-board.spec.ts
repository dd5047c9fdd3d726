/**
 * The status line's Redis part (src/node-red/status-board.ts), with the
 * node's own en-US catalog: a lost connection whose cause is not known yet
 * says so, never "Redis unavailable: ?".
 */
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { StatusBoard } from '../../../src/node-red/status-board';
import { StoreHealth } from '../../../src/node-red/store-health';

type Status = { fill?: string; shape?: string; text?: string };

function catalog(type: string): (key: string, subs?: Record<string, string | number>) => string {
  const file = path.join(__dirname, '..', '..', '..', 'nodes', 'locales', 'en-US', `${type}.json`);
  const messages = (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>)[type];
  return (key, subs = {}) => {
    const text = key.split('.').reduce<unknown>((v, part) => (v as Record<string, unknown> | undefined)?.[part], messages);
    assert.equal(typeof text, 'string', `${type}: no message ${key}`);
    return (text as string).replace(/__(\w+)__/g, (_, name: string) => String(subs[name]));
  };
}

function board(type: string): { board: StatusBoard; health: StoreHealth; shown: Status[] } {
  const shown: Status[] = [];
  const health = new StoreHealth();
  const counts = { line: () => '3 received', follow: () => undefined };
  return { board: new StatusBoard({ status: (s: Status) => shown.push(s) }, counts, health, catalog(type), 0), health, shown };
}

describe('node-red/status-board', () => {
  for (const type of ['sensor-reconnect-dedup', 'sliding-window-dedup', 'dedup-confirm']) {
    it(`${type}: says the cause is not known yet until the connection names one`, () => {
      const { board: b, health, shown } = board(type);
      health.connectionChanged({ state: 'ready' });
      health.connectionChanged({ state: 'reconnecting' });
      assert.equal(shown.at(-1)?.fill, 'red');
      assert.equal(shown.at(-1)?.text, 'Redis unavailable: connection lost, cause not known yet · 3 received');
      health.connectionChanged({ state: 'reconnecting', error: new Error('connect ECONNREFUSED 127.0.0.1:6390') });
      assert.equal(shown.at(-1)?.text, 'Redis unavailable: connect ECONNREFUSED 127.0.0.1:6390 · 3 received');
      b.stop();
    });
  }
});
