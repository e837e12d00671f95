import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/types.ts';
import type { Clock } from '../lib/clock.ts';
import { SingleFlight } from '../lib/single-flight.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { Access } from '../resources/access.ts';
import type { CompiledResource, ResourceTable } from '../resources/compile.ts';
import { ResourceReads, type EmbedHook, type ReadHandler, type ReadPaths } from '../resources/embed-hook.ts';
import type { FormatNegotiation } from '../resources/format-negotiation.ts';
import type { PartRead } from '../resources/read-through.ts';
import { Assembly, type Assembled, type Bounds } from './assemble.ts';
import { writeComposite } from './composite.ts';
import { Deadline } from './deadline.ts';
import { readEmbed } from './embed-query.ts';
import { MEMBERS, Relations, type NodeKind } from './relations.ts';

/** What embedding is built from: the config, the compiled table, the access rules and the gateway's format negotiation and clock. */
export interface EmbeddingInputs {
  readonly config: Config;
  readonly table: ResourceTable;
  /** The access rules of the resource asked for (under the rate limit). */
  readonly access: Access;
  /** The access rules of each part: `access` itself when parts count against the rate limit, else the same rules without it. */
  readonly partAccess: Access;
  readonly formats: FormatNegotiation;
  readonly clock: Clock;
}

/**
 * Embedding plugged into the read routes (docs/resources.md "Embedding"): a request with `embed`
 * gets the resource it asks for with the declared related resources it names, each read exactly
 * as following its link would be, assembled per request from the cached parts.
 */
export function embedding(inputs: EmbeddingInputs): EmbedHook {
  const { config, table, formats, clock } = inputs;
  const relations = new Relations(config, table);
  const bounds: Bounds = { maxParts: config.embedding.maxParts, fanOutPerService: config.embedding.fanOutPerService };
  const maxDepth = config.embedding.maxDepth;
  const timeoutMs = config.embedding.timeoutMs;
  const batches = new SingleFlight<void>();
  return {
    relationsOf(r: CompiledResource, onCollection: boolean): readonly string[] {
      const own = [...relations.of({ resource: r, collection: onCollection }).keys()];
      if (!onCollection) return own;
      return [...own, ...[...relations.of({ resource: r, collection: false }).keys()].map((rel) => `${MEMBERS}.${rel}`)];
    },
    handlerFor(r: CompiledResource, onCollection: boolean, paths: ReadPaths): ReadHandler | null {
      const kind: NodeKind = { resource: r, collection: onCollection };
      if (!relations.declares(kind)) return null;
      const own = new ResourceReads(paths, inputs.access, batches);
      const parts = inputs.partAccess === inputs.access ? own : new ResourceReads(paths, inputs.partAccess, batches);
      return async (req: IncomingMessage, res: HgResponse, path: string): Promise<void> => {
        // Refused before anything is read: a bad list, an unknown relation, too deep a path.
        const ask = readEmbed(req.url ?? path, kind, relations, maxDepth);
        const format = formats.format(req);
        const deadline = new Deadline(timeoutMs);
        let main: PartRead;
        let assembled: Assembled;
        try {
          main = await deadline.within(
            onCollection ? own.collection(req, res.requestId, r, path, ask.rest, format) : own.item(req, res.requestId, r, path, format),
          );
          assembled = await new Assembly(req, res.requestId, format, relations, parts, bounds, deadline).assemble(main, kind, ask.tree, ask.canonical);
        } finally {
          deadline.clear();
        }
        const embedStatus = assembled.status.value;
        res.embedStatus = embedStatus;
        const composite = { reps: assembled.reps, versions: assembled.versions, canonical: ask.canonical, embedStatus };
        writeComposite(req, res, main.rep, assembled.body, composite, clock.now(), assembled.stale);
      };
    },
  };
}
