/**
 * The checkouts a benchmark starts, each copied into a build folder of its own and built there as
 * its README tells users to (its dependencies, then its own `npm run build` when it has one), so a
 * run measures what users run and never writes into this checkout's dist/.
 *
 * - This checkout: its working tree as it is (tracked and untracked files, not the ignored ones),
 *   copied; the baseline and the peer are compiled beside its build (bench/tsconfig.servers.json),
 *   so they run as JavaScript with the same Node flags as hypergate's production start.
 * - Another one (`--compare REF`): a commit of this repository (`git archive`), or the working tree
 *   of another checkout folder.
 *
 * Dependencies: the checkout's lock file equal to this one's means the same packages, so it gets a
 * link to this checkout's node_modules; otherwise `npm ci` in its folder. A build folder is named
 * by what went into it (the commit, or a hash of the files), so a --build-dir kept between runs
 * reuses a finished build instead of making it again.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { startCommand } from './checkout.ts';
import { collect, ROOT } from './proc.ts';

export interface BuiltCheckout {
  /** How the tables name it: `hypergate`, or `hypergate@<ref or folder>`. */
  readonly name: string;
  /** What it was built from: a commit, or a folder's working tree. */
  readonly source: string;
  /** Its build folder: the copy, with node_modules and its build. */
  readonly root: string;
  /** Its `npm start`: the node flags and the entry file (absolute). */
  readonly nodeFlags: readonly string[];
  readonly entry: string;
}

/** The baseline and the peer compiled beside this checkout's build (bench/tsconfig.servers.json). */
export interface CompiledServers {
  readonly baseline: string;
  readonly peer: string;
  /** This checkout's start flags, which they run with. */
  readonly nodeFlags: readonly string[];
}

function run(argv: readonly string[], cwd: string, what: string, timeoutMs: number): Promise<string> {
  return collect(spawn(argv[0] as string, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] }), what, timeoutMs);
}

const DONE = '.bench-build-done';
/** Where bench/tsconfig.servers.json compiles the baseline and the peer to, in the build folder. */
const SERVERS_OUT = 'dist-bench';

/** Never copied from a folder that is not a git working tree: what installs and builds make. */
const MADE = new Set(['node_modules', 'dist', SERVERS_OUT, '.git', 'coverage', '.hypergate', 'results']);

/** Every file under `root` but what installs and builds make (a checkout unpacked without git). */
function allFiles(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true }).flatMap((e) => {
    const path = under === '' ? e.name : `${under}/${e.name}`;
    if (MADE.has(e.name)) return [];
    return e.isDirectory() ? allFiles(root, path) : [path];
  });
}

/** The files of a git working tree that a clone plus its own changes would hold: tracked and untracked, not ignored. */
async function workingTreeFiles(root: string): Promise<string[]> {
  let out: string;
  try {
    out = await run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], root, `git ls-files in ${root}`, 60_000);
  } catch {
    return allFiles(root).sort();
  }
  // node_modules is a link in a worktree (a link is not matched by the ignore rule `node_modules/`).
  return [...new Set(out.split('\0'))].filter((f) => f !== '' && f !== 'node_modules' && existsSync(join(root, f))).sort();
}

