/** A tiny flag parser: `--name value` and `--flag`; unknown flags are an error, not a guess. */
export function parseArgs(argv: readonly string[], valued: readonly string[], flags: readonly string[]): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new Error(`${name} needs a value`);
      out.set(name, value);
    } else if (flags.includes(name) && eq === -1) {
      out.set(name, true);
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)} (known: ${[...valued, ...flags].join(', ')})`);
    }
  }
  return out;
}
