/**
 * @module cli/bench/poisoning
 * Tool-poisoning detection (issue #10): detected / total on the labelled corpus of
 * `verification/stages/security-scan/poisoning-corpus.ts`, and false alarms on tool definitions
 * nobody wrote to attack anything: the tools the real npm servers installed with Quiver serve
 * (listed by starting each over stdio; the filesystem server serves the temporary folder) and every tool of the vendored bench catalogs
 * (bench/data/seal-tools and metatool, including metatool's `description_for_model`, the text
 * ChatGPT plugins addressed to the model). Each is checked as on a hub: every tool is its own
 * plugin with the rest of its source installed beside it, so shadowing-by-name and look-alike
 * rules see thousands of other tool names. The detector's rules were tuned on these same
 * catalogs, so the false-alarm figure is a tuning-set figure, said so in the output.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createPoisoningDetector, detectToolPoisoning, type PoisoningDetector, type PoisoningFinding, type PoisoningToolInput } from '../../verification/stages/security-scan/poisoning.ts';
import { BENIGN_TOOLS, CORPUS_OTHER_TOOL_NAMES, HELD_OUT_POISONED_TOOLS, POISONED_TOOLS } from '../../verification/stages/security-scan/poisoning-corpus.ts';
import { benchDataFile, type BenchDataSet } from './bench-data.ts';

/** The real npm servers installed with Quiver (devDependencies) whose tools are checked for false alarms. */
export const REAL_SERVERS = ['@modelcontextprotocol/server-everything', '@modelcontextprotocol/server-memory', '@modelcontextprotocol/server-sequential-thinking', '@modelcontextprotocol/server-filesystem'];

/** The tools a real npm server serves, listed over stdio (the filesystem server is given the temporary folder to serve). */
export async function listServerTools(packageName: string): Promise<PoisoningToolInput[]> {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve(`${packageName}/package.json`);
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { bin?: Record<string, string> };
  const bin = Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${packageName} has no bin`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(dirname(manifestPath), bin), packageName.endsWith('server-filesystem') ? tmpdir() : 'stdio'], env: getDefaultEnvironment(), stderr: 'ignore' });
  const client = new Client({ name: 'quiver-bench-poisoning', version: '0' });
  await client.connect(transport);
  try {
    const tools: PoisoningToolInput[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}

/** Tools of one vendored catalog (JSON lines with name, description, parameters). */
export async function catalogTools(set: BenchDataSet): Promise<PoisoningToolInput[]> {
  const text = await readFile(benchDataFile(set, 'tools.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const row = JSON.parse(line) as { name: string; description?: string; description_for_model?: string; parameters?: unknown };
      const description = [row.description, row.description_for_model].filter((part) => typeof part === 'string').join('\n');
      return { name: row.name, description, inputSchema: row.parameters ?? {} };
    });
}

/** False alarms of `detect` over tools, each tool checked as its own plugin. */
function falseAlarms(label: string, tools: PoisoningToolInput[], detect: PoisoningDetector): { source: string; tools: number; flagged: number; rate: number; kinds: Record<string, number>; flaggedTools: string[] } {
  const flagged: PoisoningFinding[][] = tools.map((tool) => detect([tool])).filter((findings) => findings.length > 0);
  const kinds: Record<string, number> = {};
  for (const findings of flagged) for (const kind of new Set(findings.map((finding) => finding.kind))) kinds[kind] = (kinds[kind] ?? 0) + 1;
  return {
    source: label,
    tools: tools.length,
    flagged: flagged.length,
    rate: tools.length === 0 ? 0 : Math.round((flagged.length / tools.length) * 10_000) / 10_000,
    kinds,
    flaggedTools: flagged.slice(0, 20).map((findings) => `${findings[0]!.tool} (${findings[0]!.kind}: ${findings[0]!.field})`),
  };
}

/** Detection on the corpus and false alarms on real servers and the bench catalogs. */
export async function benchPoisoning(): Promise<unknown> {
  const detected = POISONED_TOOLS.filter((entry) =>
    detectToolPoisoning([entry.tool], { otherToolNames: CORPUS_OTHER_TOOL_NAMES }).some((finding) => finding.kind === entry.expected),
  );
  const heldOutDetected = HELD_OUT_POISONED_TOOLS.filter((entry) =>
    detectToolPoisoning([entry.tool], { otherToolNames: CORPUS_OTHER_TOOL_NAMES }).some((finding) => finding.kind === entry.expected),
  );
  const benignFlagged = BENIGN_TOOLS.filter((tool) => detectToolPoisoning([tool], { otherToolNames: CORPUS_OTHER_TOOL_NAMES }).length > 0);
  const sources = [];
  const servers = new Map<string, PoisoningToolInput[]>();
  for (const server of REAL_SERVERS) servers.set(server, await listServerTools(server));
  for (const [server, tools] of servers) {
    // As on a hub: the other real servers are the other installed plugins (shadowing, look-alikes).
    const otherToolNames = [...servers].filter(([other]) => other !== server).flatMap(([, list]) => list.map((tool) => tool.name));
    sources.push(falseAlarms(server, tools, createPoisoningDetector({ otherToolNames })));
  }
  for (const set of ['seal-tools', 'metatool'] as const) {
    // Every catalog tool is its own plugin, and all the catalog's other tools are installed beside it.
    const tools = await catalogTools(set);
    sources.push(falseAlarms(`bench/data/${set}`, tools, createPoisoningDetector({ otherToolNames: tools.map((tool) => tool.name) })));
  }
  const total = sources.reduce((sum, source) => sum + source.tools, 0);
  const flagged = sources.reduce((sum, source) => sum + source.flagged, 0);
  return {
    corpus: {
      detected: detected.length,
      total: POISONED_TOOLS.length,
      missed: POISONED_TOOLS.filter((entry) => !detected.includes(entry)).map((entry) => entry.id),
      benignFlagged: benignFlagged.length,
      benignTotal: BENIGN_TOOLS.length,
    },
    heldOut: {
      detected: heldOutDetected.length,
      total: HELD_OUT_POISONED_TOOLS.length,
      missed: HELD_OUT_POISONED_TOOLS.filter((entry) => !heldOutDetected.includes(entry)).map((entry) => entry.id),
    },
    falseAlarms: { tools: total, flagged, rate: total === 0 ? 0 : Math.round((flagged / total) * 10_000) / 10_000, sources },
    note: "rules tuned on these real servers and bench catalogs (tuning-set false-alarm rate); corpus = the detector's own regression set; heldOut = cases written after the rules and never tuned on",
  };
}
