/**
 * Shell commands in arguments, judged on the syntax tree of a real shell parser (mvdan/sh, as the npm
 * package mvdan-sh; see docs/decisions/0008-code-in-arguments.md for why not sh-syntax). Pure.
 *
 * Read-only only when every command anywhere in the tree (pipelines, lists, subshells, blocks, loops,
 * command and process substitutions) is a known reader with options known only to read
 * (shell-programs.ts), every word it runs with is plain text, and there is:
 * - no redirection to a file (`>`, `>>`, `>|`, `&>`, `<>`, `>&file`; `/dev/null` and descriptor
 *   duplication are fine);
 * - no `eval`, `exec`, `source`, function definition, `declare`/`export`/`local`, coprocess or alias;
 * - no `xargs` or `find -exec` of a program that is not such a reader;
 * - no assignment before or between commands other than locale and display settings (`PAGER=`,
 *   `GIT_*`, `LD_PRELOAD`, `PATH=` change what runs);
 * - no variable, substitution or ANSI-C quoting in any word a command runs with: a value unknown
 *   until run time can be a program or an option that writes.
 */
import mvdan, { type ShNode } from 'mvdan-sh';
import type { Risk } from '../../types.js';
import { RANK } from '../rank.js';
import { judgeArgv } from './shell-programs.js';
import type { CodeJudgement } from './verdict.js';

const { syntax } = mvdan;
const parser = syntax.NewParser(syntax.Variant(syntax.LangBash));

/** Longest command read (characters): the parser and the walk take about 0.1 ms per 10 characters, on the gate's thread. */
export const MAX_SHELL_CHARS = 8_000;

/** Redirect operators (mvdan/sh RedirOperator values) that open a file for writing: > >> <> >| &> &>>. */
const WRITE_REDIRECTS = new Set([54, 55, 57, 60, 64, 65]);
/** `>&word` and `<&word`: a descriptor copy when the word is a number or `-`, else (bash) a file. */
const DUP_REDIRECTS = new Set([58, 59]);
/** Files that writing to changes nothing. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
/** Variables an assignment may set: locale and display only. */
const HARMLESS_VARIABLES = /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|LINES|NO_COLOR|TERM)$/;
/** Nodes that define, export or start something besides a command. */
const WRITING_NODES: Record<string, string> = {
  FuncDecl: 'defines a function (a later command name may run it)',
  DeclClause: 'declares or exports a variable',
  CoprocClause: 'starts a coprocess',
};

/** A word as a command receives it, and whether bash may turn it into other words first. */
interface WordText {
  /** Quotes removed, backslash escapes applied as bash does; undefined when known only at run time. */
  text: string | undefined;
  /** Unquoted glob characters (the matched file names can be options: a file called `-o…`). */
  glob: boolean;
  /** Unquoted brace expansion (`{-o,out}` becomes two words, an option among them). */
  braces: boolean;
}

