/**
 * The part of the Node-RED runtime API this pack uses, typed by hand, once
 * for the nodes and the sidebar plugin alike (Node-RED hands both the same
 * API object): @types/node-red describes Node-RED 1.x and pulls in a tree
 * of packages for the few calls below.
 */
import type { IncomingMessage } from 'http';

export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  topic?: unknown;
  reset?: unknown;
  [key: string]: unknown;
}

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export type SendFunction = (msg: NodeMessage | (NodeMessage | NodeMessage[] | null)[]) => void;
export type DoneFunction = (err?: Error) => void;

export interface NodeDef {
  id: string;
  type: string;
  name?: string;
  z?: string;
}

export interface Node<Credentials = Record<string, string>> {
  id: string;
  type: string;
  name?: string;
  credentials: Credentials;
  /** Per output, the ids of the nodes wired to it (set by Node-RED; absent on a stand-in RED in tests). */
  wires?: string[][];
  on(event: 'input', handler: (msg: NodeMessage, send: SendFunction, done: DoneFunction) => void): void;
  on(event: 'close', handler: (removed: boolean, done: () => void) => void): void;
  send(msg: NodeMessage | (NodeMessage | NodeMessage[] | null)[]): void;
  status(status: NodeStatus): void;
  error(error: unknown, msg?: NodeMessage): void;
  warn(message: unknown): void;
  log(message: unknown): void;
}

/** A request to the admin API (Express's, as Node-RED serves it). */
export interface AdminRequest extends IncomingMessage {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body?: unknown;
  /** Set by Node-RED's body parsers once they consumed the body. */
  _body?: boolean;
}

export interface AdminResponse {
  status(code: number): AdminResponse;
  set(field: string, value: string): AdminResponse;
  json(body: unknown): void;
  send(body: string): void;
}

export type AdminHandler = (req: AdminRequest, res: AdminResponse, next: (error?: unknown) => void) => void;

export interface NodeAPI {
  nodes: {
    createNode(node: Node<unknown>, def: NodeDef): void;
    // Node-RED calls the constructor with `this` bound to the new node.
    registerType(
      type: string,
      constructor: (this: Node<never>, def: never) => void,
      options?: { credentials?: Record<string, { type: 'text' | 'password' }>; settings?: Record<string, unknown> },
    ): void;
    getNode(id: string): unknown;
  };
  plugins: { registerPlugin(id: string, definition: Record<string, unknown>): void };
  util: {
    /** Node-RED's own deep copy of a message, as send() makes for a second wire and handleError for each Catch node. */
    cloneMessage<T>(msg: T): T;
    normalisePropertyExpression(expr: string): (string | number)[];
    /** A JSONata expression, prepared once; evaluated with evaluateJSONataExpression. */
    prepareJSONataExpression(expression: string, node: object): unknown;
    evaluateJSONataExpression(expression: unknown, msg: NodeMessage, callback: (error: Error | null, result?: unknown) => void): void;
    /** A node's setting or environment variable (NR_FLOW_NAME: its flow's name); absent from a stand-in RED in tests. */
    getSetting?(node: unknown, name: string): unknown;
  };
  /** The runtime settings (settings.js). */
  settings: Record<string, unknown>;
  log: { warn(message: string): void };
  /** The admin API's Express app, and the permission checks of its routes. */
  httpAdmin: { get(path: string, ...handlers: AdminHandler[]): void; post(path: string, ...handlers: AdminHandler[]): void };
  auth: { needsPermission(permission: string): AdminHandler };
  /** Pushes to every open editor. */
  comms: { publish(topic: string, data: unknown, retain?: boolean): void };
  _(key: string, substitutions?: Record<string, string | number>): string;
}
