/**
 * `lookfirst pair --config F [--user U] [--name N] [--json]`: starts a pairing on the config's store and
 * shows what the phone needs: the 6-digit code (10 minutes, works once, locked after 5 wrong tries) and
 * the pairing address, also as a QR code for the terminal (decision 0018, "Pairing").
 *
 * The running gate redeems the pairing, so this command only works on a store the gate shares with it:
 * a `memory` store is refused (no running gate could see the pairing).
 */
import QRCode from 'qrcode';
import { type Config, loadConfig } from '../../config/load.js';
import { LOOPBACK } from '../../config/schema.js';
import { Pairing, pairingUrl } from '../../confirm/devices/pairing.js';
import { DeviceRegistry } from '../../confirm/devices/registry.js';
import { LookfirstError } from '../../errors.js';
import { openStore } from '../../store/open.js';
import { paint } from '../output.js';

const USER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The address phones open: `confirm.device.public_url`, else http(s)://host:port of the device listener.
 * @throws LookfirstError `USAGE` when `confirm.device` is not enabled.
 */
export function deviceBase(config: Config): string {
  const d = config.confirm.device;
  if (!d) throw new LookfirstError('USAGE', `paired devices are off in ${config.file}: set confirm.device.enabled: true, restart the gate, then pair`);
  if (d.publicUrl) return d.publicUrl;
  const host = d.host.includes(':') ? `[${d.host}]` : d.host;
  return `${d.tls ? 'https' : 'http'}://${host}:${d.port}`;
}

/**
 * Refuses a config whose store no running gate shares with this command.
 * @throws LookfirstError `USAGE` for a `memory` store.
 */
export function requireSharedStore(config: Config, what: string): void {
  if (config.store.kind !== 'memory') return;
  // The page's button pairs inside the gate, so it works on a memory store; it exists only with confirm.web.
  const button = config.confirm.web.enabled ? `, or use the approval page's "Pair a phone" button` : '';
  throw new LookfirstError(
    'USAGE',
    `the store in ${config.file} is memory, which lives inside the running gate only: ${what} from here would reach no gate. Set store to sqlite or postgres${button}`,
  );
}

/**
 * Why no phone can open the pairing address, or undefined when one may: a loopback host (only this
 * machine reaches it) or a wildcard one (not an address at all), without confirm.device.public_url.
 */
export function unreachableReason(config: Config): string | undefined {
  const d = config.confirm.device;
  if (!d || d.publicUrl) return undefined;
  const fix = "set confirm.device.public_url to the address phones reach, or confirm.device.host to this machine's LAN address with confirm.device.tls";
  if (LOOPBACK.has(d.host)) return `note: ${d.host} is this machine only: open the address on this machine, or ${fix} for a phone`;
  if (d.host === '0.0.0.0' || d.host === '::') return `note: ${d.host} is not an address a phone can open: ${fix}`;
  return undefined;
}

/**
 * The users some call can belong to: every user confirm.device.users maps a principal to, and default_user.
 * A phone paired for anyone else is shown no card.
 */
export function usersWithCalls(device: NonNullable<Config['confirm']['device']>): Set<string> {
  return new Set([device.defaultUser, ...Object.values(device.users)]);
}

/** Whether to draw the QR code: only on a terminal, and never with NO_COLOR (it is drawn with ANSI colours). */
export function showQr(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/**
 * Runs `pair`; returns the exit code: 0, or 1 when confirm.device.port is 0 without public_url (a port
 * picked at start, which no phone can know; with --json the pairing is still made, with a warning). @throws ConfigError, LookfirstError `USAGE`, StoreError.
 */
export async function pairCommand(opts: { config: string; user?: string; name?: string; json?: boolean }): Promise<number> {
  const config = loadConfig(opts.config);
  const base = deviceBase(config);
  requireSharedStore(config, 'a pairing');
  const device = config.confirm.device!;
  const portZero = `confirm.device.port is 0 in ${config.file}: the gate picks a free port at each start, so no phone can know the address to pair with. Set confirm.device.port to a fixed port (e.g. 8473), restart the gate, then pair`;
  // A person is shown an address (and QR code) that leads nowhere: refused. A program (--json) may know the
  // real port from the gate's log and needs only the id and code: it gets them, with the warning.
  if (device.port === 0 && !device.publicUrl && !opts.json) {
    process.stderr.write(`lookfirst: ${portZero}\n`);
    return 1;
  }
  const user = opts.user ?? device.defaultUser;
  if (!USER.test(user))
    throw new LookfirstError(
      'USAGE',
      `--user must be a letter or digit, then up to 63 letters, digits, ".", "_" or "-" (e.g. alice), not ${JSON.stringify(user)}`,
    );
  const noCalls = usersWithCalls(device).has(user)
    ? undefined
    : `warning: no call belongs to ${user}: confirm.device.users maps none to ${user} and default_user is ${device.defaultUser}; this phone will see no cards`;
  const unreachable = unreachableReason(config);
  const store = await openStore(config.store);
  try {
    const started = await new Pairing({ store, registry: new DeviceRegistry({ store }) }).start(user, opts.name);
    const url = pairingUrl(base, started.pairingId);
    const expires = new Date(started.expiresAtMs).toISOString();
    if (opts.json) {
      const warnings = [device.port === 0 && !device.publicUrl ? portZero : undefined, unreachable, noCalls].filter((w) => w !== undefined);
      process.stdout.write(
        `${JSON.stringify({ pairing_id: started.pairingId, code: started.code, url, expires_at: expires, user, ...(warnings.length ? { warnings } : {}) })}\n`,
      );
      return 0;
    }
    // The QR code is drawn with ANSI colours: in a pipe, a file or under NO_COLOR the address alone is printed.
    const qr = showQr(process.stdout) ? await QRCode.toString(url, { type: 'terminal', small: true }) : undefined;
    const code = `${started.code.slice(0, 3)} ${started.code.slice(3)}`;
    const lines = [
      `pairing a phone for user ${user}`,
      ...(noCalls ? [noCalls] : []),
      `code: ${paint(process.stdout, 'bold', code)}  (valid until ${expires}, works once, locked after 5 wrong tries)`,
      `open on the phone: ${url}`,
      ...(unreachable ? [unreachable] : []),
      ...(qr ? [qr] : []),
      'the gate must be running with confirm.device enabled on this store for the phone to pair',
      '',
    ];
    process.stdout.write(lines.join('\n'));
    return 0;
  } finally {
    await store.close();
  }
}
