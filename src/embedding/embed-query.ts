import { HgError } from '../lib/errors.ts';
import { MEMBERS, type NodeKind, type Relations } from './relations.ts';

/** The relations asked below one node: relation → what is asked below it (empty: the part alone). */
export type EmbedTree = ReadonlyMap<string, EmbedTree>;
type MutableTree = Map<string, MutableTree>;

/** A request's `embed` read: what it asks for, its canonical text, and the request target without it. */
export interface EmbedAsk {
  readonly tree: EmbedTree;
  /** Its relation paths in canonical order (sorted, each once, none that a longer one implies): in `self` and in the ETag. */
  readonly canonical: string;
  /** The request target without its `embed` parameter: what the resource alone would be read with. */
  readonly rest: string;
}

const REL = /^[A-Za-z][A-Za-z0-9_-]*$/;

function invalid(detail: string): HgError {
  return new HgError('HG_ERR_INVALID_QUERY', { detail });
}

/** A relation name as a detail may show it: only plain text is echoed. */
function shown(rel: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(rel) ? `"${rel}"` : 'with this name';
}

function offered(relations: Relations, kind: NodeKind): string {
  const names = [...relations.of(kind).keys()];
  if (kind.collection && relations.of({ resource: kind.resource, collection: false }).size > 0) names.push(`${MEMBERS}.<rel>`);
  return names.length === 0 ? 'nothing' : names.join(', ');
}

/**
 * Reads the `embed` parameter of `url` (comma-separated relation paths, a dot between the
 * relations of a path) against what a node of `kind` declares. An unknown relation, one asked of
 * something that embeds nothing, a path deeper than `maxDepth` relations (`items` is not one: the
 * members are already in the page) or a malformed list is a 400 naming it.
 */
export function readEmbed(url: string, kind: NodeKind, relations: Relations, maxDepth: number): EmbedAsk {
  const q = url.indexOf('?');
  const kept: string[] = [];
  let given: string | null = null;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    if ((eq === -1 ? pair : pair.slice(0, eq)) !== 'embed') {
      if (pair !== '') kept.push(pair);
      continue;
    }
    if (given !== null) throw invalid('Query parameter "embed" is given more than once; list the relations in one, separated by commas.');
    try {
      given = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      throw invalid('Query parameter "embed" is not valid percent-encoding.');
    }
  }
  if (given === null || given === '') throw invalid('Query parameter "embed" names no relation.');
  const paths = new Set<string>();
  for (const text of given.split(',')) {
    const steps = text.split('.');
    let here = kind;
    let depth = 0;
    for (const [i, step] of steps.entries()) {
      const prefix = steps.slice(0, i + 1).join('.');
      if (!REL.test(step)) throw invalid(`Query parameter "embed": ${shown(text)} is not a relation path (relations separated by dots).`);
      if (step === MEMBERS && here.collection && relations.of({ resource: here.resource, collection: false }).size > 0) {
        if (i === steps.length - 1)
          throw invalid(
            `Query parameter "embed": ${shown(prefix)} names the members, which the page holds already; ask for a relation of theirs (${MEMBERS}.<rel>).`,
          );
        here = { resource: here.resource, collection: false };
        continue;
      }
      const relation = relations.of(here).get(step);
      if (relation === undefined)
        throw invalid(
          `Query parameter "embed": ${shown(prefix)} is not an embeddable relation here; this ${here.collection ? 'collection' : here.resource.singular} embeds ${offered(relations, here)}.`,
        );
      if (++depth > maxDepth) throw invalid(`Query parameter "embed": ${shown(prefix)} is ${depth} relations deep; at most ${maxDepth}.`);
      here = { resource: relation.target, collection: relation.kind === 'collection' };
    }
    paths.add(text);
  }
  const sorted = [...paths].sort();
  const canonical = sorted.filter((p) => !sorted.some((other) => other.startsWith(`${p}.`)));
  const tree: MutableTree = new Map();
  for (const path of canonical) {
    let level = tree;
    for (const step of path.split('.')) {
      let next = level.get(step);
      if (next === undefined) level.set(step, (next = new Map<string, MutableTree>()));
      level = next;
    }
  }
  const path = q === -1 ? url : url.slice(0, q);
  return { tree, canonical: canonical.join(','), rest: kept.length === 0 ? path : `${path}?${kept.join('&')}` };
}
