/**
 * tune/time-zone: wall-clock times read in an IANA zone through Intl, across
 * the changes of offset, and the zone names the runtime knows.
 */
import assert from 'node:assert/strict';
import { FileTimes, isZoneless, timeZoneName, ZoneOffsets } from '../../../src/tune/time-zone';

const wall = (text: string): number => Date.parse(`${text}Z`);

describe('tune/time-zone', function () {
  it('gives the instant a wall-clock time names, in summer and winter', function () {
    const berlin = new ZoneOffsets('Europe/Berlin');
    assert.equal(berlin.instantOf(wall('2014-10-01T08:31:00')), Date.parse('2014-10-01T06:31:00Z'));
    assert.equal(berlin.instantOf(wall('2014-12-01T08:31:00')), Date.parse('2014-12-01T07:31:00Z'));
    const york = new ZoneOffsets('America/New_York');
    assert.equal(york.instantOf(wall('2014-07-04T23:59:59')), Date.parse('2014-07-05T03:59:59Z'));
    assert.equal(new ZoneOffsets('Asia/Kolkata').instantOf(wall('2014-01-01T05:30:00')), Date.parse('2014-01-01T00:00:00Z'));
  });

  it('reads a skipped time as after the change, and a repeated one as the first of the two', function () {
    const berlin = new ZoneOffsets('Europe/Berlin');
    // 2015-03-29: 02:00 CET became 03:00 CEST; 02:30 does not exist.
    assert.equal(berlin.instantOf(wall('2015-03-29T01:59:00')), Date.parse('2015-03-29T00:59:00Z'));
    assert.equal(berlin.instantOf(wall('2015-03-29T02:30:00')), Date.parse('2015-03-29T01:30:00Z'));
    assert.equal(berlin.instantOf(wall('2015-03-29T03:00:00')), Date.parse('2015-03-29T01:00:00Z'));
    // 2014-10-26: 03:00 CEST became 02:00 CET; 02:30 happened twice.
    assert.equal(berlin.instantOf(wall('2014-10-26T02:30:00')), Date.parse('2014-10-26T00:30:00Z'));
    assert.equal(berlin.instantOf(wall('2014-10-26T03:00:00')), Date.parse('2014-10-26T02:00:00Z'));
    // Every minute of a year round-trips through the offsets (outside the repeated hour).
    const offsets = new ZoneOffsets('Australia/Lord_Howe');
    for (let t = Date.parse('2014-01-01T00:00:00Z'); t < Date.parse('2015-01-01T00:00:00Z'); t += 7 * 60_000) {
      const shown = t + offsets.offsetAt(t);
      const back = offsets.instantOf(shown);
      assert.ok(back === t || offsets.offsetAt(back) + back === shown, new Date(t).toISOString());
    }
  });

  it('knows the runtime\'s zone names, canonically, and no others', function () {
    assert.equal(timeZoneName('Europe/Berlin'), 'Europe/Berlin');
    assert.equal(timeZoneName('utc'), 'UTC');
    assert.equal(timeZoneName('Mars/Olympus_Mons'), undefined);
    assert.equal(timeZoneName(''), undefined);
  });

  it('changes only date-times without a zone, and counts them', function () {
    assert.deepEqual(['2014-10-01 08:31:00', '2014-10-01T08:31', '2014-10-01t08:31:00.5', ' 2014-10-01 08:31:00 '].map(isZoneless), [true, true, true, true]);
    assert.deepEqual(['2014-10-01T08:31:00Z', '2014-10-01T08:31:00+02:00', '2014-10-01 08:31:00-0500', '1412145180', '2014-10-01', 'soon'].map(isZoneless), [false, false, false, false, false, false]);
    const times = new FileTimes('Europe/Berlin');
    assert.deepEqual(times.read('2014-10-01 08:31:00'), new Date('2014-10-01T06:31:00Z'));
    for (const value of ['2014-10-01T08:31:00Z', 1412145180, '1412145180', 'soon', '2014-13-01 08:00:00', null]) assert.equal(times.read(value), value);
    assert.equal(times.zoneless, 1);
    assert.equal(new FileTimes().read('2014-10-01 08:31:00'), '2014-10-01 08:31:00', 'UTC: readPing reads it so already');
  });
});
