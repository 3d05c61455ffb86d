/**
 * Pins the library's public surface (STYLE.md "Pin what others depend on"): every name src/index.ts
 * exports (values and types, read with the TypeScript parser), and the shapes of `createGatedServer`'s
 * options and of the server it returns. The shape pins are type-level: `tsc -p tsconfig.json` compiles
 * this file, so a change to the public API fails the typecheck (and the names list fails at run time).
 * Change a pin on purpose, with the API.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import ts from 'typescript';
import { z } from 'zod';
import type {
  ArgsOf,
  createGatedServer,
  GatedConfirmOptions,
  GatedRule,
  GatedServer,
  GatedServerOptions,
  GatedStoreOptions,
  ReadbackAnswer,
  ToolContext,
  ToolSpec,
  WriteToolSpec,
} from '../src/index.js';
import * as api from '../src/index.js';
import { ROOT } from './helpers.js';

// ── Type-level pins (checked by tsc) ────────────────────────────────────────────────────────────────
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when `T` is `true`. */
function pin<T extends true>(_?: T): void {}

pin<Equal<Parameters<typeof createGatedServer>, [options: GatedServerOptions]>>();
pin<Equal<ReturnType<typeof createGatedServer>, Promise<GatedServer>>>();
pin<Equal<keyof GatedServerOptions, 'name' | 'version' | 'audit' | 'store' | 'confirm' | 'rules' | 'log'>>();
pin<Equal<GatedServerOptions['name'], string>>();
pin<Equal<GatedServerOptions['version'], string>>();
pin<Equal<GatedServerOptions['audit'], { log: string; key: string; receipts?: string; reads?: boolean }>>();
pin<Equal<GatedServerOptions['rules'], Record<string, GatedRule> | undefined>>();
pin<Equal<GatedServerOptions['log'], ((line: string) => void) | undefined>>();
pin<Equal<GatedServerOptions['store'], GatedStoreOptions | undefined>>();
pin<Equal<GatedServerOptions['confirm'], GatedConfirmOptions | undefined>>();
// The lookfirst.yaml sections, as the library takes them.
pin<
  Equal<keyof GatedConfirmOptions, 'timeout_seconds' | 'elicitation' | 'terminal' | 'hold_seconds' | 'progress_seconds' | 'web' | 'webhook' | 'mode' | 'device'>
>();
pin<Equal<keyof GatedRule, 'action' | 'readback' | 'risk'>>();
pin<Equal<GatedRule['action'], 'allow' | 'confirm' | 'deny'>>();
pin<Equal<keyof GatedStoreOptions, 'kind' | 'path' | 'url'>>();

pin<Equal<keyof GatedServer, 'read' | 'write' | 'connect' | 'close' | 'tools'>>();
pin<Equal<GatedServer['connect'], (transport: Transport) => Promise<void>>>();
pin<Equal<GatedServer['close'], () => Promise<void>>>();
pin<Equal<GatedServer['tools'], readonly string[]>>();

pin<Equal<keyof ToolSpec, 'description' | 'title' | 'inputSchema'>>();
pin<Equal<keyof WriteToolSpec, 'description' | 'title' | 'inputSchema' | 'risk' | 'preview' | 'readback'>>();
pin<Equal<ReturnType<WriteToolSpec['risk']>, 'low' | 'medium' | 'high'>>();
pin<Equal<ReturnType<WriteToolSpec['preview']>, string>>();
pin<Equal<Parameters<NonNullable<WriteToolSpec['readback']>>[1], CallToolResult>>();
pin<Equal<ReadbackAnswer, 'ok' | 'failed' | 'unclear' | { outcome: 'ok' | 'failed' | 'unclear'; detail?: string }>>();
pin<Equal<keyof ToolContext, 'signal'>>();
// A zod shape types the arguments of the handler and of risk, preview and readback alike.
pin<Equal<ArgsOf<{ amount: z.ZodNumber; note: z.ZodOptional<z.ZodString> }>, { amount: number; note?: string | undefined }>>();
pin<Equal<ArgsOf<{ type: 'object'; properties: { a: { type: 'string' } } }>, Record<string, unknown>>>();

/** Never called: compiles only while registration infers the arguments from the schema. */
export function registrationCompiles(gated: GatedServer): void {
  gated.read('get_balance', { inputSchema: { account: z.string() } }, async ({ account }) => account.toUpperCase());
  gated.write(
    'transfer',
    {
      inputSchema: { amount: z.number() },
      risk: ({ amount }) => (amount > 1000 ? 'high' : 'low'),
      preview: ({ amount }) => `Send ${amount.toFixed(2)} EUR`,
      readback: async ({ amount }, result) => (result.isError || amount < 0 ? 'failed' : { outcome: 'ok', detail: 'moved' }),
    },
    async ({ amount }, { signal }) => (signal.aborted ? 0 : amount),
  );
}

// ── Run-time pins ───────────────────────────────────────────────────────────────────────────────────
/** Every name src/index.ts exports, values and types, from its source. */
function exportedNames(): string[] {
  const file = join(ROOT, 'src/index.ts');
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const names: string[] = [];
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) for (const e of st.exportClause.elements) names.push(e.name.text);
    else if (ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
      throw new Error('src/index.ts has explicit named exports only (STYLE.md)');
  }
  return names.sort();
}

describe('the public API of lookfirst (src/index.ts)', () => {
  it('exports exactly these names', () => {
    assert.deepEqual(exportedNames(), [
      'Action',
      'Approval',
      'ArgsOf',
      'AuditEntry',
      'AuditEvent',
      'AuditFields',
      'Config',
      'ConfigError',
      'ConfigProblem',
      'Decision',
      'ENTRY_VERSION',
      'ErrorCode',
      'GENESIS_PREV',
      'GatedConfirmOptions',
      'GatedRule',
      'GatedServer',
      'GatedServerOptions',
      'GatedStoreOptions',
      'HeadInput',
      'InputSchema',
      'JsonSchemaObject',
      'LookfirstError',
      'Policy',
      'Problem',
      'ProblemKind',
      'ReadbackAnswer',
      'ToolAnnotations',
      'ToolCall',
      'ToolContext',
      'ToolHandler',
      'ToolRule',
      'ToolSpec',
      'UpstreamConfig',
      'Verdict',
      'VerifyReport',
      'WriteToolSpec',
      'canonicalJson',
      'compilePolicy',
      'createGatedServer',
      'decide',
      'encodeEntry',
      'globToRegExp',
      'loadConfig',
      'matchRule',
      'parseConfig',
      'sha256Hex',
      'verifyEntrySignature',
      'verifyLog',
    ]);
  });

  it('has these values at run time (the rest are types)', () => {
    assert.deepEqual(Object.keys(api).sort(), [
      'ConfigError',
      'ENTRY_VERSION',
      'GENESIS_PREV',
      'LookfirstError',
      'canonicalJson',
      'compilePolicy',
      'createGatedServer',
      'decide',
      'encodeEntry',
      'globToRegExp',
      'loadConfig',
      'matchRule',
      'parseConfig',
      'sha256Hex',
      'verifyEntrySignature',
      'verifyLog',
    ]);
    assert.equal(typeof api.createGatedServer, 'function');
    assert.equal(api.createGatedServer.length, 1);
  });

  it('refuses unknown options at run time too (a JavaScript caller has no typecheck)', async () => {
    await assert.rejects(
      api.createGatedServer({ name: 'x', version: '1', audit: { log: 'a.jsonl', key: 'a.key' }, rule: {} } as unknown as GatedServerOptions),
      /createGatedServer options: 1 problem in the config\n {2}rule: unknown option "rule"/,
    );
  });
});
