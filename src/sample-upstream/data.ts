/**
 * The sample customer service's data: computed from the id, so any number of customers costs no
 * memory and every run serves the same records.
 */
const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Edsger',
  'Barbara',
  'Donald',
  'Margaret',
  'Ken',
  'Radia',
  'Tim',
  'Frances',
  'John',
  'Hedy',
  'Dennis',
  'Katherine',
  'Linus',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Berners-Lee',
  'Allen',
  'McCarthy',
  'Lamarr',
  'Ritchie',
  'Johnson',
  'Torvalds',
];
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

export interface SampleOrder {
  readonly id: number;
  readonly customerId: number;
  readonly status: string;
  readonly placedAt: string;
  readonly total: number;
  readonly currency: string;
  /** Internal: never exposed unless an operator lists it. */
  readonly warehouse: string;
}

const ORDER_STATUSES = ['placed', 'paid', 'shipped', 'delivered', 'delivered', 'cancelled'];
/** Order ids are customerId * ORDERS_PER_CUSTOMER_SPACE + 1.., so they never collide between customers. */
const ORDERS_PER_CUSTOMER_SPACE = 100;

/** 0 to 4 orders per customer, computed from the id. */
export function sampleOrderCount(customerId: number): number {
  return mix(customerId * 7 + 3) % 5;
}

export function sampleOrderIds(customerId: number): number[] {
  const ids: number[] = [];
  for (let k = 1; k <= sampleOrderCount(customerId); k++) ids.push(customerId * ORDERS_PER_CUSTOMER_SPACE + k);
  return ids;
}

/** The order, or null when this customer has no order with this id. */
export function sampleOrder(customerId: number, orderId: number): SampleOrder | null {
  const k = orderId - customerId * ORDERS_PER_CUSTOMER_SPACE;
  if (k < 1 || k > sampleOrderCount(customerId)) return null;
  const h = mix(orderId);
  const placed = Date.UTC(2020, 0, 1) + (h % 1800) * 86_400_000;
  return {
    id: orderId,
    customerId,
    status: pick(ORDER_STATUSES, h >>> 8),
    placedAt: new Date(placed).toISOString(),
    total: ((h >>> 4) % 100_000) / 100,
    currency: 'EUR',
    warehouse: `wh-${h % 7}`,
  };
}
