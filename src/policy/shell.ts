/**
 * Shell commands read for the classifier: does a command change anything? Split out of classify.ts,
 * which calls it for fields that carry a command. A heuristic by design: any program that is not a known
 * reader used as a reader counts as a mutation. Pure.
 */
import type { Risk } from '../types.js';
import { RANK } from './rank.js';
import { GIT_READ, SHELL_DESTRUCTIVE, SHELL_READ } from './words.js';

/** Options of reading programs that write or run something. */
const WRITING_OPTIONS = /^(-o|--output|--pre|--pre-glob|--hostname-bin|--compress-program|--exec|-exec|--ext-diff|--run|--fix|--write|-w)(=|$)|^-o./;

/**
 * Whether a shell command changes anything: output redirected to a file, an environment assignment before
 * a command (`LD_PRELOAD=…`, `GIT_EXTERNAL_DIFF=…`), quoting too tangled to read (`\'`, `$'…'`, `#`), or
 * any program that is not a known reader used as a reader (in every segment: `;`, `&&`, `||`, `|`,
 * `$( )`, backquotes, new lines). Quotes around a program name do not hide it (`'rm' -rf ~`).
 */
export function shellVerdict(command: string): { risk: Risk; why: string } | undefined {
  if (/\\'|\$'|(^|\s)#/.test(command)) return { risk: 'medium', why: 'uses quoting or comments too tangled to read safely' };
  // Redirections are looked for outside quotes; programs are read with the quotes taken off.
  const unquoted = command.replace(/'[^']*('|$)/g, " '' ").replace(/"(?:\\.|[^"\\])*("|$)/g, ' "" ');
  for (const m of unquoted.matchAll(/>[>|]?(&?)\s*([^\s&|;<>()]*)/g)) {
    // `2>&1`, `>&2` duplicate a descriptor; `>/dev/null` discards: neither writes a file.
    if ((m[1] === '&' && /^\d*-?$/.test(m[2] ?? '')) || m[2] === '/dev/null' || (m[2] === '' && m[1] !== '&')) continue;
    return { risk: 'medium', why: 'redirects output to a file' };
  }
  const plain = command
    .replace(/['"]/g, '')
    .replace(/\d*[<>]>?&\d*-?/g, ' ')
    .replace(/\d*>>?\s*\/dev\/null/g, ' ');
  let verdict: { risk: Risk; why: string } | undefined;
  const raise = (found: { risk: Risk; why: string }) => {
    if (!verdict || RANK[found.risk] > RANK[verdict.risk]) verdict = found;
  };
  for (const segment of plain.split(/;|&&|\|\||\||\n|\$\(|`|\(|\)|&|<\(|>\(/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    if (words.length > 0 && /^\w+=/.test(words[0] as string)) raise({ risk: 'medium', why: `sets ${String(words[0]).split('=')[0]} for the command it runs` });
    while (words.length > 0 && (/^\w+=/.test(words[0] as string) || ['time', 'nice', 'nohup', 'env', 'command', 'builtin'].includes(words[0] as string)))
      words.shift();
    const program = (words[0] ?? '').split('/').pop() ?? '';
    if (!program) continue;
    const args = words.slice(1);
    if (program === 'git') {
      let i = 0;
      while (i < args.length && (args[i] as string).startsWith('-')) i += ['-C', '-c', '--git-dir', '--work-tree'].includes(args[i] as string) ? 2 : 1;
      const sub = args[i] ?? '';
      // `-c core.fsmonitor=…`, `-c core.pager=…`, `--config-env`, `--exec-path` make any subcommand run a program.
      // So does a repository the call names (`-C dir`, `--git-dir`): its own config may set them.
      const configured = args.slice(0, i).some((a) => /^(-c|--config-env|--exec-path|-C|--git-dir|--work-tree)/.test(a)) || args.includes('--textconv');
      if (!GIT_READ.has(sub) || configured || args.some((a) => WRITING_OPTIONS.test(a)))
        raise({ risk: 'medium', why: configured ? 'runs git with configuration that can run a program' : `runs git ${sub}`.trim() });
    } else if (program === 'find' && args.some((w) => w === '-delete' || w.startsWith('-exec') || w === '-ok' || w.startsWith('-fprint') || w === '-fls')) {
      raise({ risk: 'high', why: 'runs find with an action that writes or runs' });
    } else if (program === 'sed' && args.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'))) {
      raise({ risk: 'medium', why: 'edits files in place (sed -i)' });
    } else if (SHELL_DESTRUCTIVE.has(program)) raise({ risk: 'high', why: `runs ${program}` });
    else if (!SHELL_READ.has(program)) raise({ risk: 'medium', why: `runs ${program.slice(0, 40)}` });
    else if (
      args.some((a) => WRITING_OPTIONS.test(a)) ||
      ((program === 'date' || program === 'hostname') && args.some((a) => !a.startsWith('+') && !a.startsWith('-'))) ||
      (program === 'date' && args.some((a) => /^(-s|--set)/.test(a)))
    )
      raise({ risk: 'medium', why: `runs ${program} with an option that writes` });
    else if (program === 'uniq' && args.filter((a) => !a.startsWith('-')).length >= 2) raise({ risk: 'medium', why: 'runs uniq with an output file' });
  }
  return verdict;
}
