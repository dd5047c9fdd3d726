'use strict';
/**
 * A two-output node that decides nothing: every message leaves on output 1.
 * Benchmarked as the floor under the dedup nodes, which also have two
 * outputs: Node-RED routes a two-output send by a slower path than the
 * single-output send of the core filter node.
 */
module.exports = function registerBenchPassthrough(RED) {
  function BenchPassthroughNode(config) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      send([msg, null]);
      done();
    });
  }
  RED.nodes.registerType('bench-passthrough', BenchPassthroughNode);
};
