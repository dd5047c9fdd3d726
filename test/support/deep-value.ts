/**
 * A deeply nested value for the fuzz tests, built only when a message is
 * sent: fast-check prints a counterexample recursively, and would overflow
 * its own stack on the real thing.
 */
import fc from 'fast-check';

export class Deep {
  constructor(readonly depth: number) {}

  build(): unknown {
    let value: unknown = 'bottom';
    for (let i = 0; i < this.depth; i++) value = i % 3 === 0 ? [value] : { a: value };
    return value;
  }

  [fc.toStringMethod](): string {
    return `<${this.depth} levels deep>`;
  }
}
