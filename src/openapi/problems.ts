/**
 * Problem responses of the OpenAPI document: one per status, naming every problem type it may
 * carry, with the headers those problems carry; and the shared answers no operation describes.
 */
import { ERRORS, PROBLEM_TYPE_BASE, type HgErrorCode, type ProblemIdentity } from '../lib/errors.ts';
import { problemHeaders } from './headers.ts';

/** An RFC 9457 problem body whose type and code are one of these. */
function problemContent(list: readonly ProblemIdentity[]): Record<string, unknown> {
  return {
    'application/problem+json': {
      schema: {
        allOf: [
          { $ref: '#/components/schemas/Problem' },
          { properties: { type: { enum: list.map((p) => `${PROBLEM_TYPE_BASE}${p.slug}`) }, code: { enum: list.map((p) => p.code) } } },
        ],
      },
    },
  };
}

const registered = (c: HgErrorCode): ProblemIdentity => ({ slug: ERRORS[c].slug, title: ERRORS[c].title, code: c });

/** One response per status; its description and schema list every problem type it may carry. */
export function problemResponses(codes: readonly HgErrorCode[], notFound: ProblemIdentity | undefined): Record<string, unknown> {
  const byStatus = new Map<number, HgErrorCode[]>();
  for (const code of codes) {
    const status = ERRORS[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  // A resource's not-found problem names itself (customer-not-found), not the family's code.
  const identity = (c: HgErrorCode): ProblemIdentity => (c === 'HG_ERR_RESOURCE_NOT_FOUND' && notFound !== undefined ? notFound : registered(c));
  const out: Record<string, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const group = byStatus.get(status) as HgErrorCode[];
    const list = group.map(identity);
    out[String(status)] = {
      description: list.map((p) => `${p.title} (${PROBLEM_TYPE_BASE}${p.slug}, ${p.code})`).join('; '),
      headers: problemHeaders(group),
      content: problemContent(list),
    };
  }
  return out;
}

/** Answers to a request no operation describes: a path no route has, or a method a path does not take. */
export const SHARED_RESPONSES = {
  NotFound: {
    description: 'No resource at this path: not a path of this document, or its values do not fit the path template (a non-canonical id).',
    headers: problemHeaders(['HG_ERR_ROUTE_NOT_FOUND']),
    content: problemContent([registered('HG_ERR_ROUTE_NOT_FOUND')]),
  },
  MethodNotAllowed: {
    description: 'Any method a path does not take (for every path of this document): Allow lists those it does.',
    headers: problemHeaders(['HG_ERR_METHOD_NOT_ALLOWED']),
    content: problemContent([registered('HG_ERR_METHOD_NOT_ALLOWED')]),
  },
};
