import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configWith } from '../../src/gateway/load-config.ts';
import { configProblems } from '../helpers/config.ts';
import { startFixture } from '../helpers/fixture.ts';

describe('resources.<name>.embed in config', () => {
  test('a declared relation to a declared resource loads, with its defaults', () => {
    const config = configWith({ resources: { orders: { embed: { customer: { target: 'customers' } } } } });
    assert.deepEqual(config.resources['orders']?.embed['customer'], { target: 'customers', kind: 'item', onError: 'omit', batch: null, maxParts: 50 });
    assert.deepEqual(config.embedding, { maxDepth: 2, maxParts: 100, fanOutPerService: 8, timeoutMs: 5000, partsCountAgainstRateLimit: false });
  });

  test('a relation that is not a link, an unknown target, a wrong kind and a bad batch are refused, each naming its key', () => {
    assert.deepEqual(
      configProblems({
        resources: {
          customers: {
            embed: { invoices: { target: 'orders' }, orders: { target: 'order', kind: 'collection' } },
            collection: { embed: { items: { target: 'customers' } } },
          },
          orders: {
            embed: { customer: { target: 'customers', kind: 'collection', batch: { upstream: '/customers' } } },
            collection: { embed: { customer: { target: 'orders', batch: { upstream: '/orders?ids={ids}' } } } },
          },
        },
      }),
      [
        'resources.customers.embed.invoices: "invoices" is not a relation of resources.customers.links; only a declared link can be embedded',
        'resources.customers.embed.orders.target: "order" is not a declared resource (did you mean "orders"?)',
        'resources.customers.collection.embed.items: "items" names a collection\'s members in an embed path (items.<rel>); declare the members\' relations in resources.customers.embed',
        'resources.orders.embed.customer.batch: only an item relation reads its parts through a batch endpoint',
        "resources.orders.embed.customer: the link /api/customers/{customerId} cannot lead to /api/customers (resources.customers's collection.path)",
        "resources.orders.collection.embed.customer.batch: resources.orders's path has more than one parameter, and a batch endpoint is asked by identifier alone",
        "resources.orders.collection.embed.customer: the link /api/customers/{customerId} cannot lead to /api/customers/{customerId}/orders/{id} (resources.orders's path)",
      ],
    );
  });

  test('a resource that declares embeds and exposes a field named embedded is refused at start, naming the collision', async () => {
    const colliding = { resources: { orders: { exposeFields: ['embedded'], embed: { customer: { target: 'customers' } } } } };
    assert.deepEqual(configProblems(colliding), [
      'resources.orders.embed: the resource exposes a field named "embedded", the member that holds its embedded parts in plain JSON; rename the field ({"name": "<another name>", "pointer": "/embedded"}) or declare no embeds',
    ]);
    await assert.rejects(startFixture(colliding), /resources\.orders\.embed: the resource exposes a field named "embedded"/);
    // Without embeds the field is the resource's own business, and renamed it no longer collides.
    assert.deepEqual(configProblems({ resources: { orders: { exposeFields: ['embedded'] } } }), []);
    const renamed = { resources: { orders: { exposeFields: [{ name: 'embeddedNote', pointer: '/embedded' }], embed: { customer: { target: 'customers' } } } } };
    assert.deepEqual(configProblems(renamed), []);
  });

  test('embedding bounds have bounds of their own', () => {
    assert.equal(configProblems({ embedding: { maxDepth: 0 } }).length, 1);
    assert.equal(configProblems({ embedding: { fanOutPerService: 0 } }).length, 1);
  });
});
