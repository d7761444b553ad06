/**
 * The metrics registry and its Prometheus text exposition, read back with a real
 * Prometheus text-format parser: types, escaping, cumulative buckets ending in +Inf, the
 * series cap folding new label values into `_other`, and collectors run per scrape.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricsRegistry, OVERFLOW_LABEL } from '../../src/telemetry/metrics/registry.ts';
import { renderPrometheus, formatValue } from '../../src/telemetry/metrics/exposition.ts';
import { family, histogramSeries, parsePrometheus, total } from './prometheus.ts';

describe('metrics registry and exposition', () => {
  it('renders counters, gauges and histograms that a Prometheus parser reads back exactly', () => {
    const registry = new MetricsRegistry();
    const calls = registry.counter({ name: 'demo_calls_total', help: 'Calls\nby outcome, with a \\ backslash.', labelNames: ['outcome'] });
    const up = registry.gauge({ name: 'demo_up', help: 'Up.' });
    const latency = registry.histogram({ name: 'demo_latency_seconds', help: 'Latency.', labelNames: ['kind'], buckets: [0.01, 0.1, 1] });
    calls.inc({ outcome: 'success' });
    calls.inc({ outcome: 'success' }, 2);
    calls.inc({ outcome: 'error "quoted"\nnew line \\ slash' });
    calls.inc({ outcome: 'success' }, -5); // counters never go down
    up.set(undefined, 1);
    for (const seconds of [0.005, 0.05, 0.05, 0.5, 7]) latency.observe({ kind: 'search' }, seconds);

    const text = renderPrometheus(registry.snapshot());
    assert.ok(text.endsWith('\n'));
    assert.match(text, /^# TYPE demo_latency_seconds histogram$/m);
    assert.match(text, /^demo_latency_seconds_bucket\{kind="search",le="\+Inf"\} 5$/m);
    const families = parsePrometheus(text);

    const parsedCalls = family(families, 'demo_calls_total');
    assert.equal(parsedCalls.type, 'COUNTER');
    assert.equal(parsedCalls.help, 'Calls\nby outcome, with a \\ backslash.');
    assert.equal(total(parsedCalls, { outcome: 'success' }), 3);
    assert.equal(total(parsedCalls, { outcome: 'error "quoted"\nnew line \\ slash' }), 1);
    assert.equal(total(family(families, 'demo_up')), 1);

    assert.equal(family(families, 'demo_latency_seconds').type, 'HISTOGRAM');
    const series = histogramSeries(text, 'demo_latency_seconds', { kind: 'search' });
    assert.deepEqual(series.buckets, { '0.01': 1, '0.1': 3, '1': 4, '+Inf': 5 });
    assert.equal(series.count, 5);
    assert.ok(Math.abs(series.sum - 7.605) < 1e-9);
  });

  it('folds label combinations past the cap into one _other series', () => {
    const registry = new MetricsRegistry();
    const byTool = registry.counter({ name: 'demo_by_tool_total', help: 'Per tool.', labelNames: ['tool'], maxSeries: 3 });
    for (let index = 0; index < 50; index++) byTool.inc({ tool: `tool-${index}` });
    byTool.inc({ tool: 'tool-0' });
    const parsed = family(parsePrometheus(renderPrometheus(registry.snapshot())), 'demo_by_tool_total');
    assert.equal(parsed.metrics.length, 4, 'three named series and the overflow one');
    assert.equal(total(parsed, { tool: 'tool-0' }), 2);
    assert.equal(total(parsed, { tool: OVERFLOW_LABEL }), 47);
    assert.equal(total(parsed), 51);
  });

  it('cuts long label values and refuses bad names', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter({ name: 'demo_long_total', help: 'Long.', labelNames: ['value'] });
    counter.inc({ value: 'x'.repeat(1000) });
    const [sample] = family(parsePrometheus(renderPrometheus(registry.snapshot())), 'demo_long_total').metrics;
    assert.equal(sample?.labels?.value?.length, 120);
    assert.throws(() => registry.counter({ name: 'bad-name', help: '' }), /invalid metric name/);
    assert.throws(() => registry.counter({ name: 'ok_total', help: '', labelNames: ['le'] }), /invalid label name/);
    assert.throws(() => registry.counter({ name: 'demo_long_total', help: '' }), /already registered/);
    assert.throws(() => registry.histogram({ name: 'demo_h', help: '', buckets: [1, 1] }), /ascend/);
  });

  it('runs collectors on every snapshot; a throwing collector does not break the scrape', () => {
    const registry = new MetricsRegistry();
    const processes = registry.gauge({ name: 'demo_processes', help: 'Processes.' });
    let live = 2;
    registry.onCollect(() => processes.set(undefined, live));
    registry.onCollect(() => {
      throw new Error('source down');
    });
    assert.equal(total(family(parsePrometheus(renderPrometheus(registry.snapshot())), 'demo_processes')), 2);
    live = 5;
    assert.equal(total(family(parsePrometheus(renderPrometheus(registry.snapshot())), 'demo_processes')), 5);
  });

  it('spells out infinities and NaN', () => {
    assert.equal(formatValue(Number.POSITIVE_INFINITY), '+Inf');
    assert.equal(formatValue(Number.NEGATIVE_INFINITY), '-Inf');
    assert.equal(formatValue(Number.NaN), 'NaN');
    assert.equal(formatValue(0.25), '0.25');
  });
});
