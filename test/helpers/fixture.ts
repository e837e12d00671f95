import { mergeConfig } from '../../src/config/load.ts';
import type { GatewayDeps } from '../../src/gateway/create-gateway.ts';
import { ManualClock } from './clock.ts';
import { checkRecordedAnswers } from './contract-check.ts';
import { startGateway, type RunningGateway } from './gateway.ts';
import { makeKey, signToken, startJwksServer, type JwksServer, type TestKey, type TokenOptions } from './keys.ts';
import { startTestUpstream, type TestUpstream } from './upstream.ts';

/** A whole test world: a real upstream, a real JWKS server, a real gateway, real tokens. */
export interface Fixture {
  readonly key: TestKey;
  readonly jwks: JwksServer;
  readonly upstream: TestUpstream;
  readonly gw: RunningGateway;
  readonly clock: ManualClock;
  /** A token valid at the fixture clock's time. */
  token(options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startFixture(overrides: unknown = {}, deps: Omit<GatewayDeps, 'clock'> = {}): Promise<Fixture> {
  const clock = new ManualClock();
  const key = await makeKey('ES256');
  const jwks = await startJwksServer([key.publicJwk]);
  const upstream = await startTestUpstream();
  const base = { upstream: { url: upstream.url }, auth: { jwksUrl: jwks.url } };
  let gw: RunningGateway;
  try {
    gw = await startGateway(mergeConfig(base, overrides), { clock, ...deps });
  } catch (err) {
    // A gateway that does not start (a test of a start-up error) leaves nothing listening behind.
    await upstream.close();
    await jwks.close();
    throw err;
  }
  return {
    key,
    jwks,
    upstream,
    gw,
    clock,
    token: (options = {}) => signToken(key, { nowSeconds: clock.seconds, ...options }),
    close: async () => {
      // With HG_CONTRACT_CHECK=1, what this fixture's tests saw is checked against its own document.
      const problems = await checkRecordedAnswers(gw.url, () =>
        signToken(key, { nowSeconds: clock.seconds, claims: { scope: gw.gateway.config.auth.requiredScope } }),
      );
      await gw.close();
      await upstream.close();
      await jwks.close();
      if (problems.length > 0) throw new Error(`answers that do not match the OpenAPI document:\n${problems.join('\n')}`);
    },
  };
}
