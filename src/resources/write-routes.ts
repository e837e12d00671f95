import type { IncomingMessage } from 'node:http';
import { tokenIssuer } from '../auth/realm.ts';
import { HgError } from '../lib/errors.ts';
import { discardBody } from '../protocol/body.ts';
import type { HgResponse } from '../protocol/response.ts';
import type { RouteDef } from '../protocol/route.ts';
import { callOf } from '../upstream/trace-context.ts';
import type { WriteResult } from '../upstream/client.ts';
import type { IdempotentAnswer } from '../cluster/idempotency.ts';
import type { CompiledCollection, ResourceTable } from './compile.ts';
import { accepted, answered, invalidateAfter, writeAnswer } from './write-answer.ts';
import { checkWrite } from './write-checks.ts';
import { writeDocs } from './write-docs.ts';
import { fingerprintOf, IdempotencyClaim, idempotencyScope, realmScope, type KeyedWrite } from './write-idempotency.ts';
import type { WriteDeps, WriteMethod, WriteOp, WriteRun } from './write-op.ts';
import { refusal, sendWrite } from './write-upstream.ts';

export type { WriteDeps } from './write-op.ts';

/** The write's Idempotency-Key with whose it is and what it was first used for; null without one. */
function keyedWrite(run: WriteRun, req: IncomingMessage): KeyedWrite | null {
  const { key, principal, body } = run.checked;
  if (key === null) return null;
  return {
    scope: realmScope(
      run.deps.realm,
      run.deps.ctx.config.auth.issuer ?? tokenIssuer(req.headers.authorization),
      idempotencyScope(req.headers.authorization, principal.subject),
    ),
    key,
    fingerprint: fingerprintOf(run.op.method, run.path, body),
    ttlSeconds: run.deps.ctx.config.idempotency.ttlSeconds,
  };
}

/**
 * A write of one declared resource, start to end, as stages:
 * 1. checks (write-checks.ts): everything that can refuse it without the upstream, before a byte
 *    is read or sent;
 * 2. the Idempotency-Key (write-idempotency.ts): a finished request with the key replays its
 *    answer (or 409/422), else the key is claimed;
 * 3. upstream (write-upstream.ts): the write is sent with If-Match as the upstream must see it,
 *    and a refusal mapped to our problem;
 * 4. answer (write-answer.ts): whatever the upstream did (or may have done), the cache is told: the
 *    item in every format, its collection's pages and, for DELETE, what lies below it are dropped,
 *    and the new representation an answer carries is stored unless a later change overtook this
 *    one; the final answer is kept under the key and written.
 */
async function write(op: WriteOp, deps: WriteDeps, req: IncomingMessage, res: HgResponse, path: string): Promise<void> {
  try {
    await stages(op, deps, req, res, path);
  } catch (err) {
    // Refused before the body was read whole: drop the rest as it comes, so the answer reaches the client.
    discardBody(req);
    throw err;
  }
}

async function stages(op: WriteOp, deps: WriteDeps, req: IncomingMessage, res: HgResponse, path: string): Promise<void> {
  const { ctx } = deps;
  const checked = await checkWrite(op, deps, req, res, path);
  // Refused before the key is claimed and anything is sent: the upstream would not be told who asks.
  const unsendable = op.r.service.claimProblem(checked.principal.claims);
  if (unsendable !== null) throw unsendable;
  const run: WriteRun = { op, deps, path, checked, published: [] };
  const call = callOf(req, res.requestId, checked.principal.claims);
  const claim = await IdempotencyClaim.begin(deps.idempotency, keyedWrite(run, req), ctx.logger, res.requestId);
  if (!(claim instanceof IdempotencyClaim)) return writeAnswer(res, claim);

  const ticket = ctx.cache.beginLoad();
  let answer: IdempotentAnswer;
  try {
    answer = await outcome(run, claim, call, ticket);
  } finally {
    ctx.cache.endLoad(ticket);
    // Read-your-write on every instance: no answer (nor problem) before the other instances were
    // told what this write dropped, or redis.timeoutMs passed trying.
    await Promise.all(run.published);
  }
  writeAnswer(res, answer);
}

/**
 * Did the upstream take the write (RFC 9110 section 15.3: a 2xx; section 15.4.4: a 303 and the
 * other redirects to a POST say it was processed and where to look), whatever its body says?
 */
