#!/usr/bin/env node
// The `hypergate` command (package.json "bin"): the compiled gateway, dist/main.js, runnable from
// any working directory. Source maps are switched on before it loads, so stack traces in logs name
// src/*.ts lines, as `npm start`'s --enable-source-maps does (a shebang cannot portably pass flags).
process.setSourceMapsEnabled(true);
await import('../dist/main.js');
