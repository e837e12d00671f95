import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A leaf certificate and its key, as files. */
export interface Issued {
  readonly cert: string;
  readonly key: string;
}

export interface TestCa {
  /** The authority's own certificate (PEM file): what `tls.ca` names. */
  readonly caFile: string;
  /** A certificate for `names` (DNS names or IP addresses), signed by this authority; `expired`: valid for a day in 2020 only. */
  issue(label: string, names: readonly string[], options?: { readonly expired?: boolean; readonly client?: boolean }): Issued;
  remove(): void;
}

/**
 * A certificate authority made by the test with Debian's openssl, in a folder of its own: no
 * certificate is checked in, and none is valid anywhere else. `openssl ca` (not `x509`) issues the
 * leaves because OpenSSL 3.0 can only set past validity dates there.
 */
export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'hypergate-ca-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  writeFileSync(at('index.txt'), '');
  writeFileSync(at('serial'), '1000\n');
  writeFileSync(
    at('ca.cnf'),
    [
      '[ca]',
      'default_ca = test_ca',
      '[test_ca]',
      `database = ${at('index.txt')}`,
      `new_certs_dir = ${dir}`,
      `serial = ${at('serial')}`,
      'default_md = sha256',
      'default_days = 2',
      'policy = any_policy',
      'unique_subject = no',
      '[any_policy]',
      'commonName = supplied',
    ].join('\n'),
  );
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.crt'), '-days', '2', '-subj', '/CN=hypergate test CA');
  return {
    caFile: at('ca.crt'),
    issue(label, names, options = {}) {
      const key = at(`${label}.key`);
      const cert = at(`${label}.crt`);
      const csr = at(`${label}.csr`);
      const ext = at(`${label}.ext`);
      const san = names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
      writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=${options.client === true ? 'clientAuth' : 'serverAuth'}\n`);
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${label}`);
      const dates = options.expired === true ? ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z'] : [];
      openssl(
        'ca',
        '-batch',
        '-notext',
        '-config',
        at('ca.cnf'),
        '-cert',
        at('ca.crt'),
        '-keyfile',
        at('ca.key'),
        '-in',
        csr,
        '-out',
        cert,
        '-extfile',
        ext,
        ...dates,
      );
      return { cert, key };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
