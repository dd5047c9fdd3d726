import assert from 'node:assert/strict';
import {
  describeType,
  MAX_ID_LENGTH,
  readId,
  readNumber,
  readNumberInRange,
  readSequence,
  showValue,
  textOf,
  type FieldResult,
} from '../../../../src/core/parse/fields';

function value<T>(result: FieldResult<T>): T {
  assert.ok(result.ok, result.ok ? '' : `unexpected problem: ${result.problem}`);
  return result.value;
}

function problem<T>(result: FieldResult<T>): string {
  assert.equal(result.ok, false, `expected a problem, got ${JSON.stringify(result)}`);
  return result.ok ? '' : result.problem;
}

describe('core/parse/fields', () => {
  it('readId takes strings and finite numbers, refuses the rest', () => {
    assert.equal(value(readId('veh-1')), 'veh-1');
    assert.equal(value(readId(42)), '42');
    assert.equal(value(readId('x'.repeat(MAX_ID_LENGTH))).length, MAX_ID_LENGTH);
    assert.match(problem(readId('')), /empty/);
    assert.match(problem(readId('x'.repeat(MAX_ID_LENGTH + 1))), /513 characters/);
    assert.match(problem(readId(undefined)), /must be a non-empty string, not undefined$/);
    assert.match(problem(readId(null)), /not null/);
    assert.match(problem(readId({ id: 1 })), /an object/);
    problem(readId(Number.NaN));
  });

  it('readNumber takes numbers and decimal strings, refuses the rest', () => {
    assert.equal(value(readNumber(62.5)), 62.5);
    assert.equal(value(readNumber(' -13.5 ')), -13.5);
    assert.equal(value(readNumber('1e3')), 1000);
    assert.equal(value(readNumber('.5')), 0.5);
    assert.equal(value(readNumber('5.')), 5);
    for (const bad of ['', ' ', '0x10', '12abc', '1,5', 'NaN', 'Infinity', true, null, [1], {}]) {
      problem(readNumber(bad));
    }
    // Strings are read, so a string that holds no number is called what it is, not a wrong type.
    assert.equal(value(readNumber('52.52')), 52.52);
    for (const bad of ['52,52', '', 'full', '0x10']) assert.equal(problem(readNumber(bad)), 'is not a number', bad);
    assert.equal(problem(readNumber(true)), 'must be a number, not a boolean');
    assert.match(problem(readNumber(Infinity)), /finite/);
    assert.match(problem(readNumber('1e999')), /finite/);
  });

  it('readNumberInRange includes both ends', () => {
    assert.equal(value(readNumberInRange(0, 0, 100)), 0);
    assert.equal(value(readNumberInRange('100', 0, 100)), 100);
    assert.match(problem(readNumberInRange(100.0001, 0, 100)), /between 0 and 100/);
    assert.match(problem(readNumberInRange(-0.1, 0, 100)), /between 0 and 100/);
    assert.match(problem(readNumberInRange('abc', 0, 100)), /number/);
  });

  it('readSequence takes whole numbers from 0 up to the safe-integer limit', () => {
    assert.equal(value(readSequence(0)), 0);
    assert.equal(value(readSequence('41')), 41);
    assert.equal(value(readSequence(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
    for (const bad of [-1, 1.5, 2 ** 53, '4.2']) assert.match(problem(readSequence(bad)), /whole number/);
  });

  it('showValue renders short, printable text for error messages', () => {
    assert.equal(showValue('abc'), '"abc"');
    assert.equal(showValue(12.5), '12.5');
    assert.equal(showValue(undefined), 'undefined');
    assert.equal(showValue(null), 'null');
    assert.equal(showValue(new Date(5)), 'Date(5)');
    assert.equal(showValue({ a: [1] }), '{"a":[1]}');
    const long = showValue('y'.repeat(200));
    assert.equal(long.length, 80);
    assert.ok(long.endsWith('...'));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(showValue(cyclic), 'an object');
    assert.equal(showValue(() => 1), 'function');
  });

  it('textOf gives a string as it is, other primitives as String() does, and objects as JSON, never [object Object]', () => {
    assert.equal(textOf(' 12 '), ' 12 ');
    assert.equal(textOf(12.5), '12.5');
    assert.equal(textOf(true), 'true');
    assert.equal(textOf(10n), '10');
    assert.equal(textOf(null), 'null');
    assert.equal(textOf(undefined), 'undefined');
    assert.equal(textOf({ a: 1 }), '{"a":1}');
    assert.equal(textOf([1, 'b']), '[1,"b"]');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(textOf(cyclic), 'an object');
  });

  it('describeType names arrays, null and objects', () => {
    assert.equal(describeType([]), 'an array');
    assert.equal(describeType(null), 'null');
    assert.equal(describeType({}), 'an object');
    assert.equal(describeType('s'), 'a string');
  });
});
