import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { LATENCY_BUCKETS, pluginIntelligenceDocumentSchema, validatePid } from './pid.ts';

const appendixA = (): Record<string, unknown> =>
  JSON.parse(
    readFileSync(new URL('../../test/fixtures/manifests/pid-appendix-a.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown>;

const minimal = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  version: '1.0',
  pluginId: 'weather',
  semantic: { capabilities: ['Report the weather'] },
  tools: [{ name: 'get_forecast', description: 'Daily forecast.' }],
  ...extra,
});

describe('validatePid: Appendix A', () => {
  it('validates the seed 000 Appendix A example as is, without warnings', () => {
    const result = validatePid(appendixA(), { pluginName: 'patient-search-pro', registeredTools: ['searchPatients'] });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
    assert.equal(result.valid, true);
    assert.equal(result.pid?.tools?.[0]?.name, 'searchPatients');
    assert.equal(result.pid?.execution?.retryPolicy?.maxRetries, 2);
    assert.equal(result.pid?.safety?.dataClassification, 'PHI');
  });

  it('round-trips Appendix A unchanged (nothing dropped, nothing added)', () => {
    assert.deepEqual(pluginIntelligenceDocumentSchema.parse(appendixA()), appendixA());
  });

  it('keeps unknown keys at every level, because PIDs evolve', () => {
    const document = appendixA();
    document['publisher'] = { name: 'Acme Health' };
    (document['semantic'] as Record<string, unknown>)['locale'] = 'en-US';
    const tools = document['tools'] as Record<string, unknown>[];
    tools[0]!['costPerCall'] = 0.002;
    const result = validatePid(document);
    assert.equal(result.valid, true);
    assert.deepEqual((result.pid as Record<string, unknown>)['publisher'], { name: 'Acme Health' });
    assert.equal((result.pid?.semantic as Record<string, unknown>)['locale'], 'en-US');
    assert.equal((result.pid?.tools?.[0] as Record<string, unknown>)['costPerCall'], 0.002);
  });

  it('accepts all five sections fully populated', () => {
    const result = validatePid(
      minimal({
        semantic: {
          capabilities: ['Report the weather'],
          useCases: [{ scenario: 'Trip', trigger: 'travel', example: 'Rain in Lisbon?', expectedOutcome: 'forecast' }],
          antiPatterns: ['Climate statistics'],
          domainContext: ['Meteorology units'],
          relatedConcepts: ['rain'],
        },
        tools: [
          {
            name: 'get_forecast',
            description: 'Daily forecast.',
            llmNotes: 'Prefer for future days.',
            inputSchema: { type: 'object' },
            outputSchema: { type: 'object' },
            examples: [{ input: { city: 'Oslo' }, output: { max: 3 } }],
            semanticTags: ['forecast'],
            requiredContext: ['city'],
            sideEffects: ['external-api', { type: 'write', description: 'caches the result' }],
          },
        ],
        execution: {
          typicalLatency: 'moderate',
          resourceIntensity: 'medium',
          concurrencyModel: 'parallel',
          timeoutRecommendation: 10_000,
          retryPolicy: { maxRetries: 3, backoffMs: 200, backoffMultiplier: 2, maxBackoffMs: 5_000, retryOn: ['timeout'] },
          circuitBreakerConfig: { failureThreshold: 5, successThreshold: 2, timeout: 30_000, halfOpenRequests: 1 },
        },
        safety: {
          requiredPermissions: ['weather:read', { name: 'geo:read', description: 'city lookup' }],
          dataClassification: 'public',
          auditRequirements: 'basic',
          rateLimits: { requestsPerMinute: 60, burst: 10, maxConcurrent: 4 },
          isolationLevel: 'sandbox',
        },
        interoperability: {
          composableWith: ['calendar__get_events'],
          conflictsWith: ['legacy-weather__forecast'],
          prerequisites: ['geocode'],
          dataFlowPatterns: ['geocode -> forecast', { from: 'geocode', to: 'get_forecast' }],
        },
      }),
    );
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
  });

  it('accepts each latency bucket of the seed and no other', () => {
    for (const typicalLatency of LATENCY_BUCKETS) assert.equal(validatePid(minimal({ execution: { typicalLatency } })).valid, true);
    const result = validatePid(minimal({ execution: { typicalLatency: 'quick' } }));
    assert.equal(result.valid, false);
    assert.match(result.errors[0] ?? '', /^PID field 'execution\.typicalLatency': Invalid option/);
  });
});

describe('validatePid: errors', () => {
  it('rejects a non-object', () => {
    for (const value of [null, [], 'pid']) assert.deepEqual(validatePid(value).errors, ['PID must be a JSON object.']);
  });

  it('requires version and pluginId', () => {
    const result = validatePid({ tools: [] });
    assert.equal(result.valid, false);
    assert.deepEqual(
      result.errors.map((e) => e.split(':')[0]),
      ["PID field 'version'", "PID field 'pluginId'"],
    );
  });

  it('gives path-bearing errors for a malformed document, all at once', () => {
    const result = validatePid(
      {
        version: '1.0',
        pluginId: 'weather',
        semantic: { capabilities: 'everything', useCases: [{ trigger: 'no scenario' }] },
        tools: [
          { name: 'ok', description: 'fine', examples: [{ output: {} }], sideEffects: [{}] },
          { description: 'nameless' },
        ],
        execution: { timeoutRecommendation: -5, retryPolicy: { backoffMs: 100 }, circuitBreakerConfig: { failureThreshold: 0 } },
        safety: { requiredPermissions: [42], rateLimits: { requestsPerMinute: 'many' } },
        interoperability: { dataFlowPatterns: [7] },
      },
      { pluginName: 'weather' },
    );
    assert.equal(result.valid, false);
    const paths = result.errors.map((error) => /field '([^']+)'/.exec(error)?.[1]);
    assert.deepEqual(paths.sort(), [
      'execution.circuitBreakerConfig.failureThreshold',
      'execution.retryPolicy.maxRetries',
      'execution.timeoutRecommendation',
      'interoperability.dataFlowPatterns.0',
      'safety.rateLimits.requestsPerMinute',
      'safety.requiredPermissions.0',
      'semantic.capabilities',
      'semantic.useCases.0.scenario',
      'tools.0.examples.0.input',
      'tools.0.sideEffects.0',
      'tools.1.name',
    ]);
    assert.ok(result.errors.every((error) => error.startsWith("Plugin 'weather' PID field '")));
  });

  it('rejects tool names containing the separator', () => {
    const result = validatePid(minimal({ tools: [{ name: 'weather__get_forecast', description: 'x' }] }));
    assert.equal(result.valid, false);
    assert.match(result.errors[0] ?? '', /^PID field 'tools\.0\.name': tool names must not contain the separator "__"/);
  });

  it('rejects duplicate tool names, naming both places', () => {
    const result = validatePid(
      minimal({ tools: [{ name: 'a', description: 'x' }, { name: 'b', description: 'y' }, { name: 'a', description: 'z' }] }),
    );
    assert.equal(result.valid, false);
    assert.deepEqual(result.errors, ["PID field 'tools.2.name': duplicate tool name 'a' (first defined at tools.0)."]);
    assert.equal(validatePid(minimal({ tools: [{ name: 'a', description: 'x' }, { name: 'b', description: 'y' }] })).valid, true);
  });

  it('rejects a non-integer timeout and negative retry counts', () => {
    assert.equal(validatePid(minimal({ execution: { timeoutRecommendation: 1.5 } })).valid, false);
    assert.equal(validatePid(minimal({ execution: { retryPolicy: { maxRetries: -1 } } })).valid, false);
    assert.equal(validatePid(minimal({ execution: { retryPolicy: { maxRetries: 0 } } })).valid, true);
  });
});

