/**
 * A message's way out of a node, in one place: it leaves exactly once (on
 * an output, or to Catch) and done() is called once, whatever the message
 * carries. Only the Outlet marks a message as left or ended.
 *
 * What bites. Node-RED copies a message with a recursive deep clone
 * (RED.util.cloneMessage): for every destination of one send() after the
 * first, for each Catch node of an error and for each Complete node of a
 * done(). A message nested deeply enough (about 2,500 levels of valid JSON
 * while the clone is still interpreted, twice that once it is optimised)
 * overflows the stack in that copy, and the RangeError comes out of send(),
 * done() or node.error(): from a store's callback it was an uncaught
 * exception that stopped Node-RED; inside the input handler the message
 * vanished, audit and Catch included.
 *
 * The rule, per message a node sends:
 * - It goes out in a send() of its own, never sharing one with another
 *   message: Node-RED then copies it only for the second and further wires
 *   of its own output. The messages of one input leave in the order one
 *   send() would have sent them.
 * - Where one send() would have had Node-RED copy a message (every message
 *   after the first: an audit after the admitted readings, each reading
 *   after the first in output mode `each`) the node copies it itself
 *   (RED.util.cloneMessage) and sends the copy, so that messages on
 *   different outputs still share no objects. A message that cannot be
 *   copied goes to no wire: it goes to Catch, with the reason.
 * - When its output has more than one wire, Node-RED copies it for the
 *   others: the node first checks that it can be copied with SPARE_LEVELS
 *   levels of nesting to spare (more stack than Node-RED uses between
 *   send() and its copy). One that cannot goes to Catch, on no wire. So a
 *   message never reaches some wires of its output and Catch as well.
 * - Should send() throw all the same (the clone was optimised for the check
 *   and not for the send, say): Node-RED routes the first wire before it
 *   copies for the next, so a message with more than one wire has left on
 *   its output; what the other wires missed goes to the log, not to Catch,
 *   which would count it twice. With one wire Node-RED copies nothing, so a
 *   throw means nothing was routed: the message goes to Catch.
 * - For Catch, the message itself when Node-RED can copy it, else a stand-in:
 *   the same message with each part that cannot be copied replaced by a
 *   note of why, looking up to SALVAGE_LEVELS levels in (so an audit keeps
 *   its counts and only the reading that cannot be copied is replaced).
 * - The cost: a copy the node makes replaces one Node-RED would have made;
 *   only a message on an output with more than one wire is copied once
 *   more than before (the check).
 * - done() is guarded as well: when its copy for Catch fails the stand-in
 *   goes instead; when its copy for a Complete node fails the message has
 *   already left, so that is a warning.
 */
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { errorMessage, toError } from '../core/parse/errors';

/** Levels of nesting a message must still be copyable under to count as sendable. */
export const SPARE_LEVELS = 16;

type Translate = (key: string, subs?: Record<string, string | number>) => string;

/** A message on its way out of a node, and how far it has got (the Outlet's to change). */
export interface Leaving {
  msg: NodeMessage;
  send: SendFunction;
  done: DoneFunction;
  /** It went out: on an output, or to Catch. */
  left: boolean;
  /** done() was called. */
  ended: boolean;
}

/** A message that has not left yet, as the input handler received it. */
export function leaving(msg: NodeMessage, send: SendFunction, done: DoneFunction): Leaving {
  return { msg, send, done, left: false, ended: false };
}

