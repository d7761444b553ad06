import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { toolContentHash, toolInputSchema } from './tool.ts';
import {
  buildCatalogTools,
  validatePluginMetadata,
  type CatalogToolsResult,
  type DiscoveredTool,
  type PluginMetadata,
} from './plugin-metadata.ts';
import { validatePid } from './pid.ts';

/** `buildCatalogTools` fed from a validated `quiver.json`, as the installer feeds it. */
function catalogToolsFromMetadata(
  metadata: PluginMetadata,
  discovered: readonly DiscoveredTool[],
  options: { pluginName?: string } = {},
): CatalogToolsResult {
  const pluginName = options.pluginName ?? metadata.name ?? '(unnamed)';
  return buildCatalogTools({
    pluginName,
    discovered,
    ...(metadata.manifest === undefined ? {} : { manifest: metadata.manifest }),
    ...(metadata.intelligence === undefined ? {} : { intelligence: metadata.intelligence }),
    ...(metadata.categories === undefined ? {} : { categories: metadata.categories }),
    ...(metadata.description === undefined ? {} : { description: metadata.description }),
  });
}

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/manifests/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

/** What `tools/list` of the weather server returns. */
const discovered: DiscoveredTool[] = [
  {
    name: 'get_current_weather',
    description: 'Current conditions for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    annotations: { readOnlyHint: true, title: 'Current weather' },
  },
  {
    name: 'get_weather_forecast',
    inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
  },
  { name: 'ping', description: 'Health check.', inputSchema: { type: 'object' } },
];
const registeredTools = discovered.map((tool) => tool.name);

const validWeather = (): PluginMetadata => {
  const result = validatePluginMetadata(fixture('weather-quiver.json'), { registeredTools });
  assert.deepEqual(result.errors, []);
  assert.ok(result.metadata);
  return result.metadata;
};

