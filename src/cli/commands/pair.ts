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
  if (config.store.kind === 'memory')
    throw new LookfirstError(
      'USAGE',
      `the store in ${config.file} is memory, which lives inside the running gate only: ${what} from here would reach no gate. Set store to sqlite or postgres, or use the approval page's "Pair a phone" button`,
    );
}

/** Runs `pair`; returns the exit code (0). @throws ConfigError, LookfirstError `USAGE`, StoreError. */
export async function pairCommand(opts: { config: string; user?: string; name?: string; json?: boolean }): Promise<number> {
  const config = loadConfig(opts.config);
  const base = deviceBase(config);
  requireSharedStore(config, 'a pairing');
  const device = config.confirm.device!;
  const user = opts.user ?? device.defaultUser;
  if (!USER.test(user))
    throw new LookfirstError(
      'USAGE',
      `--user must be a letter or digit, then up to 63 letters, digits, ".", "_" or "-" (e.g. alice), not ${JSON.stringify(user)}`,
    );
  const store = await openStore(config.store);
  try {
    const started = await new Pairing({ store, registry: new DeviceRegistry({ store }) }).start(user, opts.name);
    const url = pairingUrl(base, started.pairingId);
    const expires = new Date(started.expiresAtMs).toISOString();
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ pairing_id: started.pairingId, code: started.code, url, expires_at: expires, user })}\n`);
      return 0;
    }
    const qr = await QRCode.toString(url, { type: 'terminal', small: true });
    const code = `${started.code.slice(0, 3)} ${started.code.slice(3)}`;
    process.stdout.write(
      [
        `pairing a phone for user ${user}`,
        `code: ${paint(process.stdout, 'bold', code)}  (valid until ${expires}, works once, locked after 5 wrong tries)`,
        `open on the phone: ${url}`,
        qr,
        'the gate must be running with confirm.device enabled on this store for the phone to pair',
        '',
      ].join('\n'),
    );
    if (!device.publicUrl && (device.host === '0.0.0.0' || device.host === '::' || device.port === 0))
      process.stderr.write('lookfirst: this address is not one a phone can open: set confirm.device.public_url to the address phones reach\n');
    return 0;
  } finally {
    await store.close();
  }
}
