/**
 * Captures MCP servers' tool catalogues (every tool's full definition, as each server declares it) into
 * test/catalogues/<set>/, for `lookfirst ecosystem` and the classifier's development set.
 *
 *   node --import tsx test/capture-catalogues.ts [SET] [--only SLUG,…] [--install-dir DIR]
 *
 * - SET (default `npm`) names a folder of test/catalogues; its `capture/*.json` files list the servers:
 *   `[{ slug, package, version, local?, bin?, args?, env? }]`. `local: true` means this repository's own
 *   node_modules (the servers the test suite runs); any other package is installed with npm, outside the
 *   repository, into `--install-dir` (default $TMPDIR/lf-capture-servers), one folder per server.
 * - Installing needs the registry; capturing does not: after installing, the script runs itself again in a
 *   new network namespace with only loopback (`unshare -rn`, as an unprivileged user namespace), so no server
 *   can reach anything while it starts and lists its tools. `env` holds dummy credentials only.
 * - No tool is ever called: the client connects, pages through `tools/list`, and closes.
 * - `args` may use `{scratch}`, an empty temporary folder (for servers that need a directory or a file).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { NODE, ROOT } from './helpers.js';

/** One server to capture. */
interface ServerSpec {
  slug: string;
  /** npm package name. */
  package: string;
  /** Run it from this repository's node_modules (the servers the test suite runs) instead of installing it. */
  local?: boolean;
  /** Exact version to install (ignored when local). */
  version?: string;
  /** Which of the package's `bin` entries to run, or a path inside the package; default: its only bin, or `main`. */
  bin?: string;
  args?: string[];
  env?: Record<string, string>;
}

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const set = argv.find((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--')) ?? 'npm';
const only = flag('--only')?.split(',');
const installDir = flag('--install-dir') ?? join(tmpdir(), 'lf-capture-servers');
const setDir = join(ROOT, 'test/catalogues', set);
const specDir = join(setDir, 'capture');

const specs: ServerSpec[] = readdirSync(specDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => JSON.parse(readFileSync(join(specDir, f), 'utf8')) as ServerSpec[])
  .filter((s) => !only || only.includes(s.slug));

function packageDir(s: ServerSpec): string {
  return s.local ? ROOT : join(installDir, s.slug);
}

/** The script a server starts with: the named or only `bin` of its package, else its `main`. */
function entry(s: ServerSpec, pkgName: string): string {
  const dir = join(packageDir(s), 'node_modules', pkgName);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { bin?: string | Record<string, string>; main?: string };
  if (s.bin && existsSync(join(dir, s.bin))) return join(dir, s.bin);
  if (typeof pkg.bin === 'string') return join(dir, pkg.bin);
  if (pkg.bin && typeof pkg.bin === 'object') {
    const bins = Object.entries(pkg.bin);
    const chosen = s.bin ? bins.find(([k]) => k === s.bin) : bins.length === 1 ? bins[0] : undefined;
    if (chosen) return join(dir, chosen[1]);
    throw new Error(`${s.slug}: ${pkgName} has several bins (${bins.map(([k]) => k).join(', ')}): name one in "bin"`);
  }
  if (pkg.main) return join(dir, pkg.main);
  throw new Error(`${s.slug}: ${pkgName} has neither bin nor main`);
}

function install(): void {
  for (const s of specs) {
    if (s.local) continue;
    const dir = packageDir(s);
    if (existsSync(join(dir, 'node_modules', s.package, 'package.json'))) continue;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
    console.log(`installing ${s.package}@${s.version ?? 'latest'} …`);
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', `${s.package}@${s.version ?? 'latest'}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (r.status !== 0) console.error(`${s.slug}: npm install failed (exit ${r.status})`);
  }
}

async function capture(s: ServerSpec): Promise<void> {
  let script: string;
  try {
    script = entry(s, s.package);
  } catch (err) {
    console.error(`${s.slug}: FAILED: not installed or no entry point (${(err as Error).message})`);
    return;
  }
  // The server's HOME and TMPDIR: removed once the server is stopped.
  const scratch = mkdtempSync(join(tmpdir(), `lf-capture-${s.slug}-`));
  const args = (s.args ?? []).map((a) => a.replaceAll('{scratch}', scratch));
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: scratch, TMPDIR: scratch, ...(s.env ?? {}) };
  for (const [k, v] of Object.entries(env)) env[k] = v.replaceAll('{scratch}', scratch);
  const client = new Client({ name: 'lookfirst-capture', version: '1' }, { capabilities: {} });
  const transport = new StdioClientTransport({ command: NODE, args: [script, ...args], env, cwd: scratch, stderr: 'ignore' });
  const timer = setTimeout(() => void transport.close(), 30_000);
  try {
    await client.connect(transport);
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const info = client.getServerVersion();
    const out = {
      slug: s.slug,
      package: s.package,
      version: JSON.parse(readFileSync(join(packageDir(s), 'node_modules', s.package, 'package.json'), 'utf8')).version,
      command: `node ${s.package}${args.length ? ` ${args.map((a) => a.replace(scratch, '<scratch>')).join(' ')}` : ''}`,
      serverInfo: { name: info?.name, version: info?.version },
      tools,
    };
    writeFileSync(join(setDir, `${s.slug}.json`), `${JSON.stringify(out, null, 2)}\n`);
    console.log(`${s.slug}: ${tools.length} tools`);
  } catch (err) {
    console.error(`${s.slug}: FAILED: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  }
}

if (process.env.LF_CAPTURE_NETNS !== '1') {
  install();
  // Capture again in a network namespace that has only loopback.
  const self = join(dirname(new URL(import.meta.url).pathname), 'capture-catalogues.ts');
  const inner = `ip link set lo up 2>/dev/null; exec "${NODE}" --import tsx "${self}" ${argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')}`;
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', inner], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, LF_CAPTURE_NETNS: '1', LF_INSTALL_DIR: installDir },
  });
  process.exit(r.status ?? 1);
} else {
  for (const s of specs) await capture(s);
}
