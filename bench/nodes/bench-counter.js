'use strict';
/**
 * The end of every benchmark flow: counts what arrives and hands each
 * message to the harness (bench/worker.ts), which stops the clock on the
 * last one. Deliberately the cheapest node possible, so that it dilutes the
 * differences between the nodes under test as little as it can.
 */
module.exports = function registerBenchCounter(RED) {
  function BenchCounterNode(config) {
    RED.nodes.createNode(this, config);
    const sink = this.context().global.get('bench');
    this.on('input', (msg, _send, done) => {
      sink.arrived(msg);
      done();
    });
  }
  RED.nodes.registerType('bench-counter', BenchCounterNode);
};
