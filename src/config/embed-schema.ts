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
