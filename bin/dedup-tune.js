#!/usr/bin/env node
/*
 * dedup-tune: the sliding-window what-if for a recorded file of pings.
 * The command itself is src/tune/cli.ts, compiled to nodes/tune/cli.js.
 */
"use strict";
const { main } = require("../nodes/tune/cli.js");

main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (error) => {
        process.stderr.write("dedup-tune: " + ((error && error.stack) || String(error)) + "\n");
        process.exitCode = 1;
    }
);
