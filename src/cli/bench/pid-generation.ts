/**
 * @module cli/bench/pid-generation
 * PID generation figures (issue #14):
 * - `benchPidGeneration`: generation time per tool without an LLM — a synthetic TypeScript MCP
 *   server with N tools (zod shapes with constraints, JSDoc'd handlers) written to a temporary
 *   folder, generated from its code (zod + TypeScript sources: read, parse, convert, merge,
 *   validate) several times; the median run divided by N.
 * - `benchPidEval`: retrieval with and without generated example requests. A catalog (a
 *   `quiver eval` tools.jsonl) is run through the pipeline as MCP discovery plus LLM
 *   enrichment through the given endpoint; the generated `exampleRequests` become the eval's
 *   examples file, and the labelled queries are evaluated with and without them. Its numbers
 *   mean something only with a real model; with a local fake they check the wiring.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ToolRecord } from '../../core/tool.ts';
import { runPipeline } from '../../intelligence/pipeline.ts';
import type { ChatClient } from '../../intelligence/llm/client.ts';
import type { RetrievalDocument } from '../../retrieval/document.ts';
import { loadEvalData } from '../../retrieval/eval/load.ts';
import { reportJson, runEvaluation } from '../../retrieval/eval/run.ts';
import { openStore } from '../../store/open.ts';

/** Generation time without an LLM. */
export interface PidGenerationBench {
  tools: number;
  runs: number;
  /** Median wall time of one generation of all tools. */
  medianMs: number;
  perToolMs: number;
}

/** TypeScript source of an MCP server with `count` tools, as authors write them. */
export function syntheticServerSource(count: number): string {
  const lines = [
    "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
    "import { z } from 'zod';",
    "const server = new McpServer({ name: 'bench', version: '1.0.0' });",
  ];
  for (let i = 0; i < count; i++) {
    lines.push(
      `/**\n * Looks up record kind ${i % 17} number ${i} and returns its fields.\n * @param args.id The record's id.\n * @returns The record as JSON.\n * @example {"id": "r-${i}", "limit": 5}\n * @throws When no record has this id.\n */`,
      `async function handler${i}(args: { id: string; limit: number }) { return { content: [{ type: 'text' as const, text: args.id }] }; }`,
      `server.registerTool('tool_${i}', { description: 'Fetch record kind ${i % 17} number ${i}', inputSchema: { id: z.string().min(1).max(64).describe('Record id'), limit: z.number().int().min(1).max(100).default(10), mode: z.enum(['fast', 'full']).optional() }, annotations: { readOnlyHint: true } }, handler${i});`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Generates a synthetic server's document from its code `runs` times (after one warm-up). */
export async function benchPidGeneration(options: { tools?: number; runs?: number } = {}): Promise<PidGenerationBench> {
  const tools = options.tools ?? 200;
  const runs = options.runs ?? 5;
  const folder = await mkdtemp(join(tmpdir(), 'quiver-bench-pid-'));
  try {
    await mkdir(join(folder, 'src'));
    await writeFile(join(folder, 'src', 'index.ts'), syntheticServerSource(tools));
    const inputs = { pluginName: 'bench', codeDir: folder, discovered: undefined, author: undefined };
    const first = await runPipeline(inputs, { from: ['zod', 'ts'] });
    if (first.toolCount !== tools) throw new Error(`expected ${tools} tools, generated ${first.toolCount}`);
    const durations: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      await runPipeline(inputs, { from: ['zod', 'ts'] });
      durations.push(performance.now() - started);
    }
    durations.sort((a, b) => a - b);
    const medianMs = durations[Math.floor(durations.length / 2)]!;
    return { tools, runs, medianMs: Number(medianMs.toFixed(2)), perToolMs: Number((medianMs / tools).toFixed(3)) };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** A catalog tool as MCP discovery would have reported it, from an eval tools.jsonl line (under an MCP-safe name). */
function discoveredTool(document: RetrievalDocument, name: string): ToolRecord {
  return {
    name,
    description: document.description,
    parameters: document.parameters ?? { type: 'object', properties: {} },
    returnSchema: null,
    annotations: {},
    displayName: null,
  } as unknown as ToolRecord;
}

/** Retrieval with and without the example requests the pipeline generated. */
export async function benchPidEval(options: { client: ChatClient; tools: string; queries: string; limit?: number; examplesOut?: string }): Promise<Record<string, unknown>> {
  const data = await loadEvalData({ tools: options.tools, queries: options.queries });
  const documents = options.limit === undefined ? data.documents : data.documents.slice(0, options.limit);
  const ids = new Set(documents.map((document) => document.id));
  const queries = data.queries.filter((query) => query.items.every((item) => item.some((id) => ids.has(id))));
  // Eval ids may hold characters MCP tool names do not allow: generate under safe names, map back.
  const safeNames = documents.map((document, index) => `${document.id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 100)}_${index}`);
  const idOf = new Map(safeNames.map((name, index) => [name, documents[index]!.id]));
  const { db } = await openStore({ kind: 'memory' });
  try {
    const started = performance.now();
    const generated = await runPipeline(
      { pluginName: 'catalog', codeDir: null, discovered: documents.map((document, index) => discoveredTool(document, safeNames[index]!)), author: undefined },
      { from: ['mcp', 'llm'], llm: { client: options.client, db, now: () => new Date() } },
    );
    const generationMs = performance.now() - started;
    const examples = new Map<string, string[]>();
    for (const tool of generated.document['tools'] as Array<Record<string, unknown>>) {
      examples.set(idOf.get(String(tool['name'])) ?? String(tool['name']), Array.isArray(tool['exampleRequests']) ? (tool['exampleRequests'] as string[]) : []);
    }
    // The same examples as a `quiver eval --examples` file, to rerun the contract's CLI on them.
    if (options.examplesOut !== undefined) {
      const lines = [...examples].flatMap(([toolId, requests]) => requests.map((query) => JSON.stringify({ tool_id: toolId, query })));
      await writeFile(options.examplesOut, `${lines.join('\n')}\n`);
    }
    const without = await runEvaluation({ documents, queries });
    const withExamples = await runEvaluation({ documents: documents.map((document) => ({ ...document, exampleQueries: examples.get(document.id) ?? [] })), queries });
    return {
      tools: documents.length,
      queries: queries.length,
      model: options.client.model,
      generationMs: Number(generationMs.toFixed(1)),
      llmUsage: generated.llmUsage,
      exampleRequests: [...examples.values()].reduce((sum, list) => sum + list.length, 0),
      without: reportJson(without),
      withGeneratedExamples: reportJson(withExamples),
    };
  } finally {
    await db.close();
  }
}
