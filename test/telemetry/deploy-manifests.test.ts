/**
 * The container image definition and the Kubernetes manifests (issue #16), checked for what can
 * be checked without a container engine: every manifest parses as YAML, kustomization lists
 * files that exist, the Deployment's probes hit paths a real Quiver API answers (200 for
 * /healthz and /readyz on a migrated store), every environment variable the manifests and the
 * Dockerfile set is one Quiver reads and `loadConfig` accepts their values, the drain fits the
 * grace period, the Dockerfile's sources exist and its image runs as a non-root user with the
 * sandbox's tools installed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createApp } from '../../src/app.ts';
import { createApi } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const kubernetes = `${root}deploy/kubernetes/`;
const configSource = readFileSync(`${root}src/config.ts`, 'utf8');

type Doc = { kind?: string; metadata?: { name?: string }; spec?: Record<string, unknown>; resources?: string[] };

function manifests(file: string): Doc[] {
  const documents = parseAllDocuments(readFileSync(`${kubernetes}${file}`, 'utf8'));
  for (const document of documents) assert.deepEqual(document.errors, [], `${file}: ${document.errors.join('; ')}`);
  return documents.map((document) => document.toJS() as Doc);
}

interface Container {
  args?: string[];
  ports?: Array<{ name: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  startupProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet: { path: string; port: string } };
  securityContext?: Record<string, unknown>;
}

function quiverDeployment(): { spec: { replicas: number; template: { spec: { terminationGracePeriodSeconds: number; securityContext: Record<string, unknown>; containers: Container[] } } } } {
  const deployment = manifests('quiver.yaml').find((doc) => doc.kind === 'Deployment' && doc.metadata?.name === 'quiver');
  assert.ok(deployment, 'quiver.yaml has the quiver Deployment');
  return deployment as never;
}

/** True when config.ts reads this variable (an env schema key, or a secret read with readSecret and its _FILE form). */
function quiverReads(name: string): boolean {
  const base = name.replace(/_FILE$/, '');
  return new RegExp(`\\b${name}:`).test(configSource) || configSource.includes(`'${base}'`);
}

describe('deploy/: container image and Kubernetes manifests', () => {
  it('every manifest parses; kustomization lists files that exist', () => {
    const files = readdirSync(kubernetes).filter((file) => file.endsWith('.yaml'));
    assert.ok(files.length >= 4, files.join(', '));
    for (const file of files) assert.ok(manifests(file).length > 0, file);
    const [kustomization] = manifests('kustomization.yaml');
    for (const resource of kustomization?.resources ?? []) assert.ok(existsSync(`${kubernetes}${resource}`), `kustomization names ${resource}`);
    assert.ok(manifests('postgres.yaml').some((doc) => doc.kind === 'StatefulSet'), 'a PostgreSQL StatefulSet');
  });

  it('probes hit /healthz and /readyz, which a real Quiver API answers with 200', async () => {
    const container = quiverDeployment().spec.template.spec.containers[0]!;
    const portNames = new Set((container.ports ?? []).map((port) => port.name));
    const probes = [container.startupProbe, container.livenessProbe, container.readinessProbe];
    for (const probe of probes) assert.ok(probe && portNames.has(probe.httpGet.port), 'each probe targets a named container port');
    assert.equal(container.livenessProbe?.httpGet.path, '/healthz');
    assert.equal(container.readinessProbe?.httpGet.path, '/readyz');

    const app = await createApp(loadConfig({ HOME: root, QUIVER_DATABASE_URL: 'memory://', QUIVER_LOG_LEVEL: 'silent' }));
    try {
      const api = createApi({ apiKeys: app.apiKeys, modules: [], telemetry: app.telemetry });
      for (const probe of probes) {
        const response = await api.request(probe!.httpGet.path);
        assert.equal(response.status, 200, `${probe!.httpGet.path}: ${await response.text()}`);
      }
      app.telemetry.readiness.startDraining();
      assert.equal((await api.request('/readyz')).status, 503, 'a draining replica is not ready');
    } finally {
      await app.close();
    }
  });

  it('sets only variables Quiver reads, with values loadConfig accepts; the drain fits the grace period', () => {
    const deployment = quiverDeployment();
    const container = deployment.spec.template.spec.containers[0]!;
    const env = container.env ?? [];
    for (const variable of env) assert.ok(quiverReads(variable.name), `${variable.name} is read by src/config.ts`);
    const plain = Object.fromEntries(env.filter((variable) => variable.value !== undefined).map((variable) => [variable.name, variable.value!]));
    assert.ok(env.some((variable) => variable.name === 'QUIVER_DATABASE_URL' && variable.valueFrom), 'the database URL comes from a Secret');
    const config = loadConfig({ ...plain, QUIVER_SECRET_KEY_FILE: undefined, QUIVER_DATABASE_URL: 'postgres://quiver@db:5432/quiver' });
    assert.equal(config.store.kind, 'postgres');
    assert.equal(config.telemetry.metrics, 'key');
    assert.ok(deployment.spec.template.spec.terminationGracePeriodSeconds > config.telemetry.drainMs / 1000 + 5, 'grace period leaves time after the drain');
    assert.ok(deployment.spec.replicas >= 2);
    assert.equal(deployment.spec.template.spec.securityContext.runAsNonRoot, true);
    assert.equal(container.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(container.args?.slice(0, 1), ['serve']);
    assert.ok(container.args?.includes('--dangerously-bind-all-interfaces'), 'a pod listens on its pod IP, which needs the explicit flag');
  });

  it('the Dockerfile copies sources that exist, runs quiver as a non-root user and installs the sandbox tools', () => {
    const dockerfile = readFileSync(`${root}deploy/Dockerfile`, 'utf8');
    for (const match of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of match[1]!.split(/\s+/)) assert.ok(existsSync(`${root}${source}`), `COPY source ${source} exists`);
    }
    assert.match(dockerfile, /^FROM node:24-bookworm-slim/m);
    assert.match(dockerfile, /^USER 10001:10001$/m);
    assert.match(dockerfile, /bubblewrap/);
    assert.match(dockerfile, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "quiver"\]$/m);
    const exposed = /^EXPOSE (\d+)$/m.exec(dockerfile)?.[1];
    const port = /QUIVER_PORT=(\d+)/.exec(dockerfile)?.[1];
    assert.equal(exposed, port);
    assert.equal(Number(port), quiverDeployment().spec.template.spec.containers[0]!.ports![0]!.containerPort);
    for (const name of dockerfile.matchAll(/^\s*(QUIVER_[A-Z_]+)=/gm)) assert.ok(quiverReads(name[1]!), `${name[1]} is read by src/config.ts`);
  });
});
