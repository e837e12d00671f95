import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** An API key file (auth.apiKeys.file) in a folder of its own: written, rewritten, removed. */
export interface KeyFile {
  readonly path: string;
  /** Writes `{"consumers": consumers}` over it. */
  write(consumers: Record<string, unknown>): Promise<void>;
  remove(): Promise<void>;
}

export async function keyFile(consumers: Record<string, unknown>): Promise<KeyFile> {
  const dir = await mkdtemp(join(tmpdir(), 'hg-api-keys-'));
  const path = join(dir, 'api-keys.json');
  const write = (next: Record<string, unknown>): Promise<void> => writeFile(path, JSON.stringify({ consumers: next }));
  await write(consumers);
  return { path, write, remove: () => rm(dir, { recursive: true, force: true }) };
}
