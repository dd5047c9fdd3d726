/**
 * Config migrations: the upgrade path from any saved version to the current
 * one, the real table, the editor's `version` default agreeing with the
 * runtime, and the nodes running the path when they start.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { join } from 'path';
import fc from 'fast-check';
import {
  CONFIG_VERSION,
  MIGRATIONS,
  UNVERSIONED,
  savedVersion,
  upgrade,
  upgradeConfig,
  type DedupNodeType,
  type MigrationStep,
  type MigrationTable,
} from '../../src/node-red/migrations';
import { editorSettings, settingsPrefix } from '../../src/node-red/editor-settings';
import { coreNodes, helper, node, packNodes, startServer, stopServer, until, type FlowNode } from '../support/node-red-helper';
import { textOf } from '../../src/core/parse/fields';

const ROOT = join(__dirname, '..', '..');
const WARN = 30;
const ERROR = 20;

interface LogEvent {
  level: number;
  id?: string;
  msg?: unknown;
}

/** What nodes logged since the flow was loaded (node-red-node-test-helper spies on the runtime log). */
function logged(): LogEvent[] {
  // The helper's log() is not in the typed subset of test/support/node-red-helper.ts.
  const spy = (helper as unknown as { log(): { args: Array<[LogEvent]> } }).log();
  return spy.args.map(([event]) => event);
}
const TYPES = Object.keys(MIGRATIONS) as DedupNodeType[];

/**
 * A made-up history of one node type, to exercise the path the way a real
 * later release would use it:
 * - v1 -> v2 added `burstLimit`; v1 flows had no limit, so they get 0 (none)
 *   rather than v2's new default;
 * - v2 -> v3 renamed `ttl` to `ttlSeconds`.
 */
const RENAMED_TTL: MigrationStep = { from: 2, change: 'renamed ttl to ttlSeconds', up: ({ ttl, ...rest }) => ({ ...rest, ttlSeconds: ttl }) };
const HISTORY: MigrationTable = {
  'example-node': [
    RENAMED_TTL,
    { from: 1, change: 'added burstLimit (v1 had none)', up: (config) => ({ ...config, burstLimit: config.burstLimit ?? 0 }) },
  ],
};

