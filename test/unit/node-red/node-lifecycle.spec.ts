/**
 * How long a node waits on close for what it has out (src/node-red/node-lifecycle.ts,
 * close-times.ts), on a mocked clock; what a close keeps of a node by its
 * id (node-red/node-registry, telemetry/records): all of it across a
 * redeploy, none once the node is deleted; and a config that cannot start.
 * The dedup confirm node, started as Node-RED starts it, against a
 * stand-in RED and a stand-in sensor node's seen-set.
 */
import assert from 'node:assert/strict';
import { mock } from 'node:test';
import { SETTLE } from '../../../src/core/sensor/seen-codes';
import type { Node, NodeAPI, NodeMessage } from '../../../src/node-red/api';
import { claimHolder, registerClaimHolder, type ClaimHolder } from '../../../src/node-red/claim-registry';
import { DRAIN_MS, drainLimit } from '../../../src/node-red/close-times';
import { ConfirmController, readConfirmConfig, type ConfirmConfig } from '../../../src/node-red/confirm-controller';
import { startNode, type NodeKind } from '../../../src/node-red/node-lifecycle';
import { claimStores, type ClaimStores } from '../../../src/node-red/store-binding';
import type { SeenStore } from '../../../src/stores/types';
import { confirmRecords, telemetryOf } from '../../../src/telemetry/records';

const CONFIRM: NodeKind<ConfirmConfig, ClaimStores> = {
  type: 'dedup-confirm',
  read: (_RED, def) => readConfirmConfig(def),
  store: () => claimStores,
  controller: (parts) => new ConfirmController(parts),
};

interface FakeNode {
  node: Node;
  input: (msg: NodeMessage) => { done: () => Error | undefined | 'not yet' };
  close: (removed: boolean) => { done: () => boolean };
  errors: unknown[];
}

function fakeNode(id: string): FakeNode {
  let onInput: ((msg: NodeMessage, send: () => void, done: (error?: Error) => void) => void) | undefined;
  let onClose: ((removed: boolean, done: () => void) => void) | undefined;
  const errors: unknown[] = [];
  const node = {
    id,
    type: 'dedup-confirm',
    credentials: {},
    wires: [[]],
    on(event: string, handler: unknown) {
      if (event === 'input') onInput = handler as typeof onInput;
      if (event === 'close') onClose = handler as typeof onClose;
    },
    send: () => undefined,
    status: () => undefined,
    error: (error: unknown) => errors.push(error),
    warn: () => undefined,
    log: () => undefined,
  } as unknown as Node;
  return {
    node,
    errors,
    input: (msg) => {
      let ended: Error | undefined | 'not yet' = 'not yet';
      assert.ok(onInput, 'the node takes messages');
      onInput(msg, () => undefined, (error) => (ended = error));
      return { done: () => ended };
    },
    close: (removed) => {
      let done = false;
      assert.ok(onClose, 'the node listens for close');
      onClose(removed, () => (done = true));
      return { done: () => done };
    },
  };
}

// The stand-in RED translates to the key itself and copies as Node-RED does.
const RED = { _: (key: string) => key, settings: {}, util: { cloneMessage: <T>(msg: T): T => structuredClone(msg) } } as unknown as NodeAPI;

/** A sensor node's seen-set whose settles answer `codes`, or never (`undefined`). */
function holder(codes: number[] | undefined): ClaimHolder {
  const store = {
    settle: (_request: unknown, replies: { value: (codes: number[], w: unknown) => void }, w: unknown) => {
      if (codes !== undefined) replies.value(codes, w);
    },
  } as unknown as SeenStore;
  return { store, claimOf: (key) => ({ key, group: key }), confirm: true, leaseSeconds: 60 };
}

const claimed = (node: string, keys: string[]): NodeMessage => ({ payload: 1, dedup: { node, token: 7, keys } });

/** Lets the close's promise reactions run between ticks of the mocked clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('node-red/node-lifecycle: close', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('a node with no store of its own (the confirm node) waits the whole drain for its settles, and no more', async function () {
    registerClaimHolder('lc-sensor-silent', holder(undefined));
    const { node, input, close } = fakeNode('lc-storeless');
    startNode(RED, node, { id: 'lc-storeless', type: 'dedup-confirm' }, CONFIRM);
    const message = input(claimed('lc-sensor-silent', ['k']));
    assert.equal(message.done(), 'not yet', 'its settle is out at the store');
    const closing = close(false);
    await settle();
    mock.timers.tick(DRAIN_MS - 1);
    await settle();
    assert.equal(closing.done(), false, 'still waiting for its settle');
    mock.timers.tick(1);
    await settle();
    assert.equal(closing.done(), true, 'ends at the drain limit, without a further wait');
  });

  it('a node whose config cannot start answers every message with the reason, and closes at once', async function () {
    const { node, input, close, errors } = fakeNode('lc-refused');
    startNode(RED, node, { id: 'lc-refused', type: 'dedup-confirm', action: 'both' } as never, CONFIRM);
    assert.equal(errors.length, 1, 'the reason is logged at start');
    const answered = input(claimed('lc-sensor-silent', ['k'])).done();
    assert.ok(answered instanceof Error && answered.message === 'dedup-confirm.errors.badConfig', String(answered));
    const closing = close(true);
    await settle();
    assert.equal(closing.done(), true);
  });

  it('drain limits: a store by its give-up time, a node whose store has none (memory, the confirm node) DRAIN_MS', () => {
    assert.equal(drainLimit(Infinity), DRAIN_MS);
    assert.equal(drainLimit(2000), 3000);
    assert.equal(claimStores.bind({} as never).timeoutMs, Infinity);
  });
});

describe('node-red/node-lifecycle: what a close keeps of the node', () => {
  for (const removed of [false, true]) {
    it(removed ? 'a deleted node: its counts and claims are forgotten' : 'a redeploy: its counts stay', async function () {
      const id = removed ? 'lc-removed' : 'lc-redeployed';
      registerClaimHolder(`${id}-sensor`, holder([SETTLE.settled, SETTLE.settled, SETTLE.settled]));
      const { node, input, close } = fakeNode(id);
      startNode(RED, node, { id, type: 'dedup-confirm' }, CONFIRM);
      assert.equal(input(claimed(`${id}-sensor`, ['a', 'b', 'c'])).done(), undefined, 'settled, and passed on');
      registerClaimHolder(id, holder([]));
      const closing = close(removed);
      for (let i = 0; i < 5 && !closing.done(); i++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(closing.done(), true);
      const kept = [...confirmRecords()].find((c) => c.subject.id === id);
      if (removed) {
        assert.equal(kept, undefined);
        assert.equal(telemetryOf(id), undefined);
        assert.equal(claimHolder(id), undefined);
      } else {
        assert.equal(kept?.keys[0], 3, 'confirmed keys counted before the redeploy');
      }
    });
  }
});