describe('validatePluginMetadata', () => {
  it('validates a realistic quiver.json of a Python plugin', () => {
    const result = validatePluginMetadata(fixture('weather-quiver.json'), { registeredTools });
    assert.equal(result.valid, true, result.errors.join('\n'));
    // the only warning: the example's own qualified name, normalised
    assert.equal(result.warnings.length, 1, result.warnings.join('\n'));
    assert.match(result.warnings[0] ?? '', /qualified name 'weather__get_weather_forecast'/);
    const metadata = result.metadata!;
    assert.deepEqual(metadata.launch, {
      command: 'uvx',
      args: ['open-meteo-mcp', '--units', 'metric'],
      env: ['OPEN_METEO_KEY'],
      transport: 'stdio',
    });
    assert.equal(metadata.credentials?.[0]?.as, 'env');
    assert.equal(metadata.credentials?.[0]?.required, false);
    assert.equal(metadata.pageMappings?.[1]?.priority, 0);
    assert.equal(metadata.manifest?.visibility, 'on-demand');
    assert.equal(metadata.manifest?.examples?.[1]?.tool, 'get_weather_forecast');
    assert.equal((metadata.intelligence?.tools?.[0] as Record<string, unknown>)['cacheable'], true);
  });

  it('accepts an empty file and any launch command, not only node', () => {
    assert.equal(validatePluginMetadata({}).valid, true);
    for (const launch of [
      { command: 'python', args: ['-m', 'server'] },
      { command: 'docker', args: ['run', '-i', '--rm', 'mcp/fetch'] },
      { command: './bin/server', cwd: 'dist' },
      { transport: 'http', url: 'https://mcp.example.com/mcp' },
      { transport: 'http', command: 'deno', args: ['run', 'server.ts'], url: 'http://127.0.0.1:8808/mcp' },
    ]) {
      const result = validatePluginMetadata({ launch });
      assert.equal(result.valid, true, `${JSON.stringify(launch)}: ${result.errors.join('; ')}`);
    }
  });

  it('accepts the example in docs/metadata.md without warnings', () => {
    const doc = readFileSync(new URL('../../docs/metadata.md', import.meta.url), 'utf8');
    const block = /## Example\s+```json\n([\s\S]*?)\n```/.exec(doc)?.[1];
    assert.ok(block, 'docs/metadata.md has a json example');
    const result = validatePluginMetadata(JSON.parse(block) as unknown, { registeredTools: ['get_weather_forecast'] });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
  });

  it('rejects a non-object', () => {
    assert.deepEqual(validatePluginMetadata([]).errors, ['quiver.json must be a JSON object.']);
  });

  it('requires command for stdio and url for http', () => {
    assert.deepEqual(validatePluginMetadata({ launch: { args: ['x'] } }).errors, [
      "quiver.json field 'launch.command': is required when transport is 'stdio'.",
    ]);
    assert.deepEqual(validatePluginMetadata({ launch: { transport: 'http' } }).errors, [
      "quiver.json field 'launch.url': is required when transport is 'http'.",
    ]);
    assert.match(validatePluginMetadata({ launch: { transport: 'http', url: 'file:///etc/passwd' } }).errors[0] ?? '', /launch\.url/);
  });

  it('rejects unknown launch keys and a cwd outside the plugin folder', () => {
    const result = validatePluginMetadata({ launch: { command: 'python', arguments: ['x'], cwd: '../elsewhere' } });
    assert.equal(result.valid, false);
    assert.equal(result.errors.length, 2, result.errors.join('\n'));
    assert.match(result.errors.join('\n'), /field 'launch': Unrecognized key: "arguments"/);
    assert.match(result.errors.join('\n'), /field 'launch\.cwd': must not leave the plugin folder/);
    for (const cwd of ['/abs', 'C:\\x', 'a/../..']) assert.equal(validatePluginMetadata({ launch: { command: 'x', cwd } }).valid, false, cwd);
  });

  it('checks credentials: names, header pairing, duplicates', () => {
    const result = validatePluginMetadata({
      credentials: [
        { name: 'API-KEY' },
        { name: 'TOKEN', as: 'header' },
        { name: 'PLAIN', header: 'X-Plain' },
        { name: 'DUP' },
        { name: 'DUP', as: 'header', header: 'Authorization' },
      ],
    });
    assert.equal(result.valid, false);
    assert.deepEqual(
      result.errors.map((error) => /field '([^']+)'/.exec(error)?.[1]),
      ['credentials.0.name', 'credentials.1.header', 'credentials.2.header', 'credentials.4.name'],
    );
  });

  it('warns on env names that are not declared credentials and header credentials over stdio', () => {
    const result = validatePluginMetadata({
      launch: { command: 'python', env: ['API_KEY', 'HOME'], url: 'http://x.test/mcp' },
      credentials: [{ name: 'API_KEY' }, { name: 'TOKEN', as: 'header', header: 'Authorization' }],
    });
    assert.equal(result.valid, true, result.errors.join('\n'));
    assert.deepEqual(result.warnings, [
      "quiver.json field 'launch.env.1': 'HOME' is not a declared credential; declare it under credentials so the hub can ask for it.",
      "quiver.json field 'launch.url' is only used with transport 'http'; it is ignored.",
      "quiver.json declares header credentials but launch.transport is 'stdio'; headers are only sent over http.",
    ]);
  });

  it('checks categories and page mappings', () => {
    const result = validatePluginMetadata(
      {
        categories: [
          { name: 'now', tools: ['get_current_weather', 'gone'] },
          { name: 'forecast', parent: 'weather-root', tools: ['get_current_weather'] },
          { name: 'now' },
        ],
        pageMappings: [{ pagePattern: '/travel/*', category: 'forecast' }, { pagePattern: '*x*', category: 'global-one' }],
      },
      { registeredTools },
    );
    assert.deepEqual(result.errors, ["quiver.json field 'categories.2.name': duplicate category 'now' (first declared at categories.0)."]);
    assert.deepEqual(result.warnings, [
      "quiver.json category 'now' lists tool 'gone', which the plugin does not register.",
      "quiver.json field 'categories.1.parent': 'weather-root' is not declared here; it must exist as a global category.",
      "quiver.json puts tool 'get_current_weather' in categories 'now' and 'forecast'; the first is used.",
      "quiver.json field 'pageMappings.1.category': 'global-one' is not declared here; it must exist as a global category.",
    ]);
  });

  it('reports unknown top-level fields as warnings, and an invalid name as an error', () => {
    const unknown = validatePluginMetadata({ name: 'weather', homepage: 'https://x.test' });
    assert.equal(unknown.valid, true);
    assert.deepEqual(unknown.warnings, ["quiver.json has unknown field 'homepage'; it is ignored."]);
    const bad = validatePluginMetadata({ name: 'Weather__Pro' });
    assert.equal(bad.valid, false);
    assert.match(bad.errors[0] ?? '', /^quiver\.json field 'name'/);
  });

  it('collects manifest, PID and file errors together', () => {
    const document = fixture('weather-quiver.json');
    document['launch'] = { transport: 'carrier-pigeon' };
    (document['manifest'] as Record<string, unknown>)['summary'] = '';
    (document['manifest'] as Record<string, unknown>)['examples'] = [{ user: 'x', tool: 'nope' }];
    (document['intelligence'] as Record<string, unknown>)['tools'] = [{ name: 'a__b' }];
    const result = validatePluginMetadata(document, { registeredTools });
    assert.equal(result.valid, false);
    const errors = result.errors.join('\n');
    assert.match(errors, /quiver\.json field 'launch\.transport'/);
    assert.match(errors, /Plugin 'weather' manifest field 'summary': must not be empty/);
    assert.match(errors, /Plugin 'weather' manifest example references unknown tool 'nope'\./);
    assert.match(errors, /Plugin 'weather' PID field 'tools\.0\.name'/);
    assert.equal(result.metadata, undefined);
  });

  it('uses the installed plugin name over the file name', () => {
    const result = validatePluginMetadata(fixture('weather-quiver.json'), { pluginName: 'meteo', registeredTools });
    // the example 'weather__get_weather_forecast' now names another plugin
    assert.equal(result.valid, false);
    assert.ok(result.warnings.includes("quiver.json name 'weather' differs from the installed plugin name 'meteo'; the installed name is used."));
    assert.ok(result.warnings.includes("Plugin 'meteo' PID pluginId 'weather' differs from the plugin name 'meteo'."));
  });
});