function acknowledged(method: WriteMethod, status: number): boolean {
  return (status >= 200 && status < 300) || (method === 'POST' && status >= 300 && status < 400);
}

/**
 * A write the upstream took whose answer cannot be shown (its body could not be read, or a
 * redirect to a POST the gateway does not follow): 502, but the change was made, so the answer
 * is final under the key and a retry replays it rather than make the change again.
 */
function unshowable(run: WriteRun, status: number, unreadable: string | null): HgError {
  const { r, method } = run.op;
  const why = unreadable === null ? 'a redirect the gateway does not follow' : `but ${unreadable}`;
  return new HgError('HG_ERR_UPSTREAM_BAD_GATEWAY', {
    detail: `${r.service.who} took the ${method} (status ${status}), ${why}: the change was made, and is not made again for a retry with the same Idempotency-Key.`,
  });
}

/** Stages 3 and 4: the upstream's answer, the cache told, the claim told; the final answer, or the problem to answer. */
async function outcome(run: WriteRun, claim: IdempotencyClaim, call: Parameters<typeof sendWrite>[1], ticket: number): Promise<IdempotentAnswer> {
  const { op } = run;
  const result = await sent(run, claim, call);
  if (result.status === 202) {
    const answer = accepted(run);
    void claim.final(answer);
    return answer;
  }
  const isSuccess = result.status >= 200 && result.status < 300;
  if (acknowledged(op.method, result.status) && (!isSuccess || (result.unreadable !== null && op.method !== 'DELETE'))) {
    invalidateAfter(run);
    const err = unshowable(run, result.status, result.unreadable);
    void claim.refused(err);
    throw err;
  }
  if (!isSuccess) {
    const refused = refusal(op, result);
    // A 404 says the item is gone; a 5xx may have changed it: both drop what the cache holds.
    if (result.status === 404 || result.status >= 500) invalidateAfter(run);
    void claim.upstreamRefused(result.status, refused);
    throw refused;
  }
  let answer: IdempotentAnswer;
  try {
    answer = answered(run, result, ticket);
  } catch (err) {
    // The upstream made the change (a 2xx) but its answer cannot be rendered (no record, an
    // invalid one): the outcome is known, so the 502 is final. A retry that ran again would make
    // the change twice, which is what the key is for.
    void (err instanceof HgError ? claim.refused(err) : claim.unknown());
    throw err;
  }
  void claim.final(answer);
  return answer;
}

/** The upstream's answer to the write; when it fails, the claim and the cache learn what is known of the outcome. */
async function sent(run: WriteRun, claim: IdempotencyClaim, call: Parameters<typeof sendWrite>[1]): Promise<WriteResult> {
  try {
    return await sendWrite(run, call);
  } catch (err) {
    // If-Match named no current version: decided before anything was sent, and final.
    if (err instanceof HgError && err.code === 'HG_ERR_PRECONDITION_FAILED') {
      void claim.refused(err);
      throw err;
    }
    // An open breaker sent nothing; anything else may have reached the upstream: what the cache
    // holds of the item may be stale, and the outcome is unknown.
    if (!(err instanceof HgError && err.code === 'HG_ERR_UPSTREAM_UNAVAILABLE')) invalidateAfter(run);
    void claim.unknown();
    throw err;
  }
}

/** The write routes of the table: POST on each collection that takes it, PUT/PATCH/DELETE on each item that does. */
export function writeRoutes(table: ResourceTable, deps: WriteDeps): RouteDef[] {
  const routes: RouteDef[] = [];
  for (const r of table.resources) {
    const suffixes = deps.parts.entries.suffixesOf(r.declaration, deps.parts.entries.varyOf(r));
    const add = (method: WriteMethod, collection: CompiledCollection | null): void => {
      const op: WriteOp = { r, method, collection, suffixes };
      const template = collection === null ? r.item : collection.path;
      const types = collection === null ? r.types : collection.types;
      routes.push({
        method,
        path: template.route,
        fits: (path) => template.fits(path, types),
        handler: (req, res, path) => write(op, deps, req, res, path),
        acceptsBody: method !== 'DELETE',
        doc: writeDocs(r, method, collection, deps.access),
      });
    };
    if (r.methods.has('POST') && r.collection !== null) add('POST', r.collection);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) if (r.methods.has(method)) add(method, null);
  }
  return routes;
}
