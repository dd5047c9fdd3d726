import { strict as assert } from 'assert';
import { RuleColumns } from '../../../../src/core/window/rule-columns';
import type { WindowBaseline } from '../../../../src/core/window/sliding-window';

describe('RuleColumns', () => {
  const blank = (): WindowBaseline => ({ t: -1, lat: -1, lon: -1, heading: -1, accuracy: -1, events: -1, value: -1 });

  it('reads back what was written, a missing heading or value as NaN and a missing accuracy or fingerprint as 0', () => {
    const columns = new RuleColumns(2);
    columns.write(0, { t: 1_700_000_000_000.5, lat: 51.5, lon: -0.12, heading: 359, accuracy: 4.5, events: 2 ** 47, value: 0.1 + 0.2 });
    columns.write(1, { assetId: 'v1', t: 5, lat: 1, lon: 2 });
    assert.deepEqual(columns.read(0, blank()), { t: 1_700_000_000_000.5, lat: 51.5, lon: -0.12, heading: 359, accuracy: 4.5, events: 2 ** 47, value: 0.1 + 0.2 });
    assert.deepEqual(columns.read(1, blank()), { t: 5, lat: 1, lon: 2, heading: NaN, accuracy: 0, events: 0, value: NaN });
  });

  it('keeps every slot that fits when resized, in every column', () => {
    const columns = new RuleColumns(1);
    columns.write(0, { t: 1, lat: 2, lon: 3, heading: 4, accuracy: 5, events: 6, value: 8 });
    columns.resize(8);
    assert.equal(columns.capacity, 8);
    columns.write(7, { t: 7, lat: 7, lon: 7, heading: 7, accuracy: 7, events: 7, value: 7 });
    assert.deepEqual(columns.read(0, blank()), { t: 1, lat: 2, lon: 3, heading: 4, accuracy: 5, events: 6, value: 8 });
    assert.deepEqual(columns.read(7, blank()), { t: 7, lat: 7, lon: 7, heading: 7, accuracy: 7, events: 7, value: 7 });
    columns.resize(1);
    assert.deepEqual(columns.read(0, blank()), { t: 1, lat: 2, lon: 3, heading: 4, accuracy: 5, events: 6, value: 8 });
  });

  it('holds no value column until a value is written: a position-mode store pays nothing for it', () => {
    const columns = new RuleColumns(4);
    columns.write(0, { assetId: 'v', t: 1, lat: 2, lon: 3 });
    columns.resize(8);
    assert.equal(columns.value.length, 0);
    assert.ok(Number.isNaN(columns.read(0, blank()).value));
    columns.write(5, { assetId: 'bin', t: 1, lat: 0, lon: 0, value: 40 });
    assert.equal(columns.value.length, 8);
    assert.equal(columns.read(5, blank()).value, 40);
    assert.ok(Number.isNaN(columns.read(0, blank()).value), 'the slots before still read as none');
    columns.resize(16);
    assert.ok(Number.isNaN(columns.read(12, blank()).value), 'and so do new ones');
  });
});
