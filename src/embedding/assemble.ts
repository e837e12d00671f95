import type { IncomingMessage } from 'node:http';
import { HAL_FORMAT, FORMATS } from '../hypermedia/formats.ts';
import type { Representation } from '../cache/representation.ts';
import { HgError } from '../lib/errors.ts';
import type { ResourceReads } from '../resources/embed-hook.ts';
import type { PartRead } from '../resources/read-through.ts';
import type { EmbedTree } from './embed-query.ts';
import type { Deadline } from './deadline.ts';
import { EmbedStatus, reasonOf, upstreamFailed } from './embed-status.ts';
import { fanOut } from './fan-out.ts';
import { MEMBERS, type NodeKind, type Relation, type Relations } from './relations.ts';

type Json = Record<string, unknown>;

/** A representation in an assembled answer (parsed), what it is, and what is asked below it. */
interface Node {
  readonly json: Json;
  readonly kind: NodeKind;
  readonly tree: EmbedTree;
  /** Its relation path and a dot (`items.`), '' for the resource asked for. */
  readonly prefix: string;
}

/** One relation path's parts at one level: the nodes that link to them and the distinct links. */
interface Wanted {
  readonly path: string;
  readonly relation: Relation;
  readonly tree: EmbedTree;
  readonly links: { readonly node: Node; readonly href: string }[];
  readonly hrefs: Set<string>;
}

/** What bounds one answer (embedding.*). */
export interface Bounds {
  readonly maxParts: number;
  readonly fanOutPerService: number;
}

/** What an answer was assembled from, for its ETag, Cache-Control and Embed-Status. */
export interface Assembled {
  readonly body: string;
  readonly reps: Representation[];
  readonly versions: string[];
  readonly status: EmbedStatus;
  readonly stale: boolean;
}

function tooMany(detail: string): HgError {
  return new HgError('HG_ERR_INVALID_QUERY', { detail });
}

/** The target of relation `rel` in a rendered representation: a plain link, never a template. */
function linkOf(json: Json, rel: string, hal: boolean): string | undefined {
  const links = (hal ? json['_links'] : json['links']) as Record<string, unknown> | undefined;
  const link = links?.[rel];
  if (hal) {
    const object = link as { href?: unknown; templated?: unknown } | undefined;
    return object !== undefined && object.templated !== true && typeof object.href === 'string' ? object.href : undefined;
  }
  return typeof link === 'string' ? link : undefined;
}

/** The members of a rendered collection page: `items` in plain JSON, `_embedded.<name>` in HAL. */
function membersOf(json: Json, name: string, hal: boolean): Json[] {
  const list = hal ? (json['_embedded'] as Record<string, unknown> | undefined)?.[name] : json['items'];
  return Array.isArray(list) ? (list as Json[]) : [];
}

/** Puts an embedded representation in its place: `embedded.<rel>` in plain JSON, `_embedded.<rel>` in HAL (links stay). */
function attach(json: Json, rel: string, part: Json, hal: boolean): void {
  const member = hal ? '_embedded' : 'embedded';
  const held = (json[member] ?? (json[member] = {})) as Json;
  held[rel] = part;
}

/** The links of the answer asked for that lead to it or, on a page, to its other pages: they keep its embed list. */
const OWN_RELS = ['self'] as const;
const PAGE_RELS = ['self', 'first', 'prev', 'next', 'last'] as const;

/**
 * `self` names what was asked for: the resource with its embed list (canonical order); on a
 * collection page so do the paging links, so that a client following them keeps getting composites.
 */
function linksWithEmbed(json: Json, canonical: string, hal: boolean, collection: boolean): void {
  const links = (hal ? json['_links'] : json['links']) as Record<string, unknown> | undefined;
  if (links === undefined) return;
  for (const rel of collection ? PAGE_RELS : OWN_RELS) {
    const target = hal ? (links[rel] as { href?: unknown } | undefined)?.href : links[rel];
    if (typeof target !== 'string') continue;
    const href = `${target}${target.includes('?') ? '&' : '?'}embed=${canonical}`;
    if (hal) links[rel] = { ...(links[rel] as Json), href };
    else links[rel] = href;
  }
}

/** The path of a link's target (the part a read matches against its template) and the target with its query. */
function pathOf(href: string): string {
  const q = href.indexOf('?');
  return q === -1 ? href : href.slice(0, q);
}

/**
 * Assembles one answer: the resource asked for and, level by level, the parts its embed list
 * asks for. At each level the parts of each relation path are collected across every node (a
 * whole page's members), deduplicated by link, counted against the bounds before any of them is
 * read, and read together through the same path as following each link would take (`parts`),
 * at most `fanOutPerService` at once per service.
 */
export class Assembly {
  readonly #req: IncomingMessage;
  readonly #requestId: string;
  readonly #format: number;
  readonly #hal: boolean;
  readonly #relations: Relations;
  readonly #parts: ResourceReads;
  readonly #bounds: Bounds;
  readonly #deadline: Deadline;
  readonly #reps: Representation[] = [];
  readonly #versions: string[] = [];
  readonly #status = new EmbedStatus();
  #stale = false;
  #count = 0;

