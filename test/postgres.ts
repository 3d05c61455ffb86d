/**
 * A real PostgreSQL for one test file, from Debian's `postgresql` package: initdb into a fresh temp
 * folder, pg_ctl start on a free port (127.0.0.1 only, its unix socket inside the folder), trust auth.
 * As root (initdb refuses root) the binaries run as the `postgres` user over a folder chown'd to it.
 * A server is stopped by `stop()` and, whatever happens to the test, when this process exits.
 */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server. */
export interface PostgresServer {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  /** The data folder (for tests that look at the log). */
  dir: string;
  /** Stops the server (`pg_ctl stop -m immediate`) and removes its folder; safe to call twice. */
  stop(): void;
}

/** The folder holding initdb and pg_ctl: Debian's highest /usr/lib/postgresql/<v>/bin, else PATH. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  if (versions[0]) return join(root, versions[0], 'bin');
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  return found ? found.replace(/\/initdb$/, '') : undefined;
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  if (!findPostgresBin()) return "PostgreSQL's initdb is not installed (Debian: apt-get install postgresql; .ci/run does it)";
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root and there is no postgres user to run initdb as';
  return undefined;
}

const running = new Set<() => void>();
process.on('exit', () => {
  for (const stop of running) stop();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const stop of running) stop();
    process.kill(process.pid, signal);
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a fresh server.
 * @throws Error with initdb's or the server's log when it does not start.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (!bin) throw new Error(postgresMissing());
  const dir = mkdtempSync(join(tmpdir(), 'lf-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const opts: SpawnSyncOptions = { encoding: 'utf8', timeout: 60_000 };
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout);
    chownSync(dir, uid, gid);
    Object.assign(opts, { uid, gid, env: { ...process.env, HOME: dir } });
  }
  const run = (tool: string, args: string[]) => spawnSync(join(bin, tool), args, { ...opts, cwd: dir });
  const init = run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-locale']);
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.error}`);
  }
  const port = await freePort();
  const settings = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c full_page_writes=off`;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    running.delete(stop);
    run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
    rmSync(dir, { recursive: true, force: true });
  };
  running.add(stop);
  const start = run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', settings]);
  if (start.status !== 0) {
    const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
    stop();
    throw new Error(`pg_ctl start failed: ${start.stderr}\n${log}`);
  }
  return { url: `postgresql://postgres@127.0.0.1:${port}/postgres`, dir, stop };
}
