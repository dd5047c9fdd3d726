import assert from 'node:assert/strict';
import { pythonFloatRepr, pythonJsonString } from '../../../../src/core/parse/python-json';
import { pythonJsonDumps } from '../../../support/python-json-dumps';

/*
 * Every expected string below was printed once by CPython 3.11:
 *   python3 -c 'import json; print(json.dumps(v))'
 * (with sort_keys=True, separators=(",", ":") for the objects), and pasted
 * here. Python is not run at test time.
 */
const FLOATS: [number, string][] = [
  [0.0, '0.0'],
  [-0.0, '-0.0'],
  [1.0, '1.0'],
  [71.0, '71.0'],
  [62.5, '62.5'],
  [15.0, '15.0'],
  [-62.5, '-62.5'],
  [0.1, '0.1'],
  [0.2 + 0.1, '0.30000000000000004'],
  [1 / 3, '0.3333333333333333'],
  [2 / 3, '0.6666666666666666'],
  [100.0, '100.0'],
  [99.99, '99.99'],
  [4.35, '4.35'],
  [100.00000000000001, '100.00000000000001'],
  [3.14159265358979, '3.14159265358979'],
  [123456789.123, '123456789.123'],
  // The switch to exponent form: below 1e-4 and from 1e16 up.
  [1e-4, '0.0001'],
  [0.00012345, '0.00012345'],
  [1e-5, '1e-05'],
  [-1e-5, '-1e-05'],
  [1.5e-7, '1.5e-07'],
  [1e-7, '1e-07'],
  [1e15, '1000000000000000.0'],
  [9999999999999998.0, '9999999999999998.0'],
  [1e16, '1e+16'],
  [1.2345e16, '1.2345e+16'],
  [12345678901234567890.0, '1.2345678901234567e+19'],
  [1e21, '1e+21'],
  [1e22, '1e+22'],
  [1.7976931348623157e308, '1.7976931348623157e+308'],
  [2.2250738585072014e-308, '2.2250738585072014e-308'],
  [5e-324, '5e-324'],
];

describe('core/parse/python-json pythonFloatRepr', () => {
  it('writes floats as Python json.dumps does', () => {
    for (const [value, python] of FLOATS) assert.equal(pythonFloatRepr(value), python, `${value}`);
  });

  it('writes the non-finite values as Python json.dumps does (allow_nan default)', () => {
    // json.dumps([float('inf'), float('-inf'), float('nan')]) == '[Infinity, -Infinity, NaN]'
    assert.equal(pythonFloatRepr(Infinity), 'Infinity');
    assert.equal(pythonFloatRepr(-Infinity), '-Infinity');
    assert.equal(pythonFloatRepr(Number.NaN), 'NaN');
  });

  it('always round-trips to the same double', () => {
    for (const [value] of FLOATS) assert.equal(Number(pythonFloatRepr(value)), value);
  });
});

describe('core/parse/python-json: the parts together, as json.dumps (the oracle in test/support)', () => {
  it('sorts keys, drops spaces, escapes non-ASCII (ensure_ascii)', () => {
    const value = { 'é': 1.0, z: 'ü\n"\\\u0001\u007f😀', A: [true, null], b: { y: 2.5, x: -0.0 } };
    assert.equal(
      pythonJsonDumps(value),
      '{"A":[true,null],"b":{"x":-0.0,"y":2.5},"z":"\\u00fc\\n\\"\\\\\\u0001\\u007f\\ud83d\\ude00","\\u00e9":1.0}',
    );
  });

  it('sorts keys by code point, not by UTF-16 unit', () => {
    // U+1F600 sorts after U+FFFF in Python; JavaScript's default sort puts its
    // high surrogate (U+D83D) before U+FF21.
    const value = { [String.fromCodePoint(0x1f600)]: 1.0, '\uffff': 2.0, a: 3.0, '\uff21': 4.0 };
    assert.equal(pythonJsonDumps(value), '{"a":3.0,"\\uff21":4.0,"\\uffff":2.0,"\\ud83d\\ude00":1.0}');
  });

  it('sorts upper case, underscore and lower case in ASCII order', () => {
    assert.equal(
      pythonJsonDumps({ ts: 'x', fill_pct: 1.0, Temp: 2.0, _a: 3.0 }),
      '{"Temp":2.0,"_a":3.0,"fill_pct":1.0,"ts":"x"}',
    );
  });

  it('writes the canonical content of the first design vector', () => {
    assert.equal(
      pythonJsonDumps({ ts: '2026-07-16T09:00:00+00:00', fill_pct: 71 }),
      '{"fill_pct":71.0,"ts":"2026-07-16T09:00:00+00:00"}',
    );
  });

  it('writes empty containers and nesting', () => {
    assert.equal(pythonJsonDumps({}), '{}');
    assert.equal(pythonJsonDumps([]), '[]');
    assert.equal(pythonJsonDumps([[1], { a: [] }]), '[[1.0],{"a":[]}]');
    assert.equal(pythonJsonDumps(false), 'false');
    assert.equal(pythonJsonDumps(null), 'null');
  });
});

describe('core/parse/python-json pythonJsonString', () => {
  it('uses the short escapes Python uses and \\u00XX for the other control characters', () => {
    assert.equal(pythonJsonString('\b\f\n\r\t'), '"\\b\\f\\n\\r\\t"');
    assert.equal(pythonJsonString('\u0000\u001f'), '"\\u0000\\u001f"');
    assert.equal(pythonJsonString('plain ~ text'), '"plain ~ text"');
    assert.equal(pythonJsonString('/'), '"/"');
  });
});
