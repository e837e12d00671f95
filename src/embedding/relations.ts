import type { Config } from '../config/types.ts';
import type { CompiledResource, ResourceTable } from '../resources/compile.ts';
import type { Batch } from '../resources/embed-hook.ts';
import { JsonPointer } from '../resources/json-pointer.ts';

/** One embeddable relation as declared (`resources.<name>.embed.<rel>`), its target compiled. */
export interface Relation {
  readonly rel: string;
  readonly target: CompiledResource;
  /** `item`: the link leads to one item of the target; `collection`: to its collection. */
  readonly kind: 'item' | 'collection';
  readonly onError: 'omit' | 'fail';
  readonly maxParts: number;
  /** The target's batch endpoint, or null: parts are read one by one. */
  readonly batch: Batch | null;
}

/** What a node of an assembled answer is: an item or a collection (page) of a resource. */
export interface NodeKind {
  readonly resource: CompiledResource;
  readonly collection: boolean;
}

/** The relation path segment naming a collection's members: `items.customer` is each member's customer. */
export const MEMBERS = 'items';

type Declared = Config['resources'][string];

function compileRelations(declared: NonNullable<Declared>['embed'], table: ResourceTable): ReadonlyMap<string, Relation> {
  const relations = new Map<string, Relation>();
  for (const [rel, embed] of Object.entries(declared)) {
    const target = table.resources.find((r) => r.name === embed.target);
    // The config checks refuse a target that is not declared.
    if (target === undefined) continue;
    relations.set(rel, {
      rel,
      target,
      kind: embed.kind === 'collection' ? 'collection' : 'item',
      onError: embed.onError === 'fail' ? 'fail' : 'omit',
      maxParts: embed.maxParts,
      batch: embed.batch === null ? null : { upstream: embed.batch.upstream, items: JsonPointer.compile(embed.batch.items) },
    });
  }
  return relations;
}

const NONE: ReadonlyMap<string, Relation> = new Map();

/** Every resource's embeddable relations, of its items and of its collection, compiled once per table. */
export class Relations {
  readonly #items = new Map<CompiledResource, ReadonlyMap<string, Relation>>();
  readonly #collections = new Map<CompiledResource, ReadonlyMap<string, Relation>>();

  constructor(config: Config, table: ResourceTable) {
    for (const r of table.resources) {
      const declared = config.resources[r.name];
      if (declared == null) continue;
      this.#items.set(r, compileRelations(declared.embed, table));
      if (declared.collection !== null) this.#collections.set(r, compileRelations(declared.collection.embed, table));
    }
  }

  /** The relations a node of this kind may embed (a collection's own; its members' are asked through `items`). */
  of(kind: NodeKind): ReadonlyMap<string, Relation> {
    return (kind.collection ? this.#collections : this.#items).get(kind.resource) ?? NONE;
  }

  /** Does anything below a node of this kind embed: its own relations, or for a collection its members'? */
  declares(kind: NodeKind): boolean {
    if (this.of(kind).size > 0) return true;
    return kind.collection && this.of({ resource: kind.resource, collection: false }).size > 0;
  }
}
