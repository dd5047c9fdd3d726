/**
 * Every flow in examples/ (Import > Examples in the editor; `npm start`
 * deploys them all): saved at the current config version with every option
 * a new node of its type has, uses only core nodes and this pack's, the
 * memory store and no Redis, says in a comment node what to look for, and
 * deploys as it is, its timers putting results in front of the user within
 * seconds, with nothing logged as an error or warning. The two examples of
 * the first release also do what their comments say; each newer one has a
 * spec file of its own (bin-fill-levels.spec.ts, ...).
 */
import assert from 'node:assert/strict';
import { CONFIG_VERSION } from '../../src/node-red/migrations';
import { CONFIRM_DEFAULTS, SENSOR_DEFAULTS, SLIDING_WINDOW_DEFAULTS } from '../../src/core/defaults';
import { examples } from '../e2e/support/pack';
import { sleep, until, type Msg } from '../support/node-red-helper';
import { ALLOWED_TYPES, EXAMPLES, exampleFlow, examplesInThisBlock } from './example-runtime';

const DEFAULTS: Record<string, object> = {
  'sliding-window-dedup': SLIDING_WINDOW_DEFAULTS,
  'sensor-reconnect-dedup': SENSOR_DEFAULTS,
  'dedup-confirm': CONFIRM_DEFAULTS,
};

