/**
 * Writes to a Cluster's primaries gathered per turn. ioredis writes each
 * command to its socket as it is sent, one system call each; on a Cluster a
 * turn sends one script call per bucket (up to 24), and those system calls
 * were a fifth of the Node-RED process' CPU time at 20,000 msg/s (profiled
 * with bench/paced.ts). Corking the primaries' sockets for the rest of the
 * turn sends each socket's calls in one write. Every call is still a
 * command of its own, so ioredis still follows MOVED and ASK per call
 * (a pipeline with writes in it would hand a redirection back as an error).
 */
import type { Cluster } from 'ioredis';
import type { Writable } from 'stream';

export class TurnWrites {
  /** The sockets corked this turn, uncorked together at its end; undefined when none are. */
  private corked: Writable[] | undefined;
  private readonly release = (): void => {
    const corked = this.corked ?? [];
    this.corked = undefined;
    for (const socket of corked) socket.uncork();
  };

  constructor(private readonly cluster: Cluster) {}

  /** Holds the writes to every primary until the end of this turn (process.nextTick, after the calls of this turn are written). */
  hold(): void {
    if (this.corked !== undefined) return;
    const corked: Writable[] = [];
    for (const node of this.cluster.nodes('master')) {
      // `stream` is the connection's socket (public in ioredis' Redis class); absent while it is not connected.
      const socket = (node as { stream?: Writable }).stream;
      if (socket === undefined || socket.destroyed) continue;
      socket.cork();
      corked.push(socket);
    }
    this.corked = corked;
    process.nextTick(this.release);
  }
}

/** A TurnWrites for a Cluster client; undefined for one server (a turn sends it a call or two, not two dozen). */
export function turnWritesFor(client: unknown): TurnWrites | undefined {
  return (client as { isCluster?: unknown }).isCluster === true ? new TurnWrites(client as Cluster) : undefined;
}
