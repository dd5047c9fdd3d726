/**
 * The dedup-redis config node on its own: what it says about its settings
 * when it starts. (Connecting, sharing and closing are covered with the
 * dedup nodes that use it, in test/redis and test/faults.)
 */
import assert from 'node:assert/strict';
import { helper, node, packNodes, startServer, stopServer, warningsOf } from '../support/node-red-helper';

describe('dedup-redis config node', function () {
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  const load = (config: Record<string, unknown>): Promise<void> =>
    helper.load(packNodes(['dedup-redis']), [{ id: 'conn', type: 'dedup-redis', ...config }]);

  it('warns that a braced key prefix puts every key of a Cluster in one slot', async function () {
    await load({ mode: 'cluster', clusterNodes: '127.0.0.1:7000', keyPrefix: 'dedup{eu}:' });
    const warnings = warningsOf('conn');
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0] ?? '', /"dedup\{eu\}:" contains a brace: on a Cluster every key then lands in one hash slot/);
  });

  it('says nothing of braces outside Cluster mode, or of a plain prefix on a Cluster', async function () {
    await load({ mode: 'standalone', keyPrefix: 'dedup{eu}:' });
    assert.deepEqual(warningsOf('conn'), []);
    await helper.unload();
    await load({ mode: 'cluster', clusterNodes: '127.0.0.1:7000', keyPrefix: 'dedup-eu:' });
    assert.deepEqual(warningsOf('conn'), []);
  });

  it('reads its linger: a whole number of milliseconds from 0 to 100, 3 when not set, and names a bad one', async function () {
    type Conn = { problem?: string; connection?: { settings: { lingerMs?: number } } };
    const cases: [unknown, number | RegExp][] = [
      [undefined, 3],
      ['', 3],
      ['0', 0],
      [5, 5],
      ['100', 100],
      ['101', /lingerMs must be a whole number of milliseconds from 0 to 100, not "101"/],
      ['2.5', /lingerMs must be a whole number of milliseconds from 0 to 100, not "2.5"/],
      ['-1', /lingerMs must be 0 or more, not "-1"/],
      ['soon', /lingerMs must be 0 or more, not "soon"/],
    ];
    for (const [lingerMs, expected] of cases) {
      await load({ mode: 'standalone', ...(lingerMs === undefined ? {} : { lingerMs }) });
      const conn = node('conn') as unknown as Conn;
      if (typeof expected === 'number') {
        assert.equal(conn.problem, undefined, `lingerMs ${JSON.stringify(lingerMs)}`);
        assert.equal(conn.connection?.settings.lingerMs, expected, `lingerMs ${JSON.stringify(lingerMs)}`);
      } else {
        assert.match(conn.problem ?? '', expected);
      }
      await helper.unload();
    }
  });
});