describe('example flows', function () {
  this.timeout(30_000);

  it('are the ones this suite knows', function () {
    // mqtt-scale-out needs a broker, Redis and a database: mqtt-scale-out.spec.ts and test/system test it.
    // dashboard-2 needs Node-RED Dashboard 2 (a devDependency, not a core node): test/e2e/dashboard.e2e.ts runs it.
    assert.deepEqual(examples().map((e) => e.name).filter((name) => name !== 'mqtt-scale-out' && name !== 'dashboard-2'), [...EXAMPLES]);
  });

  for (const name of EXAMPLES) {
    describe(name, function () {
      const flow = exampleFlow(name);

      it('has a comment node that says what to look for', function () {
        const comments = flow.filter((n) => n.type === 'comment');
        assert.ok(comments.length >= 1);
        const first = comments[0] as { name?: string; info?: string };
        assert.ok((first.name ?? '').length > 10, 'a title');
        assert.ok((first.info ?? '').length > 200, 'a description');
        assert.match(String(first.info), /look for|Output 1|debug sidebar/i);
      });

      it('uses only core nodes and this pack\'s, the memory store and no Redis connection', function () {
        for (const n of flow) assert.ok(ALLOWED_TYPES.has(n.type), `${n.type} is a core or pack node`);
        assert.deepEqual(flow.filter((n) => n.type === 'dedup-redis'), []);
        for (const n of flow.filter((x) => x.type === 'sliding-window-dedup' || x.type === 'sensor-reconnect-dedup')) {
          assert.equal(n.store, 'memory', `${n.id} uses the memory store`);
          assert.equal(n.redis, '');
        }
        assert.ok(flow.every((n) => n.z === undefined), 'no tab: Node-RED imports it onto the current one');
      });

      it(`saves every pack node at config version ${CONFIG_VERSION}, with every option a new node has`, function () {
        for (const n of flow.filter((x) => DEFAULTS[x.type] !== undefined)) {
          assert.equal(n.version, CONFIG_VERSION, `${n.id} version`);
          for (const option of Object.keys(DEFAULTS[n.type] as object)) assert.ok(option in n, `${n.type} ${n.id} has ${option}`);
          for (const old of ['contentFields', 'valueMin', 'valueMax']) assert.ok(!(old in n), `${n.id} has no version 1 option ${old}`);
        }
      });

      describe('deployed as it is', function () {
        const run = examplesInThisBlock();

        it('shows results in the debug sidebar within seconds, and logs no error', async function () {
          const ex = await run(name);
          const debugs = flow.filter((n) => n.type === 'debug').map((n) => n.id);
          await until(() => debugs.some((id) => ex.arrivals(id).length > 0), 'a message at a debug node', 5000);
          const dedups = flow.filter((n) => n.type === 'sliding-window-dedup' || n.type === 'sensor-reconnect-dedup').map((n) => n.id);
          await until(() => dedups.every((id) => /received|admitted/.test(String(ex.statuses(id).at(-1)?.text))), 'the counts in the dedup nodes\' status', 3000);
          const catches = flow.filter((n) => n.type === 'catch').flatMap((n) => (n.wires as string[][]).flat());
          for (const id of catches) {
            const errors = ex.arrivals(id).filter((m) => m.error !== undefined);
            assert.deepEqual(errors.map((m) => m.error?.message), [], `nothing at the Catch node of ${name} unless a button is pressed`);
          }
          assert.deepEqual(ex.logged(), []);
        });
      });
    });
  }

  describe('a repeating inject stops feeding the debug sidebar after a while', function () {
    const run = examplesInThisBlock();
    /** At most this many messages at an example's debug nodes from its simulation's whole run (87 in 10 s, and on, before). */
    const BUDGET = 260;

    for (const name of EXAMPLES) {
      const repeating = exampleFlow(name).filter((n) => n.type === 'inject' && typeof n.repeat === 'string' && n.repeat !== '');
      if (repeating.length === 0) continue;
      it(`${name}: its simulation says it is done, then sends nothing more`, async function () {
        const ex = await run(name, { manualInjects: true });
        const flow = exampleFlow(name);
        const debugs = flow.filter((n) => n.type === 'debug').map((n) => ex.arrivals(n.id));
        const shown = (): number => debugs.reduce((sum, list) => sum + list.length, 0);
        // What each repeating inject feeds: the node whose status says which tick it is at.
        const simulators = repeating.flatMap((n) => (n.wires as string[][]).flat());
        const done = (): boolean => simulators.every((id) => /done/.test(String(ex.statuses(id).at(-1)?.text)));
        let presses = 0;
        while (!done()) {
          assert.ok(++presses <= 100, `${name} still runs after ${presses - 1} ticks`);
          const before = simulators.map((id) => ex.statuses(id).length);
          for (const inject of repeating) ex.press(String(inject.name));
          await until(() => simulators.every((id, i) => ex.statuses(id).length > (before[i] ?? 0)), `the status of tick ${presses}`);
        }
        // What the last ticks sent may still be on its way (a link call, a store): let it land.
        let settled = -1;
        while (settled !== shown()) {
          settled = shown();
          await sleep(300);
        }
        for (let extra = 0; extra < 5; extra++) for (const inject of repeating) ex.press(String(inject.name));
        await sleep(300);
        assert.equal(shown(), settled, `${name}: five more ticks after "done" reach no debug node`);
        assert.ok(settled > 0 && settled <= BUDGET, `${name}: ${settled} messages at its debug nodes over its whole run`);
      });
    }
  });

  describe('sensor-reconnect-fleet does what its comment says', function () {
    const run = examplesInThisBlock();

    const countsOf = (msg: Msg | undefined): string => {
      const p = msg?.payload as Record<string, number>;
      return `${p.received} / ${p.unique} / ${p.duplicates_suppressed} / ${p.rejected}`;
    };

    it('a normal tick 4 / 4 / 0 / 0, the reconnect tick 10 / 8 / 2 / 0, its replay 7 / 0 / 7 / 0, a bad reading 2 / 1 / 0 / 1', async function () {
      const ex = await run('sensor-reconnect-fleet', { manualInjects: true });
      const audits = ex.arrivals(ex.idOf('audit'));
      const press = async (inject: string): Promise<Msg> => {
        const before = audits.length;
        ex?.press(inject);
        await until(() => audits.length > before, `the audit after "${inject}"`);
        return audits[before] as Msg;
      };
      const ticks: string[] = [];
      for (let tick = 1; tick <= 8; tick++) ticks.push(countsOf(await press('every 3 s')));
      assert.deepEqual(ticks, ['4 / 4 / 0 / 0', '4 / 4 / 0 / 0', '4 / 4 / 0 / 0', '3 / 3 / 0 / 0', '3 / 3 / 0 / 0', '3 / 3 / 0 / 0', '3 / 3 / 0 / 0', '10 / 8 / 2 / 0']);
      assert.equal(countsOf(await press('replay last reconnect')), '7 / 0 / 7 / 0');
      const caught = ex.arrivals(ex.idOf('rejected readings'));
      assert.equal(countsOf(await press('burst with a bad reading')), '2 / 1 / 0 / 1');
      await until(() => caught.length === 1, 'the bad reading at the Catch node');
      assert.match(String(caught[0]?.error?.message), /fill_pct/);
    });
  });

  describe('sliding-window-fleet does what its comment says', function () {
    const run = examplesInThisBlock();

    it('veh-driving passes every second ping, veh-flaky\'s copies and the 30 s old pings are suppressed', async function () {
      const ex = await run('sliding-window-fleet', { manualInjects: true });
      const admitted = ex.arrivals(ex.idOf('admitted'));
      const suppressed = ex.arrivals(ex.idOf('suppressed'));
      const TICKS = 14;
      let expected = 0;
      for (let tick = 1; tick <= TICKS; tick++) {
        expected += tick % 7 === 0 ? 5 : 4;
        ex.press('every second');
        await until(() => admitted.length + suppressed.length === expected, `the pings of tick ${tick}`);
      }
      const of = (list: Msg[], asset: string): Msg[] => list.filter((m) => m.dedup?.assetId === asset);
      // Ticks are pressed faster than the 10 s heartbeat: only movement admits.
      assert.equal(of(admitted, 'veh-driving').length, TICKS / 2, 'every second ping of veh-driving');
      assert.equal(of(admitted, 'veh-parked').length, 1, 'veh-parked only once within one heartbeat');
      assert.ok(of(suppressed, 'veh-flaky').length >= TICKS, 'each copy of veh-flaky suppressed');
      const late = suppressed.filter((m) => m.dedup?.reason === 'late' && m.dedup?.assetId === 'veh-driving');
      assert.equal(late.length, 2, 'the 30 s old ping of every 7th tick is late');
    });
  });
});
