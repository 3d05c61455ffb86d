/**
 * JSON paths for read-back rules: dots between keys and `[i]` for array items, e.g. `content[0].text`,
 * `items[2].id`, `a.b`. A key may hold any character but `.`, `[` and `]`. Pure.
 */

/** One step of a path: an object key or an array index. */
export type PathStep = { key: string } | { index: number };

/**
 * Parses a path.
 * @throws Error naming the position when the path is malformed (empty key, unclosed bracket, bad index).
 */
export function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`path "${path}" at character ${i + 1}: ${why}`);
  };
  if (path.length === 0) fail('empty path');
  while (i < path.length) {
    if (path[i] === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) fail('"[" without "]"');
      const text = path.slice(i + 1, close);
      if (!/^(0|[1-9][0-9]*)$/.test(text)) fail(`"${text}" is not an array index`);
      steps.push({ index: Number(text) });
      i = close + 1;
      if (i < path.length && path[i] !== '.' && path[i] !== '[') fail('expected "." or "[" after "]"');
      if (path[i] === '.') i++;
      if (i === path.length && path.endsWith('.')) fail('path ends with "."');
      continue;
    }
    let end = i;
    while (end < path.length && path[end] !== '.' && path[end] !== '[') end++;
    const key = path.slice(i, end);
    if (key.length === 0) fail('empty key');
    if (key.includes(']')) fail('"]" without "["');
    steps.push({ key });
    i = end;
    if (path[i] === '.') {
      i++;
      if (i === path.length) fail('path ends with "."');
    }
  }
  return steps;
}

/** The value at a path, or `{ found: false }` when any step is missing or of the wrong kind. */
export function valueAt(root: unknown, steps: readonly PathStep[]): { found: true; value: unknown } | { found: false; at: string } {
  let v = root;
  let walked = '';
  for (const step of steps) {
    if ('index' in step) {
      walked += `[${step.index}]`;
      if (!Array.isArray(v) || step.index >= v.length) return { found: false, at: walked };
      v = v[step.index];
    } else {
      walked += walked ? `.${step.key}` : step.key;
      if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, step.key)) return { found: false, at: walked };
      v = (v as Record<string, unknown>)[step.key];
    }
  }
  return { found: true, value: v };
}
