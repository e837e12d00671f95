import { request } from 'node:http';

export interface Answer {
  readonly status: number;
  /** Header names and values in the order the server wrote them. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

/** One GET on a fresh connection (no agent), bounded by `timeoutMs`. */
export function httpGet(url: string, headers: Record<string, string>, timeoutMs = 10_000): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(url, { headers, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end();
  });
}

export function header(answer: Answer, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    if (answer.rawHeaders[i]?.toLowerCase() === lower) return answer.rawHeaders[i + 1];
  }
  return undefined;
}