function wordText(word: ShNode): WordText {
  let out = '';
  let glob = false;
  let braces = false;
  for (const part of (word.Parts as ShNode[] | undefined) ?? []) {
    const t = syntax.NodeType(part);
    if (t === 'Lit') {
      const raw = String(part.Value);
      // Escaped characters are literal; look for expansion characters with the escapes taken out.
      const bare = raw.replace(/\\[\s\S]/g, '');
      if (/[*?[]/.test(bare)) glob = true;
      if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(bare)) braces = true;
      out += raw.replace(/\\\n/g, '').replace(/\\(.)/gs, '$1');
    } else if (t === 'SglQuoted' && !part.Dollar) out += String(part.Value);
    else if (t === 'DblQuoted' && !part.Dollar) {
      for (const inner of (part.Parts as ShNode[] | undefined) ?? []) {
        if (syntax.NodeType(inner) !== 'Lit') return { text: undefined, glob, braces };
        out += String(inner.Value)
          .replace(/\\\n/g, '')
          .replace(/\\([$`"\\])/g, '$1');
      }
    } else return { text: undefined, glob, braces };
  }
  return { text: out, glob, braces };
}

/** The text of a word, or undefined when any part of it is known only at run time (see wordText). */
function literal(word: ShNode): string | undefined {
  return wordText(word).text;
}

/** A `$NAME` or `${NAME}` with no operation (no subscript, default, slice, substitution, indirection). */
function plainParam(p: ShNode): boolean {
  return !p.Excl && !p.Length && !p.Width && !p.Index && !p.Slice && !p.Repl && !p.Exp && !((p.Names as unknown as number) > 0);
}

/** Whether a word holds only text and plain `$NAME` / `${NAME}` expansions (no subscript, default, slice or substitution). */
function plainExpansions(word: ShNode): boolean {
  const plain = (p: ShNode): boolean => {
    const t = syntax.NodeType(p);
    if (t === 'Lit' || t === 'SglQuoted') return true;
    if (t === 'DblQuoted') return ((p.Parts as ShNode[] | undefined) ?? []).every(plain);
    return t === 'ParamExp' && plainParam(p);
  };
  return ((word.Parts as ShNode[] | undefined) ?? []).every(plain);
}

/** mvdan/sh's operator numbers for `-v` and `-R` in `[[ ]]`, read off the parser itself. */
const TEST_VARIABLE_OPS = new Set(
  ['[[ -v x ]]', '[[ -R x ]]'].map((src) => {
    let op = -1;
    syntax.Walk(parser.Parse(src, 'probe'), (n) => {
      if (n && syntax.NodeType(n) === 'UnaryTest') op = Number(n.Op);
      return true;
    });
    return op;
  }),
);

/**
 * `[[ ]]`, `(( ))` and `let` evaluate array subscripts in plain text (`[[ -v 'a[$(cmd)]' ]]` runs cmd),
 * and `-v`/`-R` test variables by name: any subscript, or such a test, is not proven to read.
 */
function judgeEvaluating(node: ShNode, raise: (risk: Risk, why: string) => void): void {
  syntax.Walk(node, (n) => {
    if (!n) return false;
    const t = syntax.NodeType(n);
    if (t === 'UnaryTest' && TEST_VARIABLE_OPS.has(Number(n.Op))) raise('medium', 'tests a variable by name (bash evaluates its subscript)');
    if ((t === 'Lit' || t === 'SglQuoted') && /[[`$]/.test(String(n.Value)))
      raise('medium', 'evaluates text that bash reads as an expression (an array subscript can run a command)');
    // `$'\x5b…'` decodes to a subscript only at run time, and a variable's value is evaluated too.
    if ((t === 'SglQuoted' || t === 'DblQuoted') && n.Dollar) raise('medium', 'evaluates text decoded at run time as an expression');
    if (t === 'ParamExp' || t === 'CmdSubst' || t === 'ProcSubst') raise('medium', 'evaluates a value known only at run time as an expression');
    return true;
  });
}

/** Judges a shell command (bash syntax). */
export function judgeShell(text: string): CodeJudgement {
  if (text.length > MAX_SHELL_CHARS) return { kind: 'write', risk: 'medium', why: `a command longer than ${MAX_SHELL_CHARS} characters is not read` };
  let file: ShNode;
  try {
    file = parser.Parse(text, 'command');
  } catch (e) {
    const message = (e as { Text?: unknown; message?: unknown })?.Text ?? (e as { message?: unknown })?.message ?? 'a syntax error';
    return { kind: 'unparsed', why: `shell: ${String(message).slice(0, 120)}` };
  }
  let worst: { risk: Risk; why: string } | undefined;
  let changedDir = false;
  let ranGit = false;
  const raise = (risk: Risk, why: string) => {
    if (!worst || RANK[risk] > RANK[worst.risk]) worst = { risk, why };
  };
  try {
    syntax.Walk(file, (node) => {
      if (!node || worst?.risk === 'high') return false;
      const type = syntax.NodeType(node);
      const writing = WRITING_NODES[type];
      if (writing) raise('medium', writing);
      else if (type === 'Redirect') judgeRedirect(node, raise);
      else if (type === 'CallExpr') {
        judgeCall(node, raise);
        const first = (node.Args as ShNode[] | undefined)?.[0];
        const program = first ? literal(first) : undefined;
        if (program === 'cd' && ((node.Args as ShNode[] | undefined)?.length ?? 0) > 1) changedDir = true;
        if (program === 'git') ranGit = true;
      } else if (type === 'TestClause' || type === 'ArithmCmd' || type === 'LetClause' || type === 'ArithmExp') judgeEvaluating(node, raise);
      else if (type === 'WordIter') {
        // A loop variable is an assignment (`for PATH in /tmp/evil`), and its value may be evaluated later.
        const name = String((node.Name as ShNode | undefined)?.Value ?? '');
        raise('medium', `sets ${name.slice(0, 40) || 'a variable'} in a loop, which can change what a later command runs or evaluates`);
      } else if (type === 'ParamExp' && !plainParam(node)) {
        raise('medium', 'expands a variable with an operation (a default that assigns, a subscript, an indirection or a prompt expansion)');
      }
      return true;
    });
  } catch {
    // The walk recurses: a command nested thousands deep overflows the stack. Not read means not read-only.
    return { kind: 'write', risk: 'medium', why: 'a command nested too deeply to read' };
  }
  // `cd dir && git …` is `git -C dir …`: that repository's own config can make git run a program.
  if (changedDir && ranGit) raise('medium', 'runs git in a directory the command names (its config can make git run a program)');
  return worst ? { kind: 'write', ...(worst as { risk: Risk; why: string }) } : { kind: 'read', language: 'shell' };
}

function judgeRedirect(node: ShNode, raise: (risk: Risk, why: string) => void): void {
  const op = Number(node.Op);
  const target = node.Word ? literal(node.Word as ShNode) : undefined;
  // bash opens a network connection for these names, whatever the direction.
  if (target !== undefined && /^\/dev\/(tcp|udp)\//.test(target)) raise('medium', 'opens a network connection (/dev/tcp, /dev/udp)');
  if (WRITE_REDIRECTS.has(op)) {
    if (target === undefined || !HARMLESS_TARGETS.has(target))
      raise('medium', `redirects output to a file (${target?.slice(0, 60) ?? 'a name known only at run time'})`);
  } else if (DUP_REDIRECTS.has(op) && (target === undefined || !/^(\d+-?|-)$/.test(target)) && !(target && HARMLESS_TARGETS.has(target))) {
    raise('medium', `redirects output to a file (${target?.slice(0, 60) ?? 'a name known only at run time'})`);
  }
}

function judgeCall(node: ShNode, raise: (risk: Risk, why: string) => void): void {
  for (const a of (node.Assigns as ShNode[] | undefined) ?? []) {
    const name = String((a.Name as ShNode | undefined)?.Value ?? '');
    if (!HARMLESS_VARIABLES.test(name)) raise('medium', `sets ${name.slice(0, 40) || 'a variable'}, which can change what a command runs`);
  }
  const argv: string[] = [];
  let glob = false;
  for (const w of (node.Args as ShNode[] | undefined) ?? []) {
    const word = wordText(w);
    if (word.braces) {
      raise('medium', 'uses brace expansion, which can turn a word into an option');
      return;
    }
    // echo takes no option that writes, so a plain variable's value cannot make it write.
    if (word.text === undefined && argv.length === 1 && argv[0] === 'echo' && plainExpansions(w)) continue;
    if (word.text === undefined) {
      const why =
        argv.length === 0
          ? 'runs a command whose name is known only at run time'
          : `runs ${argv[0]} with an argument known only at run time (a variable or substitution)`;
      raise('medium', why);
      return;
    }
    if (argv.length > 0 && word.glob) glob = true;
    argv.push(word.text);
  }
  if (argv.length === 0) return;
  // Wrappers that run the rest of the line as a command.
  while (argv.length > 1 && ['command', 'nice', 'time', 'env'].includes(argv[0] as string)) {
    const wrapper = argv.shift() as string;
    if (wrapper === 'env' || wrapper === 'nice') {
      while (argv.length > 0 && ((argv[0] as string).startsWith('-') || /^\w+=/.test(argv[0] as string))) {
        const a = argv.shift() as string;
        if (wrapper === 'env' && (a.startsWith('-') || !HARMLESS_VARIABLES.test(a.split('=')[0] as string))) {
          raise('medium', `runs env ${a.split('=')[0]?.slice(0, 40)}`);
          return;
        }
        if (wrapper === 'nice' && a === '-n') argv.shift();
      }
    } else if (wrapper === 'command' && argv[0]?.startsWith('-')) {
      raise('medium', `runs command ${argv[0]}`);
      return;
    }
  }
  const verdict = judgeArgv(argv, glob);
  if (verdict) raise(verdict.risk, verdict.why);
}
