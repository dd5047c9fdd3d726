/**
 * The words servers use for "no scripting here" and for NOSCRIPT, as
 * src/redis/scripting recognises them. The real servers' answers are
 * checked in test/faults/no-scripting.spec.ts; these are the wordings a
 * redis-server on this machine cannot give (Redis 6, Valkey 8, ACL users).
 */
import assert from 'node:assert/strict';
import { scriptingRefusal } from '../../../src/redis/scripting';

describe('redis/scripting: what a server says', function () {
  it('never takes NOSCRIPT, in any wording, for a server without scripting (ioredis resends the script on it)', function () {
    // Redis 7, Valkey 8, and servers that put ERR first: ioredis' defineCommand resends on any reply containing NOSCRIPT.
    for (const text of ['NOSCRIPT No matching script. Please use EVAL.', 'NOSCRIPT No matching script.', 'ERR NOSCRIPT No matching script. Please use EVAL']) {
      assert.equal(scriptingRefusal(new Error(text)), undefined, text);
    }
  });

  it('names a server that refuses EVALSHA, EVAL or SCRIPT, without the call\'s arguments', function () {
    const cases: [string, string][] = [
      ["ERR unknown command 'evalsha', with args beginning with: 'ffff' '0' ", "ERR unknown command 'evalsha'"],
      ['ERR unknown command `eval`, with args beginning with: `return 1`, `0`, ', 'ERR unknown command `eval`'],
      ["ERR unknown command 'script', with args beginning with: 'load' 'local REASON, ADMITS = { first = 2 }\n(...)'", "ERR unknown command 'script'"],
      ["ERR unknown command 'EVALSHA', with args beginning with: ", "ERR unknown command 'EVALSHA'"],
      ["NOPERM this user has no permissions to run the 'eval' command", "NOPERM this user has no permissions to run the 'eval' command"],
      ["NOPERM User dedup has no permissions to run the 'script|load' command", "NOPERM User dedup has no permissions to run the 'script|load' command"],
    ];
    for (const [text, answer] of cases) assert.equal(scriptingRefusal(new Error(text)), answer, text);
  });

  it('leaves every other failure alone', function () {
    for (const text of [
      "ERR unknown command 'evalsha_ro'",
      "NOPERM No permissions to access a key",
      "ERR Error running script (call to f_1): @user_script:1: Script attempted to access a non local key",
      'Connection is closed.',
      'BUSY Redis is busy running a script.',
    ]) {
      assert.equal(scriptingRefusal(new Error(text)), undefined, text);
    }
    assert.equal(scriptingRefusal('ERR unknown command \'eval\''), undefined, 'not an Error');
  });
});
