/**
 * A `msg.` property path from the editor, parsed once when the node starts
 * (not on every message) and read without throwing: a missing parent gives
 * undefined, which the field readers then report by name. Only own
 * properties are followed, so a path through `__proto__` or `constructor`
 * reads nothing.
 */
import type { NodeAPI, NodeMessage } from './api';

export interface MessagePath {
  /** As the user wrote it, with `msg.` in front, for error messages. */
  readonly label: string;
  /** It reads inside msg.payload (`payload.assetId`), not the payload itself or another property. */
  readonly insidePayload: boolean;
  read(msg: NodeMessage): unknown;
}

export function compileMessagePath(RED: NodeAPI, expression: string): MessagePath {
  const bare = expression.startsWith('msg.') ? expression.slice(4) : expression;
  const parts = RED.util.normalisePropertyExpression(bare);
  return {
    label: `msg.${bare}`,
    insidePayload: parts.length > 1 && parts[0] === 'payload',
    read(msg) {
      let value: unknown = msg;
      for (const part of parts) {
        if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) {
          return undefined;
        }
        value = (value as Record<string | number, unknown>)[part];
      }
      return value;
    },
  };
}
