/**
 * @module plugins/container/fetch
 * Installing a container image as a plugin (issue #26, `container:IMAGE`, and imported
 * `docker run … IMAGE` entries). "Fetching" asks the engine found on PATH for the image (pulled
 * when it is not there yet) and pins it by its id: the plugin runs exactly that image until
 * `quiver plugin update`. The plugin folder (`<cacheDir>/container/<id>`) holds only
 * `container.json`, what was asked and what was found: there is no code here to analyse, which
 * the trust stages say (verification/stages/source).
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultSearchPath } from '../../runtime/host-detection.ts';
import { workingEngine } from '../../runtime/container.ts';
import type { StoredStdioLaunch } from '../launch.ts';
import type { FailStep } from '../install/failure.ts';
import type { Staging } from '../install/staging.ts';
import type { FetchedSource, InstallerSettings, InstallRequest } from '../install/types.ts';

/** The file naming the image in a container plugin's folder. */
export const CONTAINER_FILE = 'container.json';

function run(command: string, args: readonly string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk.slice(0, 65_536)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_096)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: error.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Finds the image (pulling it if needed), pins it by id and stages the plugin folder. */
export async function fetchContainer(
  input: { settings: InstallerSettings; staging: Staging; fail: FailStep },
  image: string,
): Promise<FetchedSource> {
  const { settings, staging, fail } = input;
  const { engine, found } = workingEngine(process.env['PATH'] ?? defaultSearchPath);
  if (engine === undefined) {
    const broken = found.map((entry) => `${entry.name} is installed but ${entry.problem}`).join('; ');
    throw fail('launch', `a container image needs a working container engine (${broken || 'neither docker nor podman is on PATH'}): install or start one (e.g. 'apt-get install -y podman')`);
  }
  const inspect = () => run(engine.path, ['image', 'inspect', '--format', '{{.Id}}', image], 60_000);
  let found1 = await inspect();
  if (found1.code !== 0) {
    const pull = await run(engine.path, ['pull', '--quiet', image], 600_000);
    if (pull.code !== 0) throw fail('launch', `${engine.name} cannot find or pull the image '${image}': ${pull.stderr.trim().split('\n').pop() ?? ''}`);
    found1 = await inspect();
  }
  const id = found1.stdout.trim().replace(/^sha256:/, '');
  if (found1.code !== 0 || !/^[0-9a-f]{12,64}$/.test(id)) throw fail('launch', `${engine.name} does not report an id for the image '${image}'`);
  const tree = join(await staging.ensure('container'), 'tree');
  await mkdir(tree, { recursive: true });
  await writeFile(join(tree, CONTAINER_FILE), `${JSON.stringify({ image, imageId: id, engine: engine.name }, null, 2)}\n`, { mode: 0o644 });
  return {
    root: tree,
    finalPath: join(settings.cacheDir, 'container', id.slice(0, 32)),
    relativeFolder: '.',
    inPlace: false,
    sourceType: 'container',
    sourceRecord: { image, imageId: id, engine: engine.name },
    revision: id.slice(0, 12),
    packageVersion: undefined,
    warnings: [],
  };
}

/** The stored launch of a container plugin: the pinned image id and the server's arguments. */
export function containerLaunch(request: InstallRequest, fetched: FetchedSource): StoredStdioLaunch {
  const id = fetched.sourceRecord['imageId'];
  const image = typeof id === 'string' ? id : String(fetched.sourceRecord['image']);
  const args = request.reuseCachePath === undefined ? request.args : Array.isArray(fetched.sourceRecord['args']) ? (fetched.sourceRecord['args'] as string[]) : [];
  return { transport: 'stdio', command: 'container', args: [...args], env: [], cwd: '.', container: { image } };
}
