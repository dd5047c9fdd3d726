/**
 * The messages whose decision was lost (the store failed, the message went
 * to a Catch node): remembered by _msgid and content, handed back once to a
 * retry, bounded in age and in number.
 */
import assert from 'node:assert/strict';
import { fingerprintOf, LostDecisions } from '../../../src/node-red/lost-decisions';

describe('node-red/lost-decisions', () => {
  it('starts empty, hands a remembered value back once, and is empty again', () => {
    const lost = new LostDecisions<string>(60_000, () => 0);
    assert.equal(lost.empty, true);
    lost.remember('m1', 'ping of m1');
    assert.equal(lost.empty, false);
    assert.equal(lost.take('m1'), 'ping of m1');
    assert.equal(lost.take('m1'), undefined, 'a second retry is an ordinary message');
    assert.equal(lost.empty, true);
    assert.equal(lost.take('never'), undefined);
  });

  it('hands nothing back once maxAgeMs has passed, and forgets it', () => {
    let now = 0;
    const lost = new LostDecisions<number>(1000, () => now);
    lost.remember('a', 1);
    lost.remember('b', 2);
    now = 1000;
    assert.equal(lost.take('a'), 1, 'exactly at the age limit it still counts');
    now = 1001;
    assert.equal(lost.take('b'), undefined);
    assert.equal(lost.empty, true);
  });

  it('forgets entries past maxAgeMs when asked whether it is empty, so a message never retried is not carried for good', () => {
    let now = 0;
    const lost = new LostDecisions<number>(1000, () => now);
    lost.remember('a', 1);
    now = 500;
    lost.remember('b', 2);
    now = 1000;
    assert.equal(lost.empty, false, 'a is exactly at the age limit');
    now = 1001;
    assert.equal(lost.empty, false, 'a has gone, b is still young');
    assert.equal(lost.take('a'), undefined);
    now = 1501;
    assert.equal(lost.empty, true, 'b has gone too');
  });

  it('remembering again renews the age and the place', () => {
    let now = 0;
    const lost = new LostDecisions<number>(1000, () => now);
    lost.remember('a', 1);
    now = 900;
    lost.remember('a', 2);
    now = 1500;
    assert.equal(lost.take('a'), 2);
  });

  it('keeps at most 10,000, dropping the oldest first', () => {
    const lost = new LostDecisions<number>(60_000, () => 0);
    for (let i = 0; i <= 10_000; i++) lost.remember(`m${i}`, i);
    assert.equal(lost.take('m0'), undefined, 'the oldest went');
    assert.equal(lost.take('m1'), 1);
    assert.equal(lost.take('m10000'), 10_000);
  });

  it('fingerprints a message by its _msgid and content together, never by one alone', () => {
    assert.equal(fingerprintOf('abc', '{"x":1}'), fingerprintOf('abc', '{"x":1}'));
    assert.notEqual(fingerprintOf('abc', '{"x":1}'), fingerprintOf('abd', '{"x":1}'), 'a genuine duplicate (new _msgid) stays a duplicate');
    assert.notEqual(fingerprintOf('abc', '{"x":1}'), fingerprintOf('abc', '{"x":2}'), 'a changed message is not the retried one');
    assert.notEqual(fingerprintOf('a', 'bc'), fingerprintOf('ab', 'c'), 'the parts cannot slide into each other');
  });
});
