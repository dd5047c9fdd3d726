/**
 * How long a node waits on close for what it has out (src/node-red/node-lifecycle.ts,
 * close-times.ts), on a mocked clock; and what a close keeps of a node by its
 * id (node-red/node-registry): all of it across a redeploy, none once the
 * node is deleted.
 */
import assert from 'node:assert/strict';
import { mock } from 'node:test';
import { confirmCounters, confirmReported, confirmStarted } from '../../../src/metrics/confirm-counters';
import type { Node, NodeAPI } from '../../../src/node-red/api';
import { claimHolder, registerClaimHolder } from '../../../src/node-red/claim-registry';
import { closeDrainLimit, DRAIN_MS } from '../../../src/node-red/close-times';
import { NodeLifecycle } from '../../../src/node-red/node-lifecycle';
import { recordOf } from '../../../src/node-red/node-registry';
import type { SeenStore } from '../../../src/stores/types';

interface FakeNode {
  node: Node;
  close: (removed: boolean) => { done: () => boolean };
}

function fakeNode(id: string): FakeNode {
  let onClose: ((removed: boolean, done: () => void) => void) | undefined;
  const node = {
    id,
    type: 'dedup-confirm',
    credentials: {},
    on(event: string, handler: unknown) {
      if (event === 'close') onClose = handler as typeof onClose;
    },
    send: () => undefined,
    status: () => undefined,
    error: () => undefined,
    warn: () => undefined,
    log: () => undefined,
  } as Node;
  return {
    node,
    close: (removed) => {
      let done = false;
      assert.ok(onClose, 'the lifecycle listens for close');
      onClose(removed, () => (done = true));
      return { done: () => done };
    },
  };
}

// The lifecycle only translates with RED here (its sends are not exercised): a stand-in with RED._ and cloneMessage.
const RED = { _: (key: string) => key, util: { cloneMessage: <T>(msg: T): T => structuredClone(msg) } } as unknown as NodeAPI;

/** Lets the close's promise reactions run between ticks of the mocked clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('node-red/node-lifecycle: close', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('a node with no store of its own (the confirm node) waits the whole drain for its settles, and no more', async function () {
    const { node, close } = fakeNode('lc-storeless');
    const life = new NodeLifecycle(RED, node, 'dedup-confirm', () => '');
    life.storeless();
    life.begin();
    const closing = close(false);
    await settle();
    mock.timers.tick(DRAIN_MS - 1);
    await settle();
    assert.equal(closing.done(), false, 'still waiting for its settle');
    mock.timers.tick(1);
    await settle();
    assert.equal(closing.done(), true, 'ends at the drain limit, without a further wait');
  });

  it('a node whose store never bound waits a second, then a second more after failing what is left', async function () {
    const { node, close } = fakeNode('lc-unbound');
    const life = new NodeLifecycle(RED, node, 'dedup-confirm', () => '');
    life.begin();
    const closing = close(false);
    await settle();
    mock.timers.tick(1000);
    await settle();
    assert.equal(closing.done(), false);
    mock.timers.tick(1000);
    await settle();
    assert.equal(closing.done(), true);
  });

  it('drain limits: a bound store by its give-up time, a storeless node DRAIN_MS', () => {
    assert.equal(closeDrainLimit(undefined, true), DRAIN_MS);
    assert.equal(closeDrainLimit(undefined, false), 1000);
    assert.equal(closeDrainLimit(Infinity, false), DRAIN_MS);
    assert.equal(closeDrainLimit(2000, true), 3000);
  });
});

describe('node-red/node-lifecycle: what a close keeps of the node', () => {
  const holder = (): { store: SeenStore; claimOf: (key: string) => { key: string; group: string }; confirm: boolean; leaseSeconds: number } => ({
    store: {} as SeenStore,
    claimOf: (key) => ({ key, group: key }),
    confirm: true,
    leaseSeconds: 60,
  });

  for (const removed of [false, true]) {
    it(removed ? 'a deleted node: its counts and claims are forgotten' : 'a redeploy: its counts stay', async function () {
      const id = removed ? 'lc-removed' : 'lc-redeployed';
      const { node, close } = fakeNode(id);
      new NodeLifecycle(RED, node, 'dedup-confirm', () => '');
      confirmStarted(node);
      confirmReported(node, 'confirm', 3, 0, 0, 0);
      registerClaimHolder(id, holder());
      const closing = close(removed);
      for (let i = 0; i < 5 && !closing.done(); i++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(closing.done(), true);
      const kept = [...confirmCounters()].find((c) => c.id === id);
      if (removed) {
        assert.equal(kept, undefined);
        assert.equal(recordOf(id, 'confirm'), undefined);
        assert.equal(claimHolder(id), undefined);
      } else {
        assert.equal(kept?.keys[0], 3, 'confirmed keys counted before the redeploy');
      }
    });
  }
});
