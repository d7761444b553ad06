/**
 * A restarted process's first selections (issue #28, test/selection/token-counts.test.ts): opens
 * the store the parent synced (argv[2]: a JSON store location), runs one selection per provider
 * format and counts the visible tools' MCP definitions as a gateway session does, and prints
 * the token totals and whether the o200k tokenizer (gpt-tokenizer)
 * was loaded into this process.
 */
import { createRequire } from 'node:module';
import { openStore } from '../../src/store/open.ts';
import { createSelectionEngine } from '../../src/selection/index.ts';
import { PROVIDERS } from '../../src/selection/provider-formats.ts';
import { countJsonTokens } from '../../src/core/tokens.ts';
import { mcpDefinition } from '../../src/selection/token-counts.ts';

const location = JSON.parse(process.argv[2]!) as Parameters<typeof openStore>[0];
const { db } = await openStore(location);
const engine = createSelectionEngine({ db, listen: false });
const catalog: Record<string, number> = {};
for (const provider of PROVIDERS) {
  const result = await engine.selectTools({ query: 'look up a contact', k: 2, provider, log: false });
  catalog[provider] = result.metadata.tokens.catalog;
}
// A gateway session's figure: each visible tool's MCP definition, as the gateway builds it
// (composition/gateway-backend/visibility.ts uses the same `mcpDefinition`) and
// counts it: with the engine's stored counts when it offers them, else with the tokenizer).
const definitionTokens = engine.definitionTokens ?? ((tool) => countJsonTokens(mcpDefinition(tool)));
const { tools } = await engine.visibleTools({});
const definitions = tools.reduce((sum, tool) => sum + definitionTokens(tool), 0);
await engine.close();
await db.close();
const tokenizerLoaded = Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/gpt-tokenizer/'));
console.log(JSON.stringify({ catalog, definitions, tokenizerLoaded }));
