/**
 * The telemetry settings loadConfig reads (issue #16): metrics access, where traces go (Quiver's
 * variable, then the standard OpenTelemetry ones), headers, service name, sampling, draining.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';

const base = { HOME: '/tmp/quiver-telemetry-config' };

describe('loadConfig: telemetry', () => {
  it('defaults: metrics need a key, no tracing, no drain', () => {
    assert.deepEqual(loadConfig(base).telemetry, { metrics: 'key', tracing: undefined, drainMs: 0 });
  });

  it('QUIVER_OTLP_ENDPOINT is a base URL; the traces path is added once', () => {
    const tracing = loadConfig({ ...base, QUIVER_OTLP_ENDPOINT: 'http://collector:4318/' }).telemetry.tracing;
    assert.deepEqual(tracing, { tracesUrl: 'http://collector:4318/v1/traces', headers: {}, serviceName: 'quiver', sampleRatio: 1 });
    assert.equal(loadConfig({ ...base, QUIVER_OTLP_ENDPOINT: 'http://collector:4318/v1/traces' }).telemetry.tracing?.tracesUrl, 'http://collector:4318/v1/traces');
  });

  it('the standard OTEL_* variables work too; the per-signal URL is used as given', () => {
    const general = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318', OTEL_SERVICE_NAME: 'quiver-eu', OTEL_EXPORTER_OTLP_HEADERS: 'x-token=a%20b,tenant=7' });
    assert.deepEqual(general.telemetry.tracing, { tracesUrl: 'https://otel.example:4318/v1/traces', headers: { 'x-token': 'a b', tenant: '7' }, serviceName: 'quiver-eu', sampleRatio: 1 });
    const specific = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/custom' });
    assert.equal(specific.telemetry.tracing?.tracesUrl, 'https://traces.example/custom');
    assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318', OTEL_SDK_DISABLED: 'true' }).telemetry.tracing, undefined);
  });

  it('metrics access, sampling and drain are validated', () => {
    const config = loadConfig({ ...base, QUIVER_METRICS: 'open', QUIVER_OTLP_ENDPOINT: 'http://c:4318', QUIVER_TRACE_SAMPLE_RATIO: '0.25', QUIVER_SHUTDOWN_DRAIN_SECONDS: '7.5', QUIVER_OTLP_HEADERS: 'authorization=Bearer%20x' });
    assert.equal(config.telemetry.metrics, 'open');
    assert.equal(config.telemetry.tracing?.sampleRatio, 0.25);
    assert.deepEqual(config.telemetry.tracing?.headers, { authorization: 'Bearer x' });
    assert.equal(config.telemetry.drainMs, 7500);
    assert.throws(() => loadConfig({ ...base, QUIVER_METRICS: 'public' }), /QUIVER_METRICS/);
    assert.throws(() => loadConfig({ ...base, QUIVER_TRACE_SAMPLE_RATIO: '2' }), /QUIVER_TRACE_SAMPLE_RATIO/);
    assert.throws(() => loadConfig({ ...base, QUIVER_OTLP_ENDPOINT: 'not a url' }), /QUIVER_OTLP_ENDPOINT/);
    assert.throws(() => loadConfig({ ...base, QUIVER_OTLP_ENDPOINT: 'http://c:4318', QUIVER_OTLP_HEADERS: 'novalue' }), /QUIVER_OTLP_HEADERS: expected key=value/);
    assert.throws(() => loadConfig({ ...base, QUIVER_SHUTDOWN_DRAIN_SECONDS: '-1' }), /QUIVER_SHUTDOWN_DRAIN_SECONDS/);
  });
});
