#!/usr/bin/env node
// The `hypergate` command (package.json "bin"): the compiled gateway, dist/main.js, runnable from
// any working directory. A shebang cannot portably pass Node flags, so what `npm start` passes is
// set here where it can be, before the gateway loads: source maps (stack traces in logs name
// src/*.ts lines), and V8's old generation growing by 30% between collections, which V8 reads at
// every collection (measured the same as the flag: bench/RESULTS.md, 2026-11-24 evening). The young
// generation's size is fixed when V8 starts: NODE_OPTIONS=--max-semi-space-size=8 gives it
// (docs/operations.md, "Starting in production").
import { setFlagsFromString } from 'node:v8';

process.setSourceMapsEnabled(true);
setFlagsFromString('--heap-growing-percent=30');
await import('../dist/main.js');
