/**
 * One writer per audit log: a lock file holding the writer's pid and start time. A second gate refuses to
 * start; a stale lock (its process gone, or its pid reused by another process) is taken over by renaming
 * it aside, so that of two gates racing for it only one wins.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { LookfirstError } from '../errors.js';

/**
 * Takes the lock or throws.
 * @throws LookfirstError `AUDIT_LOCKED` when a live gate holds it; `AUDIT_LOG_UNREADABLE` when it cannot be created.
 */
export function takeLock(lock: string, logPath: string, warn: (message: string) => void): void {
  const locked = (pid: string) =>
    new LookfirstError(
      'AUDIT_LOCKED',
      `another lookfirst (pid ${pid}) is writing ${logPath}, and a log has one writer. Stop that gate, or run this one from its own config with its own audit.log and confirm.web.port: 0, or let both clients share one gate over HTTP (lookfirst serve --transport http); see README "State, restarts and several gates".`,
    );
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createWhole(lock, `${process.pid}\n${startTicks(process.pid) ?? ''}\n`)) return;
    let seen: string;
    try {
      seen = readFileSync(lock, 'utf8');
    } catch {
      continue; // released meanwhile: try again
    }
    const [pidText = '', ticks = ''] = seen.split('\n');
    const pid = Number.parseInt(pidText, 10);
    // A live pid is the writer only if it is the same process: after a reboot or a crash the pid may
    // belong to something else (its start time, where the system tells it, says which).
    const sameProcess = ticks === '' || startTicks(pid) === undefined || startTicks(pid) === ticks;
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && sameProcess) throw locked(String(pid));
    // Take a stale lock over by renaming it aside: of two gates racing, only one rename succeeds, and a
    // gate that moved a lock someone had just taken puts it back and stands down.
    const aside = `${lock}.stale-${process.pid}`;
    try {
      renameSync(lock, aside);
    } catch {
      continue;
    }
    const moved = readFileSync(aside, 'utf8');
    if (moved !== seen) {
      try {
        linkSync(aside, lock);
      } catch {
        // A third gate took the place meanwhile: the lock is held either way.
      } finally {
        unlinkSync(aside);
      }
      throw locked(moved.split('\n')[0] ?? '?');
    }
    unlinkSync(aside);
    warn(`audit: removed the stale lock ${lock} (pid ${Number.isNaN(pid) ? '?' : pid} is gone)`);
  }
  throw new LookfirstError('AUDIT_LOCKED', `cannot take the lock ${lock}; another gate may be starting on the same log`);
}

/**
 * Creates `lock` holding `text`, whole or not at all: the text is written to a file of this process's own
 * and linked into place (link(2) fails when the name exists). A lock created empty and filled after would
 * let a gate reading it in between take it for stale, and two gates would write one log.
 * @returns false when the lock exists.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` when the lock cannot be created.
 */
function createWhole(lock: string, text: string): boolean {
  const own = `${lock}.new-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    writeFileSync(own, text, { flag: 'wx' });
    linkSync(own, lock);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `cannot create the lock ${lock}: ${(err as Error).message}`);
  } finally {
    try {
      unlinkSync(own);
    } catch {
      // Never written: nothing to remove.
    }
  }
}

/** Releases the lock (already gone is fine). */
export function releaseLock(lock: string): void {
  try {
    unlinkSync(lock);
  } catch {
    // Already gone: nothing to release.
  }
}

/** The process's start time in clock ticks since boot (Linux /proc), or undefined where unknown. */
function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
