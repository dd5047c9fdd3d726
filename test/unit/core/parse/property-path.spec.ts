/**
 * Property paths inside a reading, in Node-RED's syntax: parsed once, read
 * without throwing, through own properties only.
 */
import assert from 'node:assert/strict';
import { lastName, locate, parsePath, readPath } from '../../../../src/core/parse/property-path';

const parts = (text: string): readonly (string | number)[] => parsePath(text).parts;

describe('core/parse/property-path', () => {
  describe('parsePath', () => {
    it('reads names, nested names and array indexes', () => {
      assert.deepEqual(parts('fill_pct'), ['fill_pct']);
      assert.deepEqual(parts('uplink_message.decoded_payload.fill_pct'), ['uplink_message', 'decoded_payload', 'fill_pct']);
      assert.deepEqual(parts('rx[0].rssi'), ['rx', 0, 'rssi']);
      assert.deepEqual(parts('a[1][2]'), ['a', 1, 2]);
      assert.deepEqual(parts('a.0.b'), ['a', 0, 'b'], 'digits alone are an index, as in Node-RED');
      assert.deepEqual(parts('$weird-name_1'), ['$weird-name_1']);
    });

    it('reads quoted names, in either quote, with dots, spaces, brackets and escaped quotes', () => {
      assert.deepEqual(parts('meta["battery level"]'), ['meta', 'battery level']);
      assert.deepEqual(parts("meta['a.b']"), ['meta', 'a.b']);
      assert.deepEqual(parts('meta["x[0]"].y'), ['meta', 'x[0]', 'y']);
      assert.deepEqual(parts('meta["say \\"hi\\""]'), ['meta', 'say "hi"']);
      assert.deepEqual(parts('["0"]'), ['0'], 'a quoted number is a name');
      assert.deepEqual(parts('[3]'), [3]);
    });

    it('trims the text and keeps it for messages', () => {
      const path = parsePath('  rx[0].rssi ');
      assert.equal(path.text, 'rx[0].rssi');
    });

    it('refuses a bad path with where it went wrong', () => {
      const cases: [string, RegExp][] = [
        ['', /must not be empty/],
        ['   ', /must not be empty/],
        ['a.', /ends in a dot/],
        ['.a', /an empty name at character 1/],
        ['a..b', /an empty name at character 3/],
        ['a[', /not a number or a quoted name/],
        ['a[x]', /not a number or a quoted name/],
        ['a[-1]', /not a number or a quoted name/],
        ['a[0', /a missing \]/],
        ['a["b"', /a missing \]/],
        ['a["b', /an unclosed quote/],
        ['a[0]b', /a name that does not follow a dot/],
        ['a b', /a name that does not follow a dot/],
        ['a."b"', /an unexpected "\\""/],
      ];
      for (const [text, problem] of cases) {
        assert.throws(() => parsePath(text), (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, problem, `${JSON.stringify(text)}: ${error.message}`);
          return true;
        }, text);
      }
    });
  });

  describe('readPath', () => {
    const reading = {
      uplink_message: { decoded_payload: { fill_pct: 62.5, zero: 0, nothing: null } },
      rx: [{ rssi: -97 }, { rssi: -101 }],
      meta: { 'battery level': 3.1 },
    };

    it('reads nested names, array indexes and quoted names', () => {
      assert.equal(readPath(reading, parsePath('uplink_message.decoded_payload.fill_pct')), 62.5);
      assert.equal(readPath(reading, parsePath('rx[1].rssi')), -101);
      assert.equal(readPath(reading, parsePath('rx.0.rssi')), -97);
      assert.equal(readPath(reading, parsePath('meta["battery level"]')), 3.1);
      assert.deepEqual(readPath(reading, parsePath('rx')), reading.rx);
    });

    it('gives falsy values as they are, and undefined for any missing step, without throwing', () => {
      assert.equal(readPath(reading, parsePath('uplink_message.decoded_payload.zero')), 0);
      assert.equal(readPath(reading, parsePath('uplink_message.decoded_payload.nothing')), null);
      assert.equal(readPath(reading, parsePath('uplink_message.decoded_payload.nothing.deeper')), undefined);
      assert.equal(readPath(reading, parsePath('rx[5].rssi')), undefined);
      assert.equal(readPath(reading, parsePath('missing.x.y')), undefined);
      assert.equal(readPath(42, parsePath('a')), undefined);
      assert.equal(readPath(null, parsePath('a')), undefined);
      assert.equal(readPath('text', parsePath('length')), undefined, 'a string is not followed into');
    });

    it('follows own properties only: nothing through the prototype', () => {
      assert.equal(readPath({}, parsePath('constructor')), undefined);
      assert.equal(readPath({}, parsePath('__proto__')), undefined);
      assert.equal(readPath({}, parsePath('toString')), undefined);
      assert.equal(readPath({ a: {} }, parsePath('a.constructor.name')), undefined);
      assert.equal(readPath([1, 2], parsePath('length')), 2, 'an array’s own length is a property');
      const inherited = Object.create({ fill_pct: 50 }) as Record<string, unknown>;
      assert.equal(readPath(inherited, parsePath('fill_pct')), undefined);
      // A field really called __proto__ (JSON.parse makes one) is read.
      assert.deepEqual(readPath(JSON.parse('{"__proto__": {"x": 1}}'), parsePath('__proto__.x')), 1);
    });
  });

  describe('lastName and locate', () => {
    it('names a measured value by the path’s last part', () => {
      assert.equal(lastName(parsePath('uplink_message.decoded_payload.fill_pct')), 'fill_pct');
      assert.equal(lastName(parsePath('meta["battery level"]')), 'battery level');
      assert.equal(lastName(parsePath('rx[0]')), '0');
    });

    it('writes where a value sits as a message path', () => {
      assert.equal(locate('msg.payload[2]', parsePath('uplink_message.f_cnt')), 'msg.payload[2].uplink_message.f_cnt');
      assert.equal(locate('msg.payload', parsePath('rx[0].rssi')), 'msg.payload.rx[0].rssi');
      assert.equal(locate('msg.payload', parsePath('meta["battery level"]')), 'msg.payload.meta["battery level"]');
      assert.equal(locate('msg.payload', null), 'msg.payload');
    });
  });
});
