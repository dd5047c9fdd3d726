/**
 * `msg.reset`, as the core filter and delay nodes read it: present means
 * reset. A string or number names one asset or device; anything else
 * (true, {}, ...) resets everything.
 */
import type { NodeMessage } from './api';

export type ResetTarget = { all: true } | { all: false; id: string };

export function resetTarget(msg: NodeMessage): ResetTarget | undefined {
  if (!Object.prototype.hasOwnProperty.call(msg, 'reset') || msg.reset === undefined) return undefined;
  const value = msg.reset;
  if ((typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value))) {
    return { all: false, id: String(value) };
  }
  return { all: true };
}