describe('buildCatalogTools', () => {
  it('merges manifest, PID and discovery into valid catalog inputs', () => {
    const { tools, warnings } = catalogToolsFromMetadata(validWeather(), discovered);
    assert.deepEqual(warnings, []);
    assert.deepEqual(tools.map((tool) => tool.name), ['get_current_weather', 'get_weather_forecast', 'ping']);
    for (const tool of tools) assert.deepEqual(toolInputSchema.parse(tool), tool);

    const [current, forecast, ping] = tools;
    assert.ok(current && forecast && ping);
    // discovery is the truth for description, parameters and annotations
    assert.equal(current.description, 'Current conditions for a city.');
    // annotations.title stays in the annotations; it is not the tool's title (issue #24)
    assert.equal(current.displayName, undefined);
    const titled = catalogToolsFromMetadata(validWeather(), [{ ...discovered[0]!, title: 'Weather now' }, ...discovered.slice(1)]).tools[0];
    assert.equal(titled?.displayName, 'Weather now');
    assert.deepEqual(current.annotations, { readOnlyHint: true, title: 'Current weather' });
    assert.deepEqual(current.parameters, discovered[0]?.inputSchema);
    // the PID fills what discovery lacks
    assert.equal(forecast.description, 'Daily forecast for up to 16 days.');
    assert.equal(ping.description, 'Health check.');

    // plugin-level retrieval text on every tool: manifest first, then PID use cases, capabilities
    const whenToUse = [
      'Whenever asked about current weather, temperature, precipitation, or wind in any city.',
      'Any question related to forecasts (today, tomorrow, next week) for any location.',
      'Trip planning: User plans travel and asks about conditions (e.g. "Will it rain in Lisbon on Saturday?")',
      'Report current temperature, wind and precipitation for a city',
    ];
    const whenNotToUse = ['Questions about historical or long-term climate data.', 'Do not use for climate statistics over decades'];
    for (const tool of tools) {
      assert.deepEqual(tool.whenToUse, whenToUse);
      assert.deepEqual(tool.whenNotToUse, whenNotToUse);
      assert.equal(tool.summary, 'Weather lookups via Open-Meteo (no API key required).');
    }

    // tags: tool-level semantic tags first, then plugin tags and related concepts, lowercased, unique
    assert.deepEqual(forecast.tags, ['forecast', 'daily', 'weather', 'meteorology', 'open-meteo']);
    assert.deepEqual(current.tags, ['weather', 'forecast', 'meteorology', 'open-meteo']);

    // manifest examples become example queries of their own tool only (the qualified one too)
    assert.deepEqual(current.exampleQueries, ["What's the weather in Berlin?"]);
    assert.deepEqual(forecast.exampleQueries, ['Forecast for Tokyo this week.']);
    assert.deepEqual(ping.exampleQueries, []);

    // categories: declared ones first, else the manifest category
    assert.equal(current.category, 'weather-now');
    assert.equal(forecast.category, 'weather-forecast');
    assert.equal(ping.category, 'data');

    // PID tool fields that are not catalog columns land in metadata, unknown ones included
    assert.deepEqual(forecast.metadata, {
      llmNotes: 'Prefer this over get_current_weather when the question names a future day.',
      sideEffects: ['external-api'],
      examples: [{ input: { city: 'Tokyo', days: 3 }, output: { days: [{ max: 21 }] } }],
      cacheable: true,
      fewShotExamples: [{ user: 'Forecast for Tokyo this week.', args: { city: 'Tokyo', days: 7 } }],
      pluginTitle: 'Weather',
      stability: 'beta',
    });
    assert.deepEqual(current.metadata, {
      fewShotExamples: [{ user: "What's the weather in Berlin?", thought: 'Direct lookup.', args: { city: 'Berlin' } }],
      pluginTitle: 'Weather',
      stability: 'beta',
    });
  });

  it('is deterministic: equal inputs give equal outputs and equal content hashes', () => {
    const first = catalogToolsFromMetadata(validWeather(), discovered);
    const second = catalogToolsFromMetadata(validWeather(), structuredClone(discovered));
    assert.deepEqual(first, second);
    assert.deepEqual(first.tools.map(toolContentHash), second.tools.map(toolContentHash));
  });

  it('works from discovery alone, with the plugin description as summary', () => {
    const { tools, warnings } = buildCatalogTools({ pluginName: 'weather', discovered, description: 'A weather server.' });
    assert.deepEqual(warnings, ["Plugin 'weather' tool 'get_weather_forecast' has no description."]);
    assert.equal(tools.length, 3);
    assert.equal(tools[1]?.description, '');
    assert.equal(tools[0]?.summary, 'A weather server.');
    assert.deepEqual(tools[0]?.whenToUse, []);
    assert.equal(tools[0]?.category, undefined);
  });

  it('keeps the MCP fields the catalog has no column for as discovered (issue #12), and a PID cannot fake them', () => {
    const icons = [{ src: 'https://example.com/i.png', sizes: ['16x16'] }];
    const pid = validatePid({ version: '1', pluginId: 'weather', semantic: { capabilities: ['c'] }, tools: [{ name: 'rich', description: 'x', mcpFields: { icons: [] } }, { name: 'bare', description: 'y', mcpFields: { _meta: { fake: true } } }] });
    const { tools } = buildCatalogTools({
      pluginName: 'weather',
      discovered: [
        { name: 'rich', description: 'Rich.', inputSchema: { type: 'object' }, outputSchema: { type: 'object' }, icons, execution: { taskSupport: 'optional' }, _meta: { 'example.com/k': 1 } },
        { name: 'bare', description: 'Bare.', inputSchema: { type: 'object' } },
      ],
      intelligence: pid.pid!,
    });
    assert.deepEqual(tools[0]?.metadata['mcpFields'], { icons, execution: { taskSupport: 'optional' }, _meta: { 'example.com/k': 1 } });
    assert.deepEqual(tools[0]?.returnSchema, { type: 'object' });
    assert.equal('mcpFields' in tools[1]!.metadata, false, 'what the server does not serve is not invented');
  });

  it('reports PID definitions and examples for tools discovery did not find, and stale schemas', () => {
    const pid = validatePid({
      version: '1',
      pluginId: 'weather',
      semantic: { capabilities: ['c'] },
      tools: [
        { name: 'ghost', description: 'x' },
        { name: 'ping', description: 'Ping.', inputSchema: { type: 'object', properties: { verbose: { type: 'boolean' } } } },
      ],
    });
    const { tools, warnings } = buildCatalogTools({
      pluginName: 'weather',
      discovered,
      manifest: { title: 'W', summary: 'S', visibility: 'on-demand', examples: [{ user: 'q', tool: 'vanished' }, { user: 'r', tool: 'other__x' }] },
      intelligence: pid.pid!,
    });
    assert.equal(tools.length, 3);
    assert.deepEqual(warnings, [
      "Plugin 'weather' PID describes tool 'ghost', which discovery did not find; the definition is ignored.",
      "Plugin 'weather' manifest example references unknown tool 'vanished'; the example is ignored.",
      "Plugin 'weather' manifest example references unknown tool 'other__x'; the example is ignored.",
      "Plugin 'weather' tool 'get_weather_forecast' has no description.",
      "Plugin 'weather' PID inputSchema of tool 'ping' differs from the discovered one; the discovered schema is used.",
    ]);
    assert.deepEqual(tools[2]?.parameters, { type: 'object' });
  });

  it('skips tools the catalog cannot hold and duplicates from discovery', () => {
    const { tools, warnings } = buildCatalogTools({
      pluginName: 'weather',
      discovered: [
        { name: 'a', description: 'A', inputSchema: { type: 'object' } },
        { name: 'bad__name', description: 'B', inputSchema: { type: 'object' } },
        { name: 'a', description: 'again', inputSchema: { type: 'object' } },
      ],
    });
    assert.deepEqual(tools.map((tool) => tool.description), ['A']);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0] ?? '', /tool 'bad__name' cannot be catalogued \(name: tool names must not contain the separator/);
    assert.equal(warnings[1], "Plugin 'weather' discovery reported tool 'a' twice; the first is used.");
  });

  it('dedupes retrieval text and bounds it to the catalog limits', () => {
    const capabilities = Array.from({ length: 120 }, (_, i) => `capability ${i}`);
    const { tools, warnings } = buildCatalogTools({
      pluginName: 'weather',
      discovered: [{ name: 'a', description: 'A', inputSchema: { type: 'object' } }],
      manifest: { title: 'W', summary: 's'.repeat(1_500), visibility: 'on-demand', whenToUse: ['Capability 0', 'x'.repeat(3_000)], tags: ['Rain', 'rain', ' RAIN '] },
      intelligence: { version: '1', pluginId: 'weather', semantic: { capabilities, relatedConcepts: ['a concept far too long '.repeat(10)] } },
    });
    const tool = tools[0]!;
    assert.equal(tool.whenToUse.length, 100);
    assert.equal(tool.whenToUse[0], 'Capability 0');
    assert.equal(tool.whenToUse[1]?.length, 2_000);
    assert.ok(!tool.whenToUse.includes('capability 0'));
    assert.equal(tool.summary?.length, 1_000);
    assert.deepEqual(tool.tags, ['rain']);
    assert.deepEqual(warnings, [
      "Plugin 'weather' has 121 whenToUse (manifest whenToUse, PID useCases and capabilities) entries; the catalog keeps the first 100.",
    ]);
  });
});
