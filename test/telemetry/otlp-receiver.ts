/**
 * @module test/telemetry/otlp-receiver
 * A local OTLP/HTTP trace receiver for the tests: it accepts `POST /v1/traces` with the JSON
 * encoding the OpenTelemetry exporter sends (OTLP 1.x: resourceSpans → scopeSpans → spans, ids
 * as hex strings), answers 200 with an empty partial-success object, and keeps every span.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One received span, flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  serviceName: string | undefined;
  attributes: Record<string, unknown>;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpAttribute[];
}
interface OtlpRequest {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

function valueOf(value: OtlpValue): unknown {
  return value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

/** A running receiver. */
export interface OtlpReceiver {
  /** Base URL (`http://127.0.0.1:PORT`): the exporter appends /v1/traces. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests that were not OTLP JSON (content type and a body excerpt). */
  rejected: string[];
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
        rejected.push(`${request.method} ${request.url} ${request.headers['content-type']} ${body.slice(0, 80)}`);
        response.writeHead(415).end();
        return;
      }
      const parsed = JSON.parse(body) as OtlpRequest;
      for (const resourceSpans of parsed.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'] as string | undefined;
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId || undefined,
              name: span.name,
              kind: span.kind,
              serviceName,
              attributes: attributesOf(span.attributes),
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
