import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MANIFEST_CATEGORIES, exampleToolName, validateManifest, type PluginManifestDraft } from './manifest.ts';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/manifests/${name}`, import.meta.url), 'utf8')) as unknown;

const weatherTools = ['get_current_weather', 'get_weather_forecast'];
const base = (): PluginManifestDraft => ({
  title: 'Weather',
  summary: 'Weather lookups via Open-Meteo.',
  whenToUse: ['Any question about the weather in a city.'],
});
const check = (manifest: unknown, registeredTools?: string[]) =>
  validateManifest(manifest, { pluginName: 'weather', ...(registeredTools === undefined ? {} : { registeredTools }) });

describe('validateManifest: the seed 002 worked example', () => {
  it('is valid against its registered tools, with no warnings', () => {
    const result = check(fixture('weather-manifest.json'), weatherTools);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
    assert.equal(result.valid, true);
    assert.equal(result.manifest?.examples?.length, 2);
  });

  it('defaults visibility to on-demand', () => {
    const result = check(base());
    assert.equal(result.manifest?.visibility, 'on-demand');
  });

  it('accepts every seed category and rejects another', () => {
    for (const category of MANIFEST_CATEGORIES) assert.equal(check({ ...base(), category }).valid, true, category);
    const result = check({ ...base(), category: 'weather' });
    assert.equal(result.valid, false);
    assert.match(result.errors[0] ?? '', /field 'category'/);
  });
});

describe('validateManifest: hard rules', () => {
  it('rejects a non-object', () => {
    for (const value of [null, 'text', 3, []]) {
      const result = check(value);
      assert.equal(result.valid, false);
      assert.deepEqual(result.errors, ["Plugin 'weather' manifest must be a JSON object."]);
    }
  });

  it('reports schema violations with their field paths', () => {
    const result = check({
      title: 'Weather',
      summary: 'ok',
      whenToUse: ['x'],
      visibility: 'sometimes',
      stability: 'alpha',
      examples: [{ user: 'hi', tool: 'get_current_weather', args: 'Berlin' }, { tool: 'get_current_weather' }],
      tags: 'weather',
    });
    assert.equal(result.valid, false);
    const joined = result.errors.join('\n');
    for (const path of ['visibility', 'stability', 'examples.0.args', 'examples.1.user', 'tags']) {
      assert.match(joined, new RegExp(`field '${path.replace(/\./g, '\\.')}'`), path);
    }
  });

  it('requires a title', () => {
    const { title: _title, ...rest } = base();
    const result = check(rest);
    assert.equal(result.valid, false);
    assert.match(result.errors.join('\n'), /field 'title'/);
    assert.equal(check({ ...base(), title: '  ' }).valid, false);
  });

  it('requires a non-empty summary', () => {
    const empty = check({ ...base(), summary: '' });
    assert.equal(empty.valid, false);
    assert.deepEqual(empty.errors, ["Plugin 'weather' manifest field 'summary': must not be empty."]);
    assert.equal(check({ ...base(), summary: '   ' }).valid, false);
    const { summary: _summary, ...missing } = base();
    assert.match(check(missing).errors.join('\n'), /field 'summary'/);
    assert.equal(check({ ...base(), summary: 'x' }).valid, true);
  });

  it('needs at least one whenToUse entry unless silent', () => {
    const message = "Plugin 'weather' manifest field 'whenToUse': needs at least 1 entry unless visibility is 'silent'.";
    const { whenToUse: _whenToUse, ...missing } = base();
    assert.deepEqual(check(missing).errors, [message]);
    assert.deepEqual(check({ ...base(), whenToUse: [] }).errors, [message]);
    assert.deepEqual(check({ ...base(), whenToUse: ['  '] }).errors, [message]);
    assert.deepEqual(check({ ...base(), whenToUse: [], visibility: 'always' }).errors, [message]);
    // silent plugins are middleware only: no trigger phrases needed
    assert.equal(check({ ...missing, visibility: 'silent' }).valid, true);
    assert.equal(check({ ...base(), whenToUse: [], visibility: 'silent' }).valid, true);
    assert.equal(check({ ...base(), whenToUse: ['one'] }).valid, true);
  });

  it('fails an example naming an unregistered tool with the seed message', () => {
    const result = check({ ...base(), examples: [{ user: 'Weather?', tool: 'foo' }] }, weatherTools);
    assert.equal(result.valid, false);
    assert.deepEqual(result.errors, ["Plugin 'weather' manifest example references unknown tool 'foo'."]);
    assert.equal(check({ ...base(), examples: [{ user: 'Weather?', tool: 'get_current_weather' }] }, weatherTools).valid, true);
  });

  it('cross-checks only when registered tools are given', () => {
    const manifest = { ...base(), examples: [{ user: 'Weather?', tool: 'foo' }] };
    assert.equal(check(manifest).valid, true);
    assert.equal(check(manifest, []).valid, false);
  });

  it('still rejects a malformed tool name when it cannot cross-check', () => {
    const result = check({ ...base(), examples: [{ user: 'Weather?', tool: 'get weather' }] });
    assert.equal(result.valid, false);
    assert.match(result.errors[0] ?? '', /'get weather' is not a valid tool name/);
  });

  it('rejects an example naming another plugin or a malformed name with the separator', () => {
    for (const tool of ['calendar__get_events', 'weather__', '__x', 'a__b__c']) {
      const result = check({ ...base(), examples: [{ user: 'q', tool }] }, weatherTools);
      assert.equal(result.valid, false, tool);
      assert.match(result.errors[0] ?? '', /field 'examples\.0\.tool': .* contains the separator "__"/, tool);
    }
  });

  it("accepts the plugin's own qualified name with a warning and normalises it", () => {
    const result = check({ ...base(), examples: [{ user: 'Forecast?', tool: 'weather__get_weather_forecast' }] }, weatherTools);
    assert.equal(result.valid, true);
    assert.deepEqual(result.warnings, [
      "Plugin 'weather' manifest field 'examples.0.tool': qualified name 'weather__get_weather_forecast' is read as 'get_weather_forecast'; prefer the bare name.",
    ]);
    assert.equal(result.manifest?.examples?.[0]?.tool, 'get_weather_forecast');
    const unknown = check({ ...base(), examples: [{ user: 'q', tool: 'weather__foo' }] }, weatherTools);
    assert.deepEqual(unknown.errors, ["Plugin 'weather' manifest example references unknown tool 'foo'."]);
  });

  it('collects every error instead of stopping at the first', () => {
    const result = check(
      {
        title: '',
        summary: '',
        whenToUse: [],
        category: 'nope',
        examples: [
          { user: 'a', tool: 'foo' },
          { user: 'b', tool: 'bar' },
          { user: 'c', tool: 'other__tool' },
        ],
      },
      weatherTools,
    );
    assert.equal(result.valid, false);
    assert.equal(result.errors.length, 7, result.errors.join('\n'));
    assert.ok(result.errors.includes("Plugin 'weather' manifest example references unknown tool 'foo'."));
    assert.ok(result.errors.includes("Plugin 'weather' manifest example references unknown tool 'bar'."));
    assert.equal(result.manifest, undefined);
  });
});

describe('validateManifest: soft rules', () => {
  it('warns on a summary over 120 characters, not at 120', () => {
    assert.deepEqual(check({ ...base(), summary: 'x'.repeat(120) }).warnings, []);
    const result = check({ ...base(), summary: 'x'.repeat(121) });
    assert.equal(result.valid, true);
    assert.equal(result.warnings.length, 1);
    assert.match(result.warnings[0] ?? '', /summary is 121 characters/);
  });

  it('warns on more than 8 whenToUse entries, not at 8', () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => `case ${i}`);
    assert.deepEqual(check({ ...base(), whenToUse: entries(8) }).warnings, []);
    const result = check({ ...base(), whenToUse: entries(9) });
    assert.equal(result.valid, true);
    assert.deepEqual(result.warnings, ["Plugin 'weather' manifest has 9 whenToUse entries; more than 8 dilute one another."]);
  });

  it('warns on each whenToUse entry over 100 characters, not at 100', () => {
    assert.deepEqual(check({ ...base(), whenToUse: ['y'.repeat(100)] }).warnings, []);
    const result = check({ ...base(), whenToUse: ['ok', 'y'.repeat(101), 'z'.repeat(150)] });
    assert.equal(result.valid, true);
    assert.equal(result.warnings.length, 2);
    assert.match(result.warnings[0] ?? '', /field 'whenToUse\.1' is 101 characters/);
    assert.match(result.warnings[1] ?? '', /field 'whenToUse\.2' is 150 characters/);
  });

  it('warns on each tag with uppercase letters', () => {
    assert.deepEqual(check({ ...base(), tags: ['weather', 'open-meteo', 'uv-index-2'] }).warnings, []);
    const result = check({ ...base(), tags: ['Weather', 'ok', 'UV'] });
    assert.equal(result.valid, true);
    assert.deepEqual(result.warnings, [
      "Plugin 'weather' manifest tag 'Weather' contains uppercase letters; tags should be lowercase.",
      "Plugin 'weather' manifest tag 'UV' contains uppercase letters; tags should be lowercase.",
    ]);
  });

  it('warns on unknown fields and drops them', () => {
    const result = check({ ...base(), whenToUSe: ['typo'] });
    assert.equal(result.valid, true);
    assert.deepEqual(result.warnings, ["Plugin 'weather' manifest has unknown field 'whenToUSe'; it is ignored."]);
    assert.equal('whenToUSe' in (result.manifest ?? {}), false);
  });

  it('reports warnings alongside errors', () => {
    const result = check({ ...base(), summary: '', tags: ['Weather'] });
    assert.equal(result.valid, false);
    assert.equal(result.errors.length, 1);
    assert.equal(result.warnings.length, 1);
  });
});

describe('exampleToolName', () => {
  it('resolves bare and own-qualified names only', () => {
    assert.equal(exampleToolName('weather', 'get_current_weather'), 'get_current_weather');
    assert.equal(exampleToolName('weather', 'weather__get_current_weather'), 'get_current_weather');
    assert.equal(exampleToolName('weather', 'calendar__get_events'), undefined);
    assert.equal(exampleToolName('weather', 'weather__'), undefined);
  });
});