describe('validatePid: warnings', () => {
  const warningsOf = (document: unknown, options = {}) => {
    const result = validatePid(document, options);
    assert.equal(result.valid, true, result.errors.join('\n'));
    return result.warnings;
  };

  it('warns on a tool without a description', () => {
    assert.deepEqual(warningsOf(minimal({ tools: [{ name: 'a' }, { name: 'b', description: ' ' }] })), [
      "PID tool 'a' has no description.",
      "PID tool 'b' has no description.",
    ]);
  });

  it('warns on an absurd timeout, not on sensible ones', () => {
    assert.deepEqual(warningsOf(minimal({ execution: { timeoutRecommendation: 100 } })), []);
    assert.deepEqual(warningsOf(minimal({ execution: { timeoutRecommendation: 600_000 } })), []);
    assert.match(warningsOf(minimal({ execution: { timeoutRecommendation: 5 } }))[0] ?? '', /5 ms; below 100 ms — is it in seconds\?/);
    assert.match(warningsOf(minimal({ execution: { timeoutRecommendation: 600_001 } }))[0] ?? '', /above 600000 ms/);
  });

  it('warns on excessive retries and backoff', () => {
    assert.deepEqual(warningsOf(minimal({ execution: { retryPolicy: { maxRetries: 10, backoffMs: 60_000 } } })), []);
    const warnings = warningsOf(minimal({ execution: { retryPolicy: { maxRetries: 11, backoffMs: 60_001 } } }));
    assert.equal(warnings.length, 2);
    assert.match(warnings[0] ?? '', /maxRetries is 11/);
    assert.match(warnings[1] ?? '', /backoffMs is 60001 ms/);
  });

  it('keeps values the seed leaves open, warning when they are not known ones', () => {
    const document = minimal({
      execution: { resourceIntensity: 'extreme', concurrencyModel: 'actor' },
      safety: { dataClassification: 'secret-sauce', auditRequirements: 'paranoid', isolationLevel: 'vm' },
    });
    const result = validatePid(document);
    assert.equal(result.valid, true);
    assert.equal(result.pid?.safety?.dataClassification, 'secret-sauce');
    assert.deepEqual(
      result.warnings.map((w) => /PID (\S+) '/.exec(w)?.[1]),
      [
        'execution.resourceIntensity',
        'execution.concurrencyModel',
        'safety.dataClassification',
        'safety.auditRequirements',
        'safety.isolationLevel',
      ],
    );
    // known values match case-insensitively (PHI, phi)
    assert.deepEqual(warningsOf(minimal({ safety: { dataClassification: 'phi', isolationLevel: 'Container' } })), []);
  });

  it('warns when pluginId differs from the plugin name', () => {
    assert.deepEqual(warningsOf(minimal(), { pluginName: 'weather' }), []);
    assert.deepEqual(warningsOf(minimal(), { pluginName: 'forecast' }), [
      "Plugin 'forecast' PID pluginId 'weather' differs from the plugin name 'forecast'.",
    ]);
  });

  it('warns on definitions of tools the plugin does not register', () => {
    assert.deepEqual(warningsOf(minimal(), { registeredTools: ['get_forecast'] }), []);
    assert.deepEqual(warningsOf(minimal(), { registeredTools: ['other'] }), [
      "PID describes tool 'get_forecast', which the plugin does not register; the definition is ignored.",
    ]);
  });

  it('warns when there are no tools or no capabilities', () => {
    assert.deepEqual(warningsOf({ version: '1', pluginId: 'weather', semantic: { capabilities: ['x'] } }), [
      'PID defines no tools; tool metadata will come from discovery alone.',
    ]);
    assert.deepEqual(warningsOf(minimal({ semantic: { antiPatterns: ['x'] } })), [
      "PID has no semantic.capabilities; they help retrieval find the plugin's tools.",
    ]);
  });

  it('warns on a tool both composable and conflicting', () => {
    assert.deepEqual(warningsOf(minimal({ interoperability: { composableWith: ['a', 'b'], conflictsWith: ['b'] } })), [
      "PID lists 'b' in both interoperability.composableWith and conflictsWith.",
    ]);
  });
});
