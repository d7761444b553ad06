import { it, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isQuiverError } from '../core/errors.ts';
import { installPlanFor, parseMarketplaceCatalog } from './marketplace.ts';

const weather = {
  name: 'io.github.user/weather',
  description: 'Weather forecasts.',
  version: '1.0.2',
  packages: [
    {
      registryType: 'npm',
      identifier: '@user/weather-mcp',
      version: '1.0.2',
      transport: { type: 'stdio' },
      packageArguments: [{ type: 'positional', value: '--units' }, { type: 'named', name: '--region', default: 'eu' }],
      environmentVariables: [
        { name: 'WEATHER_API_KEY', isRequired: true, isSecret: true, description: 'API key' },
        { name: 'WEATHER_UNITS', default: 'metric' },
      ],
    },
  ],
  remotes: [{ type: 'sse', url: 'https://weather.example.com/sse' }],
};

describe('marketplace catalogs', () => {
  it('accepts one server, an array, or a registry page of {server, _meta} items', () => {
    assert.equal(parseMarketplaceCatalog(weather).servers.length, 1);
    assert.equal(parseMarketplaceCatalog([weather]).servers.length, 1);
    const page = parseMarketplaceCatalog({ servers: [{ server: weather, _meta: {} }, { server: { name: 'bad name' } }, weather], metadata: { count: 3 } });
    assert.deepEqual(page.servers.map((s) => s.name), ['io.github.user/weather']);
    assert.equal(page.warnings.length, 2);
    assert.match(page.warnings[0]!, /entry 1 skipped: name/);
    assert.match(page.warnings[1]!, /more than once/);
    assert.throws(() => parseMarketplaceCatalog('nope'), (error: Error) => isQuiverError(error, 'invalid_input'));
  });

  it('plans an npm install with args, credentials and non-secret defaults, else a remote', () => {
    const [server] = parseMarketplaceCatalog(weather).servers;
    assert.deepEqual(installPlanFor(server!), {
      kind: 'npm',
      spec: '@user/weather-mcp@1.0.2',
      args: ['--units', '--region', 'eu'],
      credentials: [
        { name: 'WEATHER_API_KEY', required: true, as: 'env', description: 'API key' },
        { name: 'WEATHER_UNITS', required: false, as: 'env' },
      ],
      defaults: { WEATHER_UNITS: 'metric' },
    });
    const [remoteOnly] = parseMarketplaceCatalog({ ...weather, packages: [{ registryType: 'pypi', identifier: 'weather' }] }).servers;
    assert.deepEqual(installPlanFor(remoteOnly!), { kind: 'url', url: 'https://weather.example.com/sse', credentials: [], defaults: {} });
    const [neither] = parseMarketplaceCatalog({ ...weather, packages: [{ registryType: 'oci', identifier: 'x' }], remotes: [] }).servers;
    assert.throws(() => installPlanFor(neither!), /offers oci/);
  });
});
