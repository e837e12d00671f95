import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { bearer, get } from '../helpers/gateway.ts';
import { startSampleUpstream, type SampleUpstream } from '../../src/sample-upstream/server.ts';

/**
 * A generic hypermedia client: it knows the root URL and the two formats' link conventions, and
 * nothing about hypergate's paths. Everything else it finds by following links and templates.
 */
interface Format {
  readonly accept: string;
  link(body: Body, rel: string): { href: string; templated: boolean } | undefined;
  items(body: Body): Body[];
}
type Body = Record<string, unknown>;

const JSON_CLIENT: Format = {
  accept: 'application/json',
  link(body, rel) {
    const value = (body['links'] as Record<string, unknown> | undefined)?.[rel];
    if (typeof value === 'string') return { href: value, templated: false };
    if (value && typeof value === 'object') return { href: (value as { href: string }).href, templated: (value as { templated?: boolean }).templated === true };
    return undefined;
  },
  items: (body) => (body['items'] as Body[] | undefined) ?? [],
};

const HAL_CLIENT: Format = {
  accept: 'application/hal+json',
  link(body, rel) {
    const value = (body['_links'] as Record<string, { href: string; templated?: boolean }> | undefined)?.[rel];
    return value === undefined ? undefined : { href: value.href, templated: value.templated === true };
  },
  items: (body) => Object.values((body['_embedded'] as Record<string, Body[]> | undefined) ?? {})[0] ?? [],
};

/** RFC 6570 level 1 expansion: {name} becomes the percent-encoded value. */
function expand(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''));
}

for (const [name, format] of [
  ['plain JSON', JSON_CLIENT],
  ['HAL', HAL_CLIENT],
] as const) {
  describe(`walking the API from its root in ${name}`, () => {
    let fx: Fixture;
    let sample: SampleUpstream;
    let token: string;
    let visited: { href: string; text: string; self: string }[] = [];

    async function follow(href: string): Promise<Body> {
      const res = await get(`${fx.gw.url}${href}`, { ...bearer(token), accept: format.accept });
      assert.equal(res.status, 200, `GET ${href}`);
      assert.equal(res.headers['content-type'], format.accept);
      const body = res.json() as Body;
      const self = format.link(body, 'self');
      assert.ok(self, `${href} has a self link`);
      visited.push({ href, text: res.text, self: self.href });
      return body;
    }

    function linkOf(body: Body, rel: string): string {
      const link = format.link(body, rel);
      assert.ok(link, `link "${rel}"`);
      assert.equal(link.templated, false);
      return link.href;
    }

    before(async () => {
      // The sample service (embedded in dev auth mode), so the walk also covers its collection and orders.
      sample = await startSampleUpstream(50);
      fx = await startFixture({ upstream: { url: sample.url } });
      token = await fx.token();
    });
    after(async () => {
      await fx.close();
      await sample.close();
    });

    test('from GET /api, links alone reach a customer page, a customer, its orders and one order, and every self round-trips', async () => {
      visited = [];
      const root = await follow('/api');
      const page = await follow(linkOf(root, 'customers'));
      const next = await follow(linkOf(page, 'next'));
      const items = format.items(next);
      assert.equal(items.length, 20);

      // The template reaches a customer the page listed; the item's own self link agrees.
      const template = format.link(root, 'customer');
      assert.ok(template?.templated);
      let order: Body | undefined;
      for (const item of items) {
        const customer = await follow(expand(template.href, { id: String(item['id']) }));
        assert.equal(linkOf(customer, 'self'), linkOf(item, 'self'));
        const orders = await follow(linkOf(customer, 'orders'));
        assert.equal(linkOf(orders, 'customer'), linkOf(customer, 'self'));
        const first = format.items(orders)[0];
        if (first === undefined) continue;
        order = await follow(linkOf(first, 'self'));
        assert.equal(linkOf(order, 'customer'), linkOf(customer, 'self'));
        break;
      }
      assert.ok(order, 'some customer on the page has an order');
      await follow(linkOf(page, 'last'));

      // Every self link round-trips: GET on it answers the same resource, byte for byte.
      assert.ok(visited.length >= 6);
      for (const { href, text, self } of visited) {
        const again = await get(`${fx.gw.url}${self}`, { ...bearer(token), accept: format.accept });
        assert.equal(again.status, 200, self);
        assert.equal(again.text, text, `${self} (reached as ${href})`);
        // Self is the requested path; only the collection spells its query out canonically.
        if (!href.startsWith('/api/customers?') && href !== '/api/customers') assert.equal(self, href);
      }
    });
  });
}
