/**
 * Builds a pure-Python wheel by hand (a zip with its .dist-info: METADATA, WHEEL, RECORD with
 * hashes, entry_points.txt), so a test can give real pip a "published" package without a build
 * backend or the network: pip installs it from a find-links folder exactly as it would a wheel
 * from the package index.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** One wheel: distribution name and version, files by path inside site-packages, dependencies and console scripts. */
export interface WheelSpec {
  name: string;
  version: string;
  files: Record<string, string>;
  requires?: string[];
  consoleScripts?: Record<string, string>;
}

const BUILD = `
import base64, csv, hashlib, io, json, sys, zipfile
spec = json.loads(sys.argv[1]); folder = sys.argv[2]
module_name = spec['name'].replace('-', '_')
info = f"{module_name}-{spec['version']}.dist-info"
files = dict(spec['files'])
metadata = f"Metadata-Version: 2.1\\nName: {spec['name']}\\nVersion: {spec['version']}\\nLicense: MIT\\n"
metadata += ''.join(f"Requires-Dist: {r}\\n" for r in spec.get('requires', []))
files[f"{info}/METADATA"] = metadata
files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: quiver-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
files[f"{info}/top_level.txt"] = ''.join(sorted({p.split('/')[0].removesuffix('.py') + "\\n" for p in spec['files']}))
if spec.get('consoleScripts'):
    files[f"{info}/entry_points.txt"] = "[console_scripts]\\n" + ''.join(f"{k} = {v}\\n" for k, v in spec['consoleScripts'].items())
record = io.StringIO(); writer = csv.writer(record, lineterminator='\\n')
for path, text in files.items():
    data = text.encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    writer.writerow([path, f"sha256={digest}", len(data)])
writer.writerow([f"{info}/RECORD", '', ''])
path = f"{folder}/{module_name}-{spec['version']}-py3-none-any.whl"
with zipfile.ZipFile(path, 'w') as wheel:
    for name, text in files.items(): wheel.writestr(name, text)
    wheel.writestr(f"{info}/RECORD", record.getvalue())
print(path)
`;

/** Writes the wheel into `folder` (made if missing) and returns its path. */
export function buildWheel(folder: string, spec: WheelSpec): string {
  mkdirSync(folder, { recursive: true });
  return execFileSync('python3', ['-c', BUILD, JSON.stringify(spec), folder], { encoding: 'utf8' }).trim();
}
