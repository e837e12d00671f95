import { integer, map, nonEmptyString, section, string } from './rule.ts';

export const EMBED_KINDS = ['item', 'collection'] as const;
export const EMBED_ON_ERROR = ['omit', 'fail'] as const;

/** One embeddable relation (docs/resources.md "Embedding"): what its link leads to, and what a failed part does. */
const EMBED = section({
  target: nonEmptyString({ doc: 'The declared resource (a key of `resources`) the link leads to.' }),
  kind: string({
    oneOf: EMBED_KINDS,
    default: 'item',
    doc: '`"item"`: the link leads to one item of `target`; `"collection"`: to its collection (its first page).',
  }),
  onError: string({
    oneOf: EMBED_ON_ERROR,
    default: 'omit',
    doc: '`"omit"`: a part the upstream cannot give (and no stale copy may answer for) is left out and named in `Embed-Status`; `"fail"`: the whole answer fails as that part would.',
  }),
  batch: section(
    {
      upstream: nonEmptyString({
        label: 'template',
        doc: 'Upstream path (with query) that answers several items at once, with `{ids}` for their identifiers, comma-separated: e.g. `"/customers?ids={ids}"`.',
      }),
      items: string({ label: 'JSON pointer', default: '/items', doc: "Where the array of records is in the batch endpoint's answer." }),
    },
    {
      nullable: true,
      default: null,
      doc: "The target's batch endpoint (an item relation to a resource with one path parameter); `null`: parts are read one by one. See [Embedding](resources.md#embedding).",
    },
  ),
  maxParts: integer({
    min: 1,
    max: 10_000,
    default: 50,
    doc: 'Most distinct parts this relation may bring into one answer; more is a 400 before any part is read.',
  }),
});

/** Relation → embeddable relation; each relation must be one of the declaration's `links`. */
export function embeds(doc: string) {
  return map(EMBED, { default: {}, doc });
}
