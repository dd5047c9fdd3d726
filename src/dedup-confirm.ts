/** The dedup confirm node: Node-RED's entry point, wiring only (behaviour: node-red/confirm-controller). */
import type { NodeAPI } from './node-red/api';
import { editorSettings } from './node-red/editor-settings';
import { ConfirmController, readConfirmConfig, type ConfirmConfig } from './node-red/confirm-controller';
import { nodeConstructor, type NodeKind } from './node-red/node-lifecycle';
import { claimStores, type ClaimStores } from './node-red/store-binding';

const DEDUP_CONFIRM: NodeKind<ConfirmConfig, ClaimStores> = {
  type: 'dedup-confirm',
  read: (_RED, def) => readConfirmConfig(def),
  store: () => claimStores,
  controller: (parts) => new ConfirmController(parts),
};

export = function registerDedupConfirm(RED: NodeAPI): void {
  RED.nodes.registerType('dedup-confirm', nodeConstructor(RED, DEDUP_CONFIRM), { settings: editorSettings('dedup-confirm') });
};
