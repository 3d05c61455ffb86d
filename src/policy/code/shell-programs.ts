/**
 * The programs a read-only shell command may run, each with the options known to write or to run
 * something else. A program not listed here makes the command a mutation. Pure data and pure checks.
 *
 * Sources: GNU coreutils, grep, findutils, sed and diffutils manuals; ripgrep's `rg --help`; git's
 * documentation for each listed subcommand; procps `ps`, `free`, `uptime`; util-linux `column`.
 */
import type { Risk } from '../../types.js';

/** What is known of one reading program. */
interface Reader {
  /** Short option letters that write or run (`o` in `sort -o out`, also inside clusters like `-uo`). */
  short?: string;
  /** Long options that write or run (matched on the name before any `=`). */
  long?: readonly string[];
  /** A judgement of the remaining arguments, for programs whose operands can write. */
  operands?: (args: readonly string[]) => string | undefined;
}

const nothing: Reader = {};

function testOperands(args: readonly string[]): string | undefined {
  if (args.some((a) => a === '-v' || a === '-R')) return 'tests a variable by name (bash evaluates its subscript)';
  if (args.some((a) => /[[`$]/.test(a))) return 'evaluates text that bash reads as an expression';
  return undefined;
}

/** The operands of an argument list: words that are not options, and everything after `--`. */
function operandsOf(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  const before = (end < 0 ? args : args.slice(0, end)).filter((x) => !x.startsWith('-') || x === '-');
  return end < 0 ? before : [...before, ...args.slice(end + 1)];
}

/** Whether a long option as written (`--outp=x`) is an abbreviation of one of `names` (getopt accepts any unique prefix). */
function abbreviates(option: string, names: readonly string[]): string | undefined {
  const name = option.split('=')[0] as string;
  if (!name.startsWith('--') || name.length < 3) return undefined;
  return names.find((l) => l.startsWith(name));
}

/** Readers by program name. */
export const READERS: ReadonlyMap<string, Reader> = new Map<string, Reader>([
  ...'cat head tail grep egrep fgrep wc pwd echo which whoami id uname printenv ps df du free uptime stat cut tr cmp md5sum sha1sum sha256sum sha512sum basename dirname realpath readlink true false column nl tac ls jq diff cd'
    .split(' ')
    .map((p): [string, Reader] => [p, nothing]),
  ['sort', { short: 'o', long: ['--output', '--compress-program'] }],
  ['uniq', { operands: (a) => (operandsOf(a).length >= 2 ? 'writes its second file operand' : undefined) }],
  ['tree', { short: 'oR', long: ['--output'] }],
  // printf -v assigns (and evaluates a subscript: `printf -v 'a[$(cmd)]'`).
  ['printf', { short: 'v' }],
  // test -v / -R name a variable, and arithmetic operands evaluate subscripts: `test -v 'a[$(cmd)]'`.
  ['test', { operands: testOperands }],
  ['[', { operands: testOperands }],
  ['file', { short: 'C', long: ['--compile'] }],
  ['rg', { long: ['--pre', '--pre-glob', '--hostname-bin'] }],
  ['date', { short: 's', long: ['--set'], operands: (a) => (operandsOf(a).some((x) => !x.startsWith('+')) ? 'sets the clock' : undefined) }],
  ['hostname', { short: 'Fb', long: ['--file', '--boot'], operands: (a) => (operandsOf(a).length > 0 ? 'sets the host name' : undefined) }],
]);

/** Git subcommands that read, and the options that make them write or run a program. */
const GIT_READ = new Set(['status', 'log', 'diff', 'show', 'blame', 'ls-files', 'rev-parse', 'describe', 'shortlog', 'ls-tree', 'cat-file', 'grep']);
const GIT_WRITING_LONG = ['--output', '--ext-diff', '--textconv', '--open-files-in-pager', '--exec', '--upload-pack', '--receive-pack', '--filters'];
/** Git's global options that make any subcommand run a program or read another repository's config. */
const GIT_CONFIGURING = /^(-c|-C|--config-env|--exec-path|--git-dir|--work-tree|--namespace|--super-prefix)(=|$)|^-[cC]./;

/** Programs that destroy: a command that runs one is high risk (others are medium). */
const DESTRUCTIVE_PROGRAMS = new Set(
  'rm rmdir unlink shred dd mkfs fdisk parted wipefs truncate kill pkill killall shutdown reboot halt poweroff sudo su doas chmod chown userdel iptables curl wget ssh scp eval exec source . xargs'.split(
    ' ',
  ),
);

/**
 * Why an argv does not only read, or undefined when it does. `argv[0]` is the program (a bare name;
 * a path names another program than the one of that name on PATH and is not a known reader).
 */
export function judgeArgv(argv: readonly string[], glob = false): { risk: Risk; why: string } | undefined {
  const program = argv[0] ?? '';
  const args = argv.slice(1);
  const base = program.split('/').pop() ?? program;
  const risky = (why: string): { risk: Risk; why: string } => ({ risk: DESTRUCTIVE_PROGRAMS.has(base) ? 'high' : 'medium', why });
  // A glob can match a file named like an option (`-o…`): only programs without a writing option take one.
  if (glob && (!READERS.has(program) || READERS.get(program) !== nothing))
    return risky(`runs ${program.slice(0, 60)} with a glob, whose matches can be options that write`);
  if (program === 'git') return judgeGit(args);
  if (program === 'find') return judgeFind(args);
  if (program === 'sed') return judgeSed(args);
  if (program === 'xargs') return judgeXargs(args);
  const reader = READERS.get(program);
  if (!reader) return risky(`runs ${program.slice(0, 60) || 'an empty program name'}, not a known reader`);
  const options = args.filter((a) => a.startsWith('-') && a !== '-' && a !== '--');
  for (const o of options) {
    if (o.startsWith('--')) {
      const long = abbreviates(o, reader.long ?? []);
      if (long) return risky(`runs ${program} ${o.split('=')[0]?.slice(0, 40)} (${long}), which writes or runs a program`);
    } else if (reader.short && [...o.slice(1)].some((c) => reader.short?.includes(c))) return risky(`runs ${program} ${o}, which writes`);
  }
  const operandWhy = reader.operands?.(args);
  if (operandWhy) return risky(`runs ${program}, which ${operandWhy}`);
  return undefined;
}

function judgeGit(args: readonly string[]): { risk: Risk; why: string } | undefined {
  let i = 0;
  while (i < args.length && (args[i] as string).startsWith('-')) {
    if (GIT_CONFIGURING.test(args[i] as string)) return { risk: 'medium', why: `runs git ${args[i]}, which can make git run a program` };
    i++;
  }
  const sub = args[i] ?? '';
  if (!GIT_READ.has(sub))
    return {
      risk: /^(push|reset|clean|rm|branch|tag|checkout|rebase|gc|prune|filter-branch)$/.test(sub) ? 'high' : 'medium',
      why: `runs git ${sub.slice(0, 40)}`.trim(),
    };
  const bad = args.slice(i + 1).find((a) => abbreviates(a, GIT_WRITING_LONG) !== undefined || /^-O/.test(a));
  if (bad) return { risk: 'medium', why: `runs git ${sub} ${bad.split('=')[0]?.slice(0, 40)}, which writes or runs a program` };
  return undefined;
}

/** find: `-delete` and `-fprint*` write; `-exec`, `-execdir`, `-ok`, `-okdir` run a command, judged as one. */
function judgeFind(args: readonly string[]): { risk: Risk; why: string } | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-delete' || a.startsWith('-fprint') || a === '-fls') return { risk: 'high', why: `runs find ${a}, which writes` };
    if (a === '-exec' || a === '-execdir' || a === '-ok' || a === '-okdir') {
      let end = i + 1;
      while (end < args.length && args[end] !== ';' && !(args[end] === '+' && args[end - 1] === '{}')) end++;
      const inner = judgeArgv(args.slice(i + 1, end));
      if (inner) return { risk: inner.risk, why: `runs find ${a} that ${inner.why}` };
      i = end;
    }
  }
  return undefined;
}

/** xargs adds its input as arguments, which can be options: only programs without any writing option. */
function judgeXargs(args: readonly string[]): { risk: Risk; why: string } | undefined {
  let i = 0;
  while (i < args.length && (args[i] as string).startsWith('-')) {
    const a = args[i] as string;
    if (/^-(0|r|t|x|-null|-no-run-if-empty|-verbose|-exit)$/.test(a)) i++;
    else if (/^-(n|L|P|s|d|I|E)$/.test(a)) i += 2;
    else if (/^-(n|L|P|s|d|I|E)./.test(a) || /^--(max-args|max-lines|max-procs|max-chars|delimiter|replace)=/.test(a)) i++;
    else return { risk: 'high', why: `runs xargs ${a.slice(0, 20)}` };
  }
  const argv = args.slice(i);
  const program = argv[0] ?? 'echo';
  const reader = READERS.get(program);
  if (!reader || reader.short || reader.long || reader.operands)
    return { risk: 'high', why: `runs xargs ${program.slice(0, 40)}: its input can add options that write` };
  return judgeArgv(argv.length ? argv : ['echo']);
}

/** sed reads only without -i and with scripts of print, delete, quit, line numbers, and s/// without w or e. */
function judgeSed(args: readonly string[]): { risk: Risk; why: string } | undefined {
  const scripts: string[] = [];
  let positional = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-e' || a === '--expression') scripts.push(args[++i] ?? '');
    else if (a.startsWith('--expression=')) scripts.push(a.slice(13));
    else if (
      /^-[nEr]+$/.test(a) ||
      a === '--quiet' ||
      a === '--silent' ||
      a === '--regexp-extended' ||
      a === '--posix' ||
      a === '-s' ||
      a === '--separate' ||
      a === '-z' ||
      a === '-u'
    )
      continue;
    else if (a.startsWith('-')) return { risk: 'medium', why: `runs sed ${a.slice(0, 20)}` };
    else if (scripts.length === 0 && !positional) {
      scripts.push(a);
      positional = true;
    }
  }
  for (const s of scripts) {
    const why = sedScriptWrites(s);
    if (why) return { risk: 'medium', why: `runs sed with a script that ${why}` };
  }
  return undefined;
}

/** Why a sed script writes or runs (w, W, e, the s flags w and e, or a command not known), else undefined. */
function sedScriptWrites(script: string): string | undefined {
  let i = 0;
  const n = script.length;
  const skipDelimited = (d: string): boolean => {
    while (i < n && script[i] !== d) {
      if (script[i] === '\\') i++;
      if (script[i] === '\n') return false;
      i++;
    }
    if (i >= n) return false;
    i++;
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;]/.test(script[i] as string)) i++;
    if (i >= n) break;
    // Addresses: numbers, $, /re/, \cREc, first~step, ranges, and !.
    for (;;) {
      if (/[\d$~,!+]/.test(script[i] ?? '')) i++;
      else if (script[i] === '/') {
        i++;
        if (!skipDelimited('/')) return 'cannot be read';
      } else if (script[i] === '\\' && i + 1 < n) {
        const d = script[i + 1] as string;
        i += 2;
        if (!skipDelimited(d)) return 'cannot be read';
      } else if (script[i] === ' ' || script[i] === 'I' || script[i] === 'M') i++;
      else break;
    }
    const c = script[i++] ?? '';
    if (c === 's' || c === 'y') {
      const d = script[i++] ?? '';
      if (!d || /[\s\\\n]/.test(d) || !skipDelimited(d) || !skipDelimited(d)) return 'cannot be read';
      const flags = /^[gIipmM0-9]*/.exec(script.slice(i))?.[0] ?? '';
      i += flags.length;
      if (c === 's' && /^[we]/.test(script.slice(i))) return `uses the s flag ${script[i]}`;
    } else if ('pPdDqQ=nNgGhHxlzF{}'.includes(c) && c !== '') {
      while (i < n && /[ \t0-9]/.test(script[i] as string)) i++;
    } else if ('bTt:aicrR'.includes(c) && c !== '') {
      while (i < n && script[i] !== '\n' && !(('bTt:'.includes(c) || 'rR'.includes(c)) && script[i] === ';' && c !== 'r' && c !== 'R')) i++;
    } else return c === 'w' || c === 'W' ? 'writes a file' : c === 'e' ? 'runs a command' : `uses the command ${c.slice(0, 5)}`;
  }
  return undefined;
}
