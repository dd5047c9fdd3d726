/**
 * The fingerprint a window record keeps of a ping's watched event
 * properties: the same values give the same 48 bits whatever order their
 * keys came in; any change, a property appearing or disappearing included,
 * gives different bits.
 */
import assert from 'node:assert/strict';
import { eventFingerprint } from '../../../../src/core/window/event-fingerprint';
import { textOf } from '../../../../src/core/parse/fields';

describe('core/window/event-fingerprint eventFingerprint', () => {
  it('is a whole number of at most 48 bits, never 0 (0 means nothing is watched)', () => {
    for (const values of [[], [null], [undefined], [true], ['on', 3], [{ a: 1 }]]) {
      const fingerprint = eventFingerprint(values);
      assert.ok(Number.isSafeInteger(fingerprint) && fingerprint > 0 && fingerprint < 2 ** 48, `${JSON.stringify(values)}: ${fingerprint}`);
    }
  });

  it('is the same for the same values, whatever order an object’s keys are in', () => {
    assert.equal(eventFingerprint([true, 'alarm']), eventFingerprint([true, 'alarm']));
    assert.equal(eventFingerprint([{ a: 1, b: { c: 2, d: 3 } }]), eventFingerprint([{ b: { d: 3, c: 2 }, a: 1 }]));
  });

  it('changes when a value changes, or the values trade places', () => {
    const base = eventFingerprint([true, 'idle']);
    assert.notEqual(eventFingerprint([false, 'idle']), base);
    assert.notEqual(eventFingerprint([true, 'alarm']), base);
    assert.notEqual(eventFingerprint(['idle', true]), base);
    assert.notEqual(eventFingerprint([1]), eventFingerprint(['1']), 'a number is not its text');
    assert.notEqual(eventFingerprint([[1, 2]]), eventFingerprint([[2, 1]]), 'array order counts');
  });

  it('tells a property that is absent from one that is null, so appearing and disappearing are changes', () => {
    const absent = eventFingerprint([undefined]);
    const nullValue = eventFingerprint([null]);
    const present = eventFingerprint([false]);
    assert.notEqual(absent, nullValue);
    assert.notEqual(absent, present);
    assert.notEqual(nullValue, present);
    assert.notEqual(eventFingerprint([{ a: 1 }]), eventFingerprint([{ a: 1, b: undefined }]), 'a nested key appearing');
  });

  it('does not mix up neighbouring values when they are joined', () => {
    assert.notEqual(eventFingerprint(['a,b']), eventFingerprint(['a', 'b']));
    assert.notEqual(eventFingerprint([['a', 'b']]), eventFingerprint(['a', 'b']));
  });

  it('reads what JSON cannot (NaN, Infinity, bigint, Dates, Buffers, cycles) without throwing', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const odd = [Number.NaN, Infinity, -Infinity, 10n, new Date(0), new Date(Number.NaN), Buffer.from('hi'), cyclic, () => 1, Symbol('s')];
    for (const value of odd) assert.doesNotThrow(() => eventFingerprint([value]), textOf(value));
    assert.notEqual(eventFingerprint([Number.NaN]), eventFingerprint([Infinity]));
    assert.notEqual(eventFingerprint([new Date(0)]), eventFingerprint([new Date(1)]));
    assert.notEqual(eventFingerprint([Buffer.from('a')]), eventFingerprint([Buffer.from('b')]));
    assert.equal(eventFingerprint([{ ...cyclic }]), eventFingerprint([{ ...cyclic }]));
  });

  it('spreads different values over different fingerprints', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(eventFingerprint([i, i % 2 === 0]));
    assert.equal(seen.size, 2000);
  });
});
