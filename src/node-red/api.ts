/**
 * The part of the Node-RED runtime API these nodes use, typed by hand:
 * @types/node-red describes Node-RED 1.x and pulls in a tree of packages for
 * the few calls below.
 */
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
  util: {
    /** Node-RED's own deep copy of a message, as send() makes for a second wire and handleError for each Catch node. */
    cloneMessage<T>(msg: T): T;
    normalisePropertyExpression(expr: string): (string | number)[];
    setMessageProperty(msg: NodeMessage, path: string, value: unknown, createMissing?: boolean): boolean;
    /** A JSONata expression, prepared once; evaluated with evaluateJSONataExpression. */
    prepareJSONataExpression(expression: string, node: object): unknown;
    evaluateJSONataExpression(expression: unknown, msg: NodeMessage, callback: (error: Error | null, result?: unknown) => void): void;
  };
  settings: Record<string, unknown>;
  _(key: string, substitutions?: Record<string, string | number>): string;
}
