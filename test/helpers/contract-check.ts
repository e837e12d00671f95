import { request } from 'undici';
import { ContractDocument, stopWatching } from './contract.ts';

/**
 * Checks the answers recorded for the gateway at `url` (when it was watched) against the OpenAPI
 * document it serves, and stops watching it. The problems, one line each; none when it was not
 * watched or its document cannot be read (a test that broke its keys on purpose).
 */
export async function checkRecordedAnswers(url: string, token: () => Promise<string>): Promise<string[]> {
  const answers = stopWatching(url);
  if (answers.length === 0) return [];
  const res = await request(`${url}/api/openapi.json`, { headers: { authorization: `Bearer ${await token()}` } });
  const text = await res.body.text();
  if (res.statusCode !== 200) return [];
  const document = new ContractDocument(JSON.parse(text) as Record<string, unknown>);
  return answers.flatMap((answer) => document.problemsOf(answer));
}