describe('config migrations', function () {
  describe('the upgrade path', function () {
    it('runs every step from the saved version up, in order, and stamps each', function () {
      const result = upgrade('example-node', { version: 1, ttl: 60, name: 'kept' }, HISTORY, 3);
      assert.deepEqual(result.config, { version: 3, ttlSeconds: 60, burstLimit: 0, name: 'kept' });
      assert.deepEqual(result.applied, ['added burstLimit (v1 had none)', 'renamed ttl to ttlSeconds']);
      assert.equal(result.from, 1);
      assert.equal(result.to, 3);
      assert.equal(result.newer, false);
    });

    it('starts from the saved version: a v2 config only takes the later step', function () {
      const result = upgrade('example-node', { version: 2, ttl: 30, burstLimit: 5 }, HISTORY, 3);
      assert.deepEqual(result.config, { version: 3, ttlSeconds: 30, burstLimit: 5 });
      assert.deepEqual(result.applied, ['renamed ttl to ttlSeconds']);
    });

    it('leaves a current config as it is', function () {
      const current = { version: 3, ttlSeconds: 30, burstLimit: 5 };
      const result = upgrade('example-node', current, HISTORY, 3);
      assert.deepEqual(result.config, current);
      assert.deepEqual(result.applied, []);
    });

    it('passes a config saved by a newer release through, flagged', function () {
      const result = upgrade('example-node', { version: 4, somethingNew: true }, HISTORY, 3);
      assert.equal(result.newer, true);
      assert.deepEqual(result.config, { version: 4, somethingNew: true });
      assert.equal(result.to, 4);
    });

    it('never modifies the saved object', function () {
      const saved = Object.freeze({ version: 1, ttl: 60 });
      upgrade('example-node', saved, HISTORY, 3);
      assert.deepEqual(saved, { version: 1, ttl: 60 });
    });

    it('fails loudly when a step is missing, or the type is unknown', function () {
      const gap: MigrationTable = { 'example-node': [RENAMED_TTL] };
      assert.throws(() => upgrade('example-node', { version: 1 }, gap, 3), /no migration from config version 1 to 2/);
      assert.throws(() => upgrade('no-such-node', {}, HISTORY, 3), /no migrations are registered for node type "no-such-node"/);
    });

    it('is idempotent and keeps every property it does not know (property-based)', function () {
      const extra = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['version', 'ttl', 'ttlSeconds', 'burstLimit', '__proto__'].includes(k)),
        fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
        { maxKeys: 6 },
      );
      fc.assert(
        fc.property(extra, fc.integer({ min: 1, max: 3 }), fc.integer(), (props, version, ttl) => {
          const saved = version === 3 ? { ...props, version, ttlSeconds: ttl, burstLimit: 1 } : { ...props, version, ttl };
          const once = upgrade('example-node', saved, HISTORY, 3).config;
          const twice = upgrade('example-node', once, HISTORY, 3).config;
          assert.deepEqual(twice, once);
          for (const [key, value] of Object.entries(props)) assert.deepEqual((once as Record<string, unknown>)[key], value);
          assert.equal(once.version, 3);
        }),
      );
    });
  });

  describe('the saved version', function () {
    it('reads a missing or blank version as the current one: a flow written by hand or a script means today\'s defaults', function () {
      assert.equal(UNVERSIONED, CONFIG_VERSION);
      for (const config of [{}, { version: undefined }, { version: null }, { version: '' }]) {
        assert.equal(savedVersion(config), CONFIG_VERSION);
      }
    });

    it('runs no step for a config without a version: the clock guard keeps its default, fields stay paths', function () {
      const window = upgrade('sliding-window-dedup', { minSeconds: '60', minMetres: '25' });
      assert.deepEqual(window.applied, []);
      assert.deepEqual(window.config, { minSeconds: '60', minMetres: '25', version: CONFIG_VERSION });
      const sensor = upgrade('sensor-reconnect-dedup', { deviceField: 'end_device_ids.dev_eui' });
      assert.deepEqual(sensor.applied, []);
      assert.equal((sensor.config as Record<string, unknown>).deviceField, 'end_device_ids.dev_eui');
      assert.equal((sensor.config as Record<string, unknown>).measures, undefined);
    });

    it('accepts a whole number or its digits', function () {
      assert.equal(savedVersion({ version: 1 }), 1);
      assert.equal(savedVersion({ version: '2' }), 2);
      assert.equal(savedVersion({ version: ' 7 ' }), 7);
    });

    it('rejects anything else, saying what it got', function () {
      for (const version of [0, -1, 1.5, 'v1', 'one', true, {}, Number.NaN]) {
        assert.throws(() => savedVersion({ version }), /version must be a whole number from 1/, textOf(version));
      }
    });
  });

  describe('the real table', function () {
    it('has, for each node type, exactly one step from each version below the current one', function () {
      for (const type of TYPES) {
        const froms = MIGRATIONS[type].map((s) => s.from).sort((a, b) => a - b);
        const expected = Array.from({ length: CONFIG_VERSION - 1 }, (_, i) => i + 1);
        assert.deepEqual(froms, expected, type);
      }
    });

    it('brings a config of every version of every type up to the current one', function () {
      for (const type of TYPES) {
        for (let version = 1; version <= CONFIG_VERSION; version++) {
          const result = upgrade(type, { version, name: 'n' });
          assert.equal(result.config.version, CONFIG_VERSION, `${type} v${version}`);
          assert.equal(result.config.name, 'n');
          assert.equal(result.newer, false);
        }
        assert.equal(upgrade(type, { name: 'hand-written' }).config.version, CONFIG_VERSION, `${type} without a version`);
      }
    });

    it('sensor v1 -> v2: names become paths, the one range a range per measured field, and the keys stay the same', function () {
      const v1 = { version: 1, deviceField: 'device_id', seqField: 'seq', tsField: 'ts', contentFields: 'fill_pct, meta.temp, ts', valueMin: '-5', valueMax: '' };
      const config: Record<string, unknown> = upgrade('sensor-reconnect-dedup', v1).config;
      assert.deepEqual(config.measures, [
        { path: 'fill_pct', name: '', min: '-5', max: '' },
        // A v1 name with a dot was a top-level key: quoted, it still names that key, under the same name.
        { path: '["meta.temp"]', name: 'meta.temp', min: '-5', max: '' },
      ]);
      assert.equal(config.contentFields, undefined);
      assert.equal(config.valueMin, undefined);
      assert.equal(config.valueMax, undefined);
      assert.equal(config.tsField, 'ts');
      // Absent bounds were 0 to 100 in v1; an absent list was fill_pct.
      assert.deepEqual((upgrade('sensor-reconnect-dedup', { version: 1 }).config as Record<string, unknown>).measures, [{ path: 'fill_pct', name: '', min: 0, max: 100 }]);
    });

    it('sliding-window v1 -> v2: the clock guard stays off for a flow saved without it', function () {
      const of = (saved: object): unknown => (upgrade('sliding-window-dedup', saved).config as Record<string, unknown>).maxAheadSeconds;
      assert.equal(of({ version: 1 }), '');
      assert.equal(of({ version: 1, maxAheadSeconds: '60' }), '60');
    });

    it('sliding-window v2 -> v3: the no-fix guard turned on (0,0 was taken as a position), every other new option off', function () {
      const v2 = upgrade('sliding-window-dedup', { version: 2, minSeconds: '60', minMetres: '25', maxAheadSeconds: '300' });
      assert.equal(v2.applied.length, 1);
      assert.deepEqual(v2.config, { version: 3, minSeconds: '60', minMetres: '25', maxAheadSeconds: '300', mode: 'position', noFix: true, minSatellites: '', maxHdop: '', maxSpeedKmh: '' });
      const v1 = upgrade('sliding-window-dedup', { version: 1 }).config as Record<string, unknown>;
      assert.deepEqual([v1.maxAheadSeconds, v1.noFix, v1.mode], ['', true, 'position'], 'a version-1 flow takes both steps');
      // What a saved option says is kept.
      assert.equal((upgrade('sliding-window-dedup', { version: 2, noFix: false }).config as Record<string, unknown>).noFix, false);
    });

    it('tells the node when a config is newer than this release reads', function () {
      const heard: Array<[number, number]> = [];
      const config = upgradeConfig('sliding-window-dedup', { version: CONFIG_VERSION + 1, minSeconds: '5' }, (v, s) => heard.push([v, s]));
      assert.deepEqual(heard, [[CONFIG_VERSION + 1, CONFIG_VERSION]]);
      assert.equal(config.minSeconds, '5');
      assert.equal(config.version, CONFIG_VERSION + 1);
    });

    it('reaches the editor from the runtime: every node type exports its defaults with the current version, and its dialog uses them', function () {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
      const seen: string[] = [];
      for (const file of Object.values(pkg['node-red'].nodes)) {
        const html = readFileSync(join(ROOT, file.replace(/\.js$/, '.html')), 'utf8');
        const type = /registerType\(\s*["']([^"']+)["']/.exec(html)?.[1];
        assert.ok(type, `${file}: registers a type`);
        assert.ok(TYPES.includes(type as DedupNodeType), `${type} has a migration table`);
        // The dialog writes no version or default of its own: it takes them from the runtime.
        assert.match(html, new RegExp(`defaults:\\s*E\\.defaultsFor\\("${type}"`), `${type}: defaults come from the runtime`);
        assert.doesNotMatch(html, /\bversion\s*:\s*\{\s*value\s*:/, `${type}: no version written in the editor`);
        const exported = editorSettings(type as DedupNodeType);
        const name = `${settingsPrefix(type)}Defaults`;
        assert.deepEqual(Object.keys(exported), [name], `${type}: exports ${name}`);
        assert.equal((exported[name]?.value as { version?: number }).version, CONFIG_VERSION, `${type}: exported version`);
        assert.equal(exported[name]?.exportable, true, `${type}: exported to the editor`);
        seen.push(type);
      }
      assert.deepEqual([...seen].sort(), [...TYPES].sort(), 'every type with a table is a node of the pack');
    });
  });

  describe('in a running node', function () {
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    function flow(version: unknown, more: Record<string, unknown> = {}): FlowNode[] {
      return [
        { id: 'tab', type: 'tab' },
        {
          id: 'dedup',
          type: 'sliding-window-dedup',
          z: 'tab',
          store: 'memory',
          minSeconds: '60',
          minMetres: '25',
          ttlSeconds: '3600',
          version,
          ...more,
          wires: [['admitted'], ['suppressed']],
        },
        { id: 'admitted', type: 'helper', z: 'tab' },
        { id: 'suppressed', type: 'helper', z: 'tab' },
      ];
    }

    async function firstDecision(version: unknown): Promise<{ warnings: string[]; reason: unknown; errors: string[] }> {
      await helper.load([...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()], flow(version));
      const dedup = node('dedup');
      const warnings: string[] = [];
      const errors: string[] = [];
      dedup.on('call:warn', (call) => warnings.push(String(call.args[0])));
      dedup.on('call:error', (call) => errors.push(String(call.args[0])));
      const admitted: Array<{ dedup?: Record<string, unknown> }> = [];
      node('admitted').on('input', (msg) => admitted.push(msg));
      dedup.receive({ payload: { assetId: 'veh-1', ts: 1_780_000_000, lat: 52.52, lon: 13.4 } });
      await until(() => admitted.length > 0 || errors.length > 0, 'a decision or an error');
      return { warnings, errors, reason: admitted[0]?.dedup?.reason };
    }

    it('loads a flow saved with the current version, and one without a version, without a word', async function () {
      for (const version of [CONFIG_VERSION, undefined]) {
        const result = await firstDecision(version);
        assert.equal(result.reason, 'first');
        assert.deepEqual(result.warnings, []);
        await helper.unload();
      }
    });

    it('suppresses a ping at 0,0 as no-fix in a flow saved at version 2, as in a new node, and not when the flow turned the guard off', async function () {
      for (const [version, more, expected] of [
        [2, {}, 'no-fix'],
        [undefined, {}, 'no-fix'],
        [CONFIG_VERSION, { noFix: false }, 'moved'],
      ] as const) {
        await helper.load([...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()], flow(version, more));
        const decided: Array<{ dedup?: Record<string, unknown> }> = [];
        node('admitted').on('input', (msg) => decided.push(msg));
        node('suppressed').on('input', (msg) => decided.push(msg));
        node('dedup').receive({ payload: { assetId: 'veh-1', ts: 1_780_000_000, lat: 52.52, lon: 13.4 } });
        await until(() => decided.length === 1, 'the first decision');
        node('dedup').receive({ payload: { assetId: 'veh-1', ts: 1_780_000_010, lat: 0, lon: 0 } });
        await until(() => decided.length === 2, 'the second decision');
        assert.equal(decided[1]?.dedup?.reason, expected, `version ${String(version)} ${JSON.stringify(more)}`);
        await helper.unload();
      }
    });

    it('runs a flow saved by a newer release, with a warning from the catalog', async function () {
      const result = await firstDecision(CONFIG_VERSION + 1);
      assert.equal(result.reason, 'first');
      assert.deepEqual(result.errors, []);
      // The warning is given while the node starts, before a test can listen to it: read the runtime's log.
      const warned = logged().filter((e) => e.level === WARN && e.id === 'dedup').map((e) => String(e.msg));
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.match(warned[0] ?? '', new RegExp(`config version ${CONFIG_VERSION + 1}; this release reads up to ${CONFIG_VERSION}`));
    });

    it('refuses a malformed version with a configuration error, and answers messages with it', async function () {
      await helper.load([...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()], flow('two'));
      const errors = logged().filter((e) => e.level === ERROR && e.id === 'dedup').map((e) => String(e.msg));
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.match(errors[0] ?? '', /Invalid configuration: version must be a whole number from 1, not "two"/);
    });
  });
});