export class Outlet {
  /** The node is closing: Catch nodes may be stopped already. */
  private closing = false;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly t: Translate,
  ) {}

  /**
   * The message leaves on output `port`: msg (or, with `copy`, a copy of
   * it: a later message of the same input) in a send() of its own, or, if
   * it cannot be sent, to Catch with the reason; then it ends.
   */
  leave(w: Leaving, port: number, msg: NodeMessage = w.msg, copy = false): void {
    this.send(w.send, port, msg, copy);
    w.left = true;
    this.finish(w);
  }

  /**
   * The message goes to Catch with `error`, and ends. Once the node is
   * closing, Node-RED may already have stopped the Catch node that would
   * have received it, so the message's id and the reason go to the log as
   * well.
   */
  fail(w: Leaving, error: Error): void {
    if (this.closing) this.logError(this.t('errors.undelivered', { msgid: idOf(w.msg), error: error.message }));
    this.finish(w, error);
  }

  /** From now on a failed message is logged as well (see fail()). */
  closeStarted(): void {
    this.closing = true;
  }

  /**
   * Sends msg on output `port` (from 0) in a send() of its own; `copy`
   * sends a copy of it instead (a later message of the same input). True
   * when it went out on the output; false when it could not, and went to
   * Catch with the reason instead.
   */
  send(send: SendFunction, port: number, msg: NodeMessage, copy = false): boolean {
    const wires = this.node.wires?.[port];
    // Unknown wiring is taken as more than one wire: the check costs a copy, never a message.
    const fansOut = wires === undefined || wires.length > 1;
    if (fansOut || (copy && wires.length > 0)) {
      const copied = copyOf(this.RED, msg, fansOut ? SPARE_LEVELS : 0);
      if (copied instanceof CopyFailed) {
        this.toCatchInstead(msg, this.unsendable(port, copied.error), copied.error);
        return false;
      }
      if (copy) msg = copied;
    }
    try {
      send(onPort(this.node.wires?.length ?? 0, port, msg));
      return true;
    } catch (error) {
      if (!fansOut) {
        this.toCatch(msg, this.unsendable(port, error));
        return false;
      }
      this.logError(this.t('errors.partlySent', { msgid: idOf(msg), output: port + 1, error: errorMessage(error) }));
      return true;
    }
  }

  /** Hands msg to Catch with the error: the message itself, or its stand-in when Node-RED cannot copy it. */
  toCatch(msg: NodeMessage, error: Error): void {
    try {
      this.node.error(error, msg);
    } catch (copyFailure) {
      this.toCatchInstead(msg, error, copyFailure);
    }
  }

  /**
   * Ends the message: done(error) sends it to Catch, done() only ends it.
   * Marks it left (with an error) and ended.
   */
  finish(w: Leaving, error?: Error): void {
    if (error !== undefined) w.left = true;
    w.ended = true;
    try {
      w.done(error);
    } catch (copyFailure) {
      // done() counted the message before Node-RED's copy for Catch or Complete failed.
      if (error !== undefined) this.toCatchInstead(w.msg, error, copyFailure);
      else this.warn(this.t('warnings.completeNotTold', { msgid: idOf(w.msg), error: errorMessage(copyFailure) }));
    }
  }

  /** finish() for a message that has no Leaving yet (the input handler's). */
  end(msg: NodeMessage, done: DoneFunction, error?: Error): void {
    this.finish({ msg, send: noSend, done, left: false, ended: false }, error);
  }

  /** Ends a message whatever happened to it: to Catch with `error` unless it left already. */
  abort(w: Leaving, error: Error): void {
    if (!w.left) this.finish(w, error);
    else if (!w.ended) this.finish(w);
  }

  /**
   * A callback of a message threw (a fault of this pack): the reason is
   * reported, and the message still leaves exactly once and ends.
   */
  rescue(w: Leaving, thrown: unknown): void {
    const error = new Error(this.t('errors.callbackFailed', { error: errorMessage(thrown) }));
    if (!w.left) this.finish(w, error);
    else {
      this.logError(error.message);
      if (!w.ended) this.finish(w);
    }
  }

  /** A callback the store's batcher reports as having thrown, with no message to end: to the log. */
  readonly callbackFailed = (thrown: unknown): void => {
    this.logError(this.t('errors.callbackFailed', { error: errorMessage(thrown) }));
  };

  private unsendable(port: number, problem: unknown): Error {
    return new Error(this.t('errors.unsendable', { output: port + 1, error: errorMessage(problem) }));
  }

  private toCatchInstead(msg: NodeMessage, error: Error, copyFailure: unknown): void {
    try {
      this.node.error(error, standIn(this.RED, msg, this.t('errors.notCopied', { error: errorMessage(copyFailure) })));
    } catch (again) {
      this.logError(this.t('errors.notCaught', { msgid: idOf(msg), error: error.message, problem: errorMessage(again) }));
    }
  }

  /** To the log only (no message: no Catch node), never throwing. */
  private logError(text: string): void {
    try {
      this.node.error(text);
    } catch {
      // The log itself failed: nothing is left to tell.
    }
  }

  private warn(text: string): void {
    try {
      this.node.warn(text);
    } catch {
      // As logError.
    }
  }
}