  constructor(req: IncomingMessage, requestId: string, format: number, relations: Relations, parts: ResourceReads, bounds: Bounds, deadline: Deadline) {
    this.#req = req;
    this.#requestId = requestId;
    this.#format = format;
    this.#hal = FORMATS[format] === HAL_FORMAT;
    this.#relations = relations;
    this.#parts = parts;
    this.#bounds = bounds;
    this.#deadline = deadline;
  }

  async assemble(main: PartRead, kind: NodeKind, tree: EmbedTree, canonical: string): Promise<Assembled> {
    this.#take(main, '');
    const root = JSON.parse(main.rep.body) as Json;
    let level: Node[] = [{ json: root, kind, tree, prefix: '' }];
    while (level.length > 0) level = await this.#level(level);
    linksWithEmbed(root, canonical, this.#hal, kind.collection);
    return { body: JSON.stringify(root), reps: this.#reps, versions: this.#versions, status: this.#status, stale: this.#stale };
  }

  #take(read: PartRead, path: string): void {
    this.#reps.push(read.rep);
    this.#versions.push(read.rep.etag);
    if (read.stale) {
      this.#stale = true;
      if (path !== '') this.#status.stale(path);
    }
  }

  /** Reads the parts one level of nodes asks for, attaches them, and returns the next level. */
  async #level(nodes: readonly Node[]): Promise<Node[]> {
    const wanted = new Map<string, Wanted>();
    const queue = [...nodes];
    for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
      for (const [rel, below] of node.tree) {
        const path = node.prefix + rel;
        if (rel === MEMBERS && node.kind.collection) {
          const kind = { resource: node.kind.resource, collection: false };
          for (const member of membersOf(node.json, node.kind.resource.name, this.#hal)) queue.push({ json: member, kind, tree: below, prefix: `${path}.` });
          continue;
        }
        const relation = this.#relations.of(node.kind).get(rel);
        const href = linkOf(node.json, rel, this.#hal);
        // A record without the link's field has no such link (compile.ts): nothing to follow.
        if (relation === undefined || href === undefined) continue;
        let group = wanted.get(path);
        if (group === undefined) wanted.set(path, (group = { path, relation, tree: below, links: [], hrefs: new Set() }));
        group.links.push({ node, href });
        group.hrefs.add(href);
      }
    }
    // Every bound is checked before any part of this level is read.
    for (const group of wanted.values()) {
      if (group.hrefs.size > group.relation.maxParts)
        throw tooMany(
          `Query parameter "embed": "${group.path}" would bring ${group.hrefs.size} parts; this relation brings at most ${group.relation.maxParts}.`,
        );
      this.#count += group.hrefs.size;
    }
    if (this.#count > this.#bounds.maxParts)
      throw tooMany(`Query parameter "embed" would bring ${this.#count} parts; an answer embeds at most ${this.#bounds.maxParts}.`);
    // A relation with a batch endpoint first fills the cache with one request per relation; the reads below are then hits.
    await Promise.all(
      [...wanted.values()].map((group) => {
        const batch = group.relation.batch;
        if (batch === null) return Promise.resolve();
        const prefetch = this.#parts.prefetch(this.#req, this.#requestId, group.relation.target, [...group.hrefs].map(pathOf), batch);
        // Past the deadline the reads below time out each as their relation declares.
        return this.#deadline.within(prefetch).catch(() => {});
      }),
    );
    const tasks = [...wanted.values()].flatMap((group) =>
      [...group.hrefs].map((href) => ({ service: group.relation.target.service.name, run: () => this.#read(group.relation, href), group, href })),
    );
    const results = await fanOut(tasks, this.#bounds.fanOutPerService);
    const parsed = new Map<string, Json | null>();
    const next: Node[] = [];
    tasks.forEach((task, i) => {
      const result = results[i] as PromiseSettledResult<PartRead>;
      const key = `${task.group.path}\u0000${task.href}`;
      if (result.status === 'fulfilled') {
        this.#take(result.value, task.group.path);
        const json = JSON.parse(result.value.rep.body) as Json;
        parsed.set(key, json);
        const { relation, tree, path } = task.group;
        if (tree.size > 0) next.push({ json, kind: { resource: relation.target, collection: relation.kind === 'collection' }, tree, prefix: `${path}.` });
        return;
      }
      const err: unknown = result.reason;
      if (!(err instanceof HgError)) throw err;
      if (task.group.relation.onError === 'fail' && upstreamFailed(err)) throw err;
      const reason = reasonOf(err);
      this.#status.omitted(task.group.path, reason);
      this.#versions.push(`${task.group.path}=omitted; reason=${reason}; ${task.href}`);
      parsed.set(key, null);
    });
    for (const group of wanted.values()) {
      for (const { node, href } of group.links) {
        const part = parsed.get(`${group.path}\u0000${href}`);
        if (part != null) attach(node.json, group.relation.rel, part, this.#hal);
      }
    }
    return next;
  }

  #read(relation: Relation, href: string): Promise<PartRead> {
    const path = pathOf(href);
    if (relation.kind === 'collection')
      return this.#deadline.within(this.#parts.collection(this.#req, this.#requestId, relation.target, path, href, this.#format));
    return this.#deadline.within(this.#parts.item(this.#req, this.#requestId, relation.target, path, this.#format));
  }
}
