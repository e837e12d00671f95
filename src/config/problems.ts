/** Where values came from when not from a config file: key path → the environment variable that set it. */
export type ValueOrigins = ReadonlyMap<string, string>;

/** The problems found so far, each naming its key, and the environment variable when one set it. */
export class Problems {
  readonly list: string[] = [];
  readonly #origins: ValueOrigins;

  constructor(origins: ValueOrigins) {
    this.#origins = origins;
  }

  /** A key as a problem names it: `server.port`, or `HYPERGATE_SERVER_PORT (server.port)`. */
  name(path: string): string {
    const variable = this.#origins.get(path);
    return variable === undefined ? path : `${variable} (${path})`;
  }

  add(path: string, message: string): void {
    this.list.push(`${this.name(path)}: ${message}`);
  }
}
