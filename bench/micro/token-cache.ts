import { createHash, hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { recentSlot } from '../../src/auth/verifier.ts';
import { interleaved, type Comparison } from './timing.ts';

const N = 10_000;

/**
 * Token-cache lookup: keyed by the token's SHA-256 (crypto.hash, hypergate now), by its last 16
 * characters plus a full comparison (hypergate until 2026-11-24: exact only with the whole token
 * kept), by the raw token; and hypergate's recent-token table (the slot's token compared whole).
 */
export function tokenCache(ms: number): Comparison {
  const tokens = Array.from({ length: N }, (_, i) => `eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLSR7aX0ifQ.${'s'.repeat(80)}${i}`);
  const raw = new LRUCache<string, object>({ max: 100_000 });
  const digested = new LRUCache<string, object>({ max: 100_000 });
  const hashed = new LRUCache<string, object>({ max: 100_000 });
  const tail = new LRUCache<string, { token: string }>({ max: 100_000 });
  const digest = (t: string): string => hash('sha256', t, 'binary');
  const sha = (t: string): string => createHash('sha256').update(t).digest('base64url');
  for (const t of tokens) {
    raw.set(t, { t });
    digested.set(digest(t), { t });
    hashed.set(sha(t), { t });
    tail.set(t.slice(-16), { token: t });
  }
  const byTail = (t: string): object | undefined => {
    const entry = tail.get(t.slice(-16));
    return entry !== undefined && entry.token === t ? entry : undefined;
  };
  // A token as readBearerToken hands it over: header.slice(7), a new string object per request
  // whose hash V8 has not computed yet, as with a real request.
  const headers = tokens.map((t) => `Bearer ${t}`);
  const wire = (i: number): string => (headers[i % N] as string).slice(7);
  // The recent-token table: every token in its slot (as another string object with the same characters).
  const recent = new Array<{ token: string; principal: object } | undefined>(65536);
  for (let i = 0; i < N; i++) recent[recentSlot(tokens[i] as string)] = { token: wire(i), principal: {} };
  const fromRecent = (t: string): object | undefined => {
    const held = recent[recentSlot(t)];
    return held !== undefined && held.token === t ? held.principal : undefined;
  };
  return {
    title: 'Token-cache lookup (10,000 tokens cached)',
    choice:
      'hypergate: the verified-token LRU is keyed by sha256(token) via crypto.hash (src/auth/verifier.ts), so it keeps no token (~310 bytes less an entry); a token in the recent-token table (65,536 slots, 4 MiB) is found by one comparison, without the digest.',
    rows: interleaved(
      [
        ['recent-token table: slot + one comparison (hypergate)', (i) => fromRecent(wire(i))],
        ['LRU get by crypto.hash sha256 (hypergate, a token not in the recent-token table)', (i) => digested.get(digest(wire(i)))],
        ['LRU get by the last 16 characters + full comparison (keeps the whole token)', (i) => byTail(wire(i))],
        ['LRU get by createHash sha256 base64url', (i) => hashed.get(sha(wire(i)))],
        ['LRU get by raw token', (i) => raw.get(wire(i))],
        ['header.slice(7) alone (paid by every row)', (i) => wire(i)],
      ],
      ms,
    ),
  };
}
