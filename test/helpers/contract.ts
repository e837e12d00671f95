import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/** One answer a test saw, with what was asked: enough to find its operation in the OpenAPI document. */
export interface RecordedAnswer {
  readonly method: string;
  /** Path and query, as sent. */
  readonly target: string;
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/**
 * Answers per gateway origin, for the origins being watched. The test helpers' `get` and `send`
 * record into it; a gateway started by the helpers is watched when HG_CONTRACT_CHECK=1 (its
 * fixture checks what it recorded against the gateway's own document when it closes), and the
 * contract test watches its own explicitly.
 */
const watched = new Map<string, RecordedAnswer[]>();

export const contractCheckOn = (): boolean => process.env['HG_CONTRACT_CHECK'] === '1';

export function watchAnswers(origin: string): RecordedAnswer[] {
  const list = watched.get(origin) ?? [];
  watched.set(origin, list);
  return list;
}

export function stopWatching(origin: string): RecordedAnswer[] {
  const list = watched.get(origin) ?? [];
  watched.delete(origin);
  return list;
}

export function recordAnswer(url: string, method: string, answer: Omit<RecordedAnswer, 'method' | 'target'>): void {
  const parsed = new URL(url);
  watched.get(parsed.origin)?.push({ method, target: parsed.pathname + parsed.search, ...answer });
}

/**
 * Header fields a client acts on: when an answer carries one, its documented response must name
 * it (the rest, Content-Type, Content-Length, Date, Connection, are HTTP's own).
 */
const CONTRACT_HEADERS = [
  'ETag',
  'Cache-Control',
  'Age',
  'Vary',
  'Cache-Status',
  'X-Request-Id',
  'Location',
  'Content-Location',
  'Allow',
  'Accept-Post',
  'Accept-Patch',
  'Accept-Encoding',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'WWW-Authenticate',
];

type Json = Record<string, unknown>;
const asObject = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});

/** What validating answers against one document needs: its operations by path pattern, and a schema compiler that resolves its $refs. */
export class ContractDocument {
  readonly doc: Json;
  readonly #paths: { template: string; pattern: RegExp; literals: number }[];
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  readonly #compiled = new Map<unknown, ValidateFunction>();

  constructor(doc: Json) {
    this.doc = doc;
    this.#paths = Object.keys(asObject(doc['paths'])).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`),
      literals: template.split('/').filter((s) => !s.startsWith('{')).length,
    }));
  }

  /** The path template of the document that names this request path (the most literal one), or null. */
  templateOf(path: string): string | null {
    const matches = this.#paths.filter((p) => p.pattern.test(path)).sort((a, b) => b.literals - a.literals);
    return matches[0]?.template ?? null;
  }

  /** The documented response (a $ref resolved) for this answer, with the operation's name; a string says why there is none. */
  responseFor(answer: RecordedAnswer): { operation: string; response: Json } | string {
    const path = answer.target.split('?')[0] as string;
    const template = this.templateOf(path);
    const method = answer.method.toLowerCase();
    const operation = `${answer.method} ${template ?? path}`;
    const components = asObject(asObject(this.doc['components'])['responses']);
    if (template === null)
      return answer.status === 404
        ? { operation: 'unknown path', response: this.#resolve(components['NotFound']) }
        : `${answer.method} ${path}: no path of the document matches it, yet it answered ${answer.status}`;
    const op = asObject(asObject(asObject(this.doc['paths'])[template])[method]);
    if (Object.keys(op).length === 0) {
      // A method the path does not take: 405 with Allow, or 404 when the path's values do not fit its template.
      const name = answer.status === 405 ? 'MethodNotAllowed' : answer.status === 404 ? 'NotFound' : null;
      return name === null
        ? `${operation}: not an operation of the document, yet it answered ${answer.status}`
        : { operation: `${answer.method} (not taken) ${template}`, response: this.#resolve(components[name]) };
    }
    const responses = asObject(op['responses']);
    const response = responses[String(answer.status)];
    if (response === undefined) return `${operation}: status ${answer.status} is not documented (documented: ${Object.keys(responses).join(', ')})`;
    return { operation, response: this.#resolve(response) };
  }

  /** Everything that does not match the document in this answer: status, media type, body, documented headers. */
  problemsOf(answer: RecordedAnswer): string[] {
    const found = this.responseFor(answer);
    if (typeof found === 'string') return [found];
    const { operation, response } = found;
    const at = `${operation} → ${answer.status}`;
    const problems: string[] = [];
    const documented = Object.keys(asObject(response['headers'])).map((h) => h.toLowerCase());
    for (const name of CONTRACT_HEADERS)
      if (answer.headers[name.toLowerCase()] !== undefined && !documented.includes(name.toLowerCase()))
        problems.push(`${at}: sends ${name}, which the document does not describe`);
    for (const [name, header] of Object.entries(asObject(response['headers']))) {
      const spec = this.#resolve(header);
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (spec['required'] === true) problems.push(`${at}: the required header ${name} is missing`);
        continue;
      }
      const check = this.#validator(asObject(spec['schema']));
      const text = Array.isArray(value) ? value.join(', ') : value;
      const typed = asObject(spec['schema'])['type'] === 'integer' ? (/^\d+$/.test(text) ? Number(text) : text) : text;
      if (!check(typed)) problems.push(`${at}: header ${name}: ${JSON.stringify(text)} ${this.#ajv.errorsText(check.errors)}`);
    }
    const content = asObject(response['content']);
    const bodyless = answer.method === 'HEAD' || answer.status === 204 || answer.status === 304;
    if (bodyless || Object.keys(content).length === 0) {
      if (answer.text !== '') problems.push(`${at}: a body where the document describes none`);
      return problems;
    }
    const mediaType =
      String(answer.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    const media = content[mediaType];
    if (media === undefined)
      return [...problems, `${at}: media type ${JSON.stringify(mediaType)} is not documented (documented: ${Object.keys(content).join(', ')})`];
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [...problems, `${at}: the body is not JSON`];
    }
    const check = this.#validator(asObject(asObject(media)['schema']));
    if (!check(body)) problems.push(`${at}: body ${this.#ajv.errorsText(check.errors)}: ${answer.text.slice(0, 300)}`);
    return problems;
  }

  #resolve(value: unknown): Json {
    const object = asObject(value);
    const ref = object['$ref'];
    if (typeof ref !== 'string') return object;
    let target: unknown = this.doc;
    for (const part of ref.slice(2).split('/')) target = asObject(target)[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    return this.#resolve(target);
  }

  /** A validator of this schema in the document's context: its `#/components/...` references resolve. */
  #validator(schema: Json): ValidateFunction {
    let check = this.#compiled.get(schema);
    if (check === undefined) {
      check = this.#ajv.compile({ ...schema, components: this.doc['components'] });
      this.#compiled.set(schema, check);
    }
    return check;
  }
}

/** Every documented operation ("GET /api/customers/{id}") with the statuses the document gives it. */
export function documentedStatuses(doc: Json): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [template, item] of Object.entries(asObject(doc['paths']))) {
    for (const [method, op] of Object.entries(asObject(item))) {
      if (typeof op !== 'object' || op === null || !('responses' in op)) continue;
      out.set(`${method.toUpperCase()} ${template}`, Object.keys(asObject((op as Json)['responses'])));
    }
  }
  return out;
}
