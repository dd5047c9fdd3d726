/**
 * The dedup sidebar's admin endpoints behind Node-RED's own adminAuth, in a
 * real Node-RED process: nothing without a token, the lists for a user who
 * may read, the what-if (work, and file uploads) only for one who may write.
 */
import assert from 'node:assert/strict';
import { startNodeRed, type NodeRedServer } from '../e2e/support/node-red';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own bcrypt, for the settings' password hashes
const bcrypt = require('bcryptjs') as { hashSync(password: string, rounds: number): string };

const TAB = 'auth-tab';
const FLOWS = [
  { id: TAB, type: 'tab', label: 'auth' },
  { id: 'auth-inject', type: 'inject', z: TAB, props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 100, y: 60, wires: [['auth-pings']] },
  {
    id: 'auth-pings',
    type: 'function',
    z: TAB,
    func: 'const out = []; for (let k = 0; k < 30; k++) out.push({ payload: { assetId: "v" + (k % 3), ts: Date.now() - 600000 + k * 20000, lat: 50, lon: 8 } }); return [out];',
    outputs: 1,
    x: 250,
    y: 60,
    wires: [['auth-sw']],
  },
  { id: 'auth-sw', type: 'sliding-window-dedup', z: TAB, x: 420, y: 60, wires: [[], []] },
];

describe('the dedup sidebar endpoints under adminAuth (a real Node-RED)', function () {
  this.timeout(90_000);
  let server: NodeRedServer;
  let writer = '';
  let reader = '';

  /** A token as the editor gets one; the scope asked for must be within the user's permissions. */
  async function token(username: string, scope: string): Promise<string> {
    const response = await fetch(`${server.url}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password: `${username}-secret` }),
    });
    assert.equal(response.status, 200, `token for ${username}`);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  function call(method: 'GET' | 'POST', path: string, bearer?: string, body?: string | Uint8Array, type = 'application/json'): Promise<Response> {
    const headers: Record<string, string> = { 'Content-Type': type };
    if (bearer !== undefined) headers.Authorization = `Bearer ${bearer}`;
    return fetch(`${server.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  }

  before(async function () {
    server = await startNodeRed({
      flows: FLOWS,
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [
            { username: 'operator', password: bcrypt.hashSync('operator-secret', 4), permissions: '*' },
            { username: 'viewer', password: bcrypt.hashSync('viewer-secret', 4), permissions: 'read' },
          ],
          // Only what the test harness needs to see that Node-RED is up; nothing of the sidebar's.
          default: { permissions: 'settings.read' },
        },
      },
    });
    writer = await token('operator', '*');
    reader = await token('viewer', 'read');
    const injected = await call('POST', '/inject/auth-inject', writer);
    assert.equal(injected.status, 200);
  });

  after(async function () {
    await server?.stop();
  });

  it('refuses every endpoint without a token (Node-RED answers 401 for a missing permission)', async function () {
    for (const [method, path] of [
      ['GET', '/dedup-sidebar/nodes'],
      ['GET', '/dedup-sidebar/nodes/auth-sw'],
      ['POST', '/dedup-sidebar/nodes/auth-sw/what-if'],
      ['POST', '/dedup-sidebar/nodes/auth-sw/what-if/file'],
      ['POST', '/dedup-sidebar/nodes/auth-sw/ttl-what-if'],
    ] as const) {
      const response = await call(method, path, undefined, method === 'POST' ? '{}' : undefined);
      assert.equal(response.status, 401, `${method} ${path}`);
    }
  });

  it('lets a user with read permission see the lists, not run a what-if or upload', async function () {
    const list = await call('GET', '/dedup-sidebar/nodes', reader);
    assert.equal(list.status, 200);
    const body = (await list.json()) as { nodes: { id: string }[] };
    assert.deepEqual(body.nodes.map((n) => n.id), ['auth-sw']);
    assert.equal((await call('GET', '/dedup-sidebar/nodes/auth-sw', reader)).status, 200);
    assert.equal((await call('POST', '/dedup-sidebar/nodes/auth-sw/what-if', reader, '{}')).status, 401);
    assert.equal((await call('POST', '/dedup-sidebar/nodes/auth-sw/what-if/file', reader, 'assetId,ts,lat,lon\n', 'text/csv')).status, 401);
    assert.equal((await call('POST', '/dedup-sidebar/nodes/auth-sw/ttl-what-if', reader, '{}')).status, 401);
  });

  it('lets a user with write permission run the what-if, and refuses an upload over 50 MB with a clear message', async function () {
    const whatIf = await call('POST', '/dedup-sidebar/nodes/auth-sw/what-if', writer, JSON.stringify({ seconds: '30,60', metres: '25' }));
    assert.equal(whatIf.status, 200, await whatIf.clone().text());
    const result = ((await whatIf.json()) as { result: { received: number; cells: unknown[] } }).result;
    assert.equal(result.received, 30);
    assert.equal(result.cells.length, 2);
    const big = await call('POST', '/dedup-sidebar/nodes/auth-sw/what-if/file', writer, new Uint8Array(50 * 1024 * 1024 + 10), 'application/octet-stream');
    assert.equal(big.status, 413);
    const error = ((await big.json()) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'tooLarge');
    assert.match(error.message, /^The file is 50\.0 MB; the sidebar reads files of at most 50 MB\. For larger files use the dedup-tune command\.$/);
  });
});
