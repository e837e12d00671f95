/**
 * The sample customer service's data: computed from the id, so any number of customers costs no
 * memory and every run serves the same records.
 */
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Tim', 'Frances', 'John', 'Hedy', 'Dennis', 'Katherine', 'Linus'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Berners-Lee', 'Allen', 'McCarthy', 'Lamarr', 'Ritchie', 'Johnson', 'Torvalds'];
const STATUSES = ['active', 'active', 'active', 'inactive', 'suspended', 'pending'];
const TIERS = ['free', 'standard', 'premium'];

/** A small integer hash (xorshift-multiply), so neighbouring ids do not look alike. */
function mix(n: number): number {
  let x = (n ^ 0x9e3779b9) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

function pick<T>(list: readonly T[], n: number): T {
  return list[n % list.length] as T;
}

export interface SampleCustomer {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly email: string;
  readonly tier: string;
  readonly createdAt: string;
}

export function sampleCustomer(id: number): SampleCustomer {
  const h = mix(id);
  const first = pick(FIRST, h);
  const last = pick(LAST, h >>> 8);
  const created = Date.UTC(2015, 0, 1) + (h % 3650) * 86_400_000;
  return {
    id,
    name: `${first} ${last}`,
    status: pick(STATUSES, h >>> 16),
    email: `${first}.${last}.${id}@example.com`.toLowerCase(),
    tier: pick(TIERS, h >>> 4),
    createdAt: new Date(created).toISOString(),
  };
}