/** The send of a message that has nothing to send (ended at once). */
const noSend: SendFunction = () => undefined;

/** Why a message could not be copied: never a message, whatever a message holds. */
class CopyFailed {
  constructor(readonly error: Error) {}
}

/**
 * msg copied as Node-RED copies it, here `spare` levels of nesting deeper
 * than it will be (so the stack Node-RED's own later copy of it uses is
 * known to be there), or why it cannot be.
 */
function copyOf(RED: NodeAPI, msg: NodeMessage, spare: number): NodeMessage | CopyFailed {
  try {
    if (spare === 0) return RED.util.cloneMessage(msg);
    // cloneMessage leaves msg.req and msg.res (an HTTP request's) uncopied
    // only on the message it is given, so they are set aside from the one
    // that is wrapped.
    const bare: NodeMessage = { ...msg };
    delete bare.req;
    delete bare.res;
    let wrapped: unknown = bare;
    for (let i = 0; i < spare; i++) wrapped = [wrapped];
    let copy = RED.util.cloneMessage(wrapped);
    for (let i = 0; i < spare; i++) copy = (copy as unknown[])[0];
    const copied = copy as NodeMessage;
    if (msg.req !== undefined) copied.req = msg.req;
    if (msg.res !== undefined) copied.res = msg.res;
    return copied;
  } catch (error) {
    return new CopyFailed(toError(error));
  }
}

/** Why Node-RED could not copy value with SPARE_LEVELS levels to spare, or undefined when it can. */
function copyProblem(RED: NodeAPI, value: unknown): Error | undefined {
  let wrapped: unknown = value;
  for (let i = 0; i < SPARE_LEVELS; i++) wrapped = [wrapped];
  try {
    RED.util.cloneMessage(wrapped);
    return undefined;
  } catch (error) {
    return toError(error);
  }
}

/** How far into a message a stand-in looks for the parts that can still be copied. */
const SALVAGE_LEVELS = 4;

/**
 * msg with every part Node-RED cannot copy replaced by `note`, looking
 * SALVAGE_LEVELS levels in (a burst's readings, an audit's suppressed
 * readings), so that what can still reach Catch does.
 */
function standIn(RED: NodeAPI, msg: NodeMessage, note: string): NodeMessage {
  const copy = salvage(RED, msg, note, SALVAGE_LEVELS);
  return copy !== null && typeof copy === 'object' && !Array.isArray(copy) ? (copy as NodeMessage) : { _msgid: idOf(msg), payload: note };
}

function salvage(RED: NodeAPI, value: unknown, note: string, levels: number): unknown {
  if (copyProblem(RED, value) === undefined) return value;
  if (levels === 0 || value === null || typeof value !== 'object') return note;
  try {
    if (Array.isArray(value)) return value.map((item: unknown) => salvage(RED, item, note, levels - 1));
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return note;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      // Defined, not assigned: an own "__proto__" key stays an own key.
      Object.defineProperty(copy, key, {
        value: salvage(RED, (value as Record<string, unknown>)[key], note, levels - 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  } catch {
    // A getter or a proxy that throws: nothing of it can be read.
    return note;
  }
}

/** msg on output `port` of a node with `outputs` outputs, nothing on the others. */
function onPort(outputs: number, port: number, msg: NodeMessage): (NodeMessage | null)[] {
  const out = new Array<NodeMessage | null>(Math.max(outputs, port + 1)).fill(null);
  out[port] = msg;
  return out;
}

function idOf(msg: NodeMessage): string {
  try {
    return typeof msg._msgid === 'string' ? msg._msgid : '?';
  } catch {
    return '?';
  }
}