function hashFiles(root: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const f of files) {
    const path = join(root, f);
    hash.update(`${f}\0`);
    hash.update(lstatSync(path).isSymbolicLink() ? `link:${readlinkSync(path)}` : readFileSync(path));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

function copyFiles(from: string, files: readonly string[], to: string): void {
  for (const f of files) {
    const target = join(to, f);
    mkdirSync(dirname(target), { recursive: true });
    const source = join(from, f);
    if (lstatSync(source).isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else copyFileSync(source, target);
  }
}

/** How the tables name the hypergate of a --compare spec: `hypergate@<commit as given>`, or `hypergate@<folder name>`. */
export function checkoutName(spec: string): string {
  const folder = resolve(spec);
  return `hypergate@${isCheckoutFolder(folder) ? basename(folder) : spec}`;
}

function isCheckoutFolder(folder: string): boolean {
  return existsSync(join(folder, 'package.json')) && statSync(folder).isDirectory();
}

/** A safe folder name from a ref or folder name. */
const folderName = (s: string): string => s.replace(/[^\w.-]+/g, '_').slice(0, 40);

export class Builds {
  private readonly made = new Map<string, Promise<BuiltCheckout>>();
  private servers: Promise<CompiledServers> | null = null;
  readonly dir: string;
  private readonly say: (line: string) => void;
  private readonly timeoutMs: number;

  /**
   * `dir`: where the build folders go (made when missing). `say`: progress lines. `timeoutMs`
   * bounds each step (npm ci, a build).
   */
  constructor(dir: string, say: (line: string) => void = () => {}, timeoutMs = 600_000) {
    this.dir = dir;
    this.say = say;
    this.timeoutMs = timeoutMs;
  }

  /** This checkout's working tree, built. */
  current(): Promise<BuiltCheckout> {
    return this.once('', () => this.fromWorkingTree(ROOT, 'hypergate', true));
  }

  /**
   * `spec`: a folder holding another git checkout (its working tree is built), or a commit of this
   * repository (a tag, branch, or hash).
   */
  other(spec: string): Promise<BuiltCheckout> {
    return this.once(spec, async () => {
      const folder = resolve(spec);
      return isCheckoutFolder(folder) ? this.fromWorkingTree(folder, checkoutName(spec)) : this.fromCommit(spec);
    });
  }

  /** The baseline and the peer as JavaScript, compiled in this checkout's build folder. */
  compiledServers(): Promise<CompiledServers> {
    this.servers ??= this.current().then(async (built) => {
      const out = join(built.root, SERVERS_OUT);
      if (!existsSync(join(out, DONE))) {
        this.say('compiling the baseline and the peer (bench/tsconfig.servers.json)');
        // --noCheck: emit only; npm run typecheck checks these files, and the JavaScript is the same.
        await run(
          [process.execPath, join(built.root, 'node_modules/typescript/bin/tsc'), '-p', join(built.root, 'bench/tsconfig.servers.json'), '--noCheck'],
          built.root,
          'compiling the baseline and the peer',
          this.timeoutMs,
        );
        writeFileSync(join(out, DONE), '');
      }
      return { baseline: join(out, 'servers/baseline.js'), peer: join(out, 'peers/fastify.js'), nodeFlags: built.nodeFlags };
    });
    return this.servers;
  }

  private once(key: string, make: () => Promise<BuiltCheckout>): Promise<BuiltCheckout> {
    let built = this.made.get(key);
    if (built === undefined) {
      built = make();
      this.made.set(key, built);
    }
    return built;
  }

  /** `ours`: this checkout, whose type check is `npm run typecheck`'s job (see build). */
  private async fromWorkingTree(root: string, name: string, ours = false): Promise<BuiltCheckout> {
    const files = await workingTreeFiles(root);
    const folder = join(this.dir, `${folderName(basename(root))}-tree-${hashFiles(root, files)}`);
    return this.build(name, `the working tree of ${root}`, folder, (into) => copyFiles(root, files, into), ours);
  }

  private async fromCommit(ref: string): Promise<BuiltCheckout> {
    let sha: string;
    try {
      sha = (await run(['git', 'rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`], ROOT, `git rev-parse ${ref}`, 30_000)).trim();
    } catch {
      throw new Error(`--compare ${ref}: neither a folder holding a checkout nor a commit of this repository`);
    }
    const folder = join(this.dir, `${folderName(ref)}-${sha.slice(0, 12)}`);
    return this.build(checkoutName(ref), `commit ${sha}`, folder, async (into) => {
      const tar = join(this.dir, `${sha}.tar`);
      await run(['git', 'archive', '--format=tar', `--output=${tar}`, sha], ROOT, `git archive ${sha}`, 120_000);
      try {
        await run(['tar', '-xf', tar, '-C', into], into, `unpacking ${ref}`, 120_000);
      } finally {
        rmSync(tar, { force: true });
      }
    });
  }

  /**
   * Fills a fresh folder with `fill`, installs its dependencies and builds it, then renames it to
   * `folder` (a half-made folder is never taken for a build). A `folder` already there is reused.
   * `emitOnly`: a build script that runs tsc gets --noCheck (this checkout: its JavaScript is the
   * same, since it compiles with isolatedModules, and `npm run typecheck` does the checking; a
   * build then takes a third of the time on a busy machine).
   */
  private async build(name: string, source: string, folder: string, fill: (into: string) => Promise<void> | void, emitOnly = false): Promise<BuiltCheckout> {
    if (!existsSync(join(folder, DONE))) {
      rmSync(folder, { recursive: true, force: true });
      const work = `${folder}.part-${process.pid}`;
      rmSync(work, { recursive: true, force: true });
      mkdirSync(work, { recursive: true });
      try {
        this.say(`building ${name} (${source}) in ${folder}`);
        await fill(work);
        await this.install(work, name);
        const scripts = (JSON.parse(readFileSync(join(work, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
        // npm ci ran its prepare step, which may have built it already.
        const build = scripts['build'];
        if (build !== undefined && !existsSync(startCommand(work).entry)) {
          await run(
            ['npm', 'run', '--silent', 'build', ...(emitOnly && build.startsWith('tsc ') ? ['--', '--noCheck'] : [])],
            work,
            `npm run build for ${name}`,
            this.timeoutMs,
          );
        }
        const { entry } = startCommand(work);
        if (!existsSync(entry)) throw new Error(`${name}: its start script runs ${entry}, which its build did not make`);
        writeFileSync(join(work, DONE), `${source}\n`);
        try {
          renameSync(work, folder);
        } catch (err) {
          // Another run (a test file beside this one) finished the same build first: take its.
          if (!existsSync(join(folder, DONE))) throw err;
          rmSync(work, { recursive: true, force: true });
        }
      } catch (err) {
        rmSync(work, { recursive: true, force: true });
        throw err;
      }
    }
    const { nodeFlags, entry } = startCommand(folder);
    return { name, source, root: folder, nodeFlags, entry };
  }

  private async install(work: string, name: string): Promise<void> {
    const lock = (root: string): string | null => (existsSync(join(root, 'package-lock.json')) ? readFileSync(join(root, 'package-lock.json'), 'utf8') : null);
    const ours = lock(ROOT);
    if (ours !== null && ours === lock(work) && existsSync(join(ROOT, 'node_modules'))) {
      // The real folder, not a worktree's link to it: the link stays right when the build folder is renamed.
      symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(work, 'node_modules'));
      return;
    }
    this.say(`${name}: its package-lock.json differs from this checkout's: npm ci`);
    await run(['npm', 'ci', '--no-audit', '--no-fund', '--prefer-offline'], work, `npm ci for ${name}`, this.timeoutMs);
  }
}
