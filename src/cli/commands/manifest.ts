/**
 * @module cli/commands/manifest
 * `quiver manifest check FILE [--tools a,b] [--plugin NAME]`: validates a plugin manifest
 * (seed 002), a Plugin Intelligence Document (seed 000) or a whole `quiver.json`, printing
 * every hard error and soft warning. Exit 0 when valid (warnings allowed), 2 on hard errors.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { invalidInput, QuiverError, ErrorCodes } from '../../core/errors.ts';
import { EXIT_CODES, printJson, type CommandSpec } from '../command.ts';

type DocumentKind = 'quiver.json' | 'manifest' | 'pid';

/** Guesses what a parsed document is from its members. */
export function detectDocumentKind(document: unknown): DocumentKind {
  if (document && typeof document === 'object' && !Array.isArray(document)) {
    const keys = Object.keys(document);
    if (keys.some((k) => ['manifest', 'intelligence', 'launch', 'credentials'].includes(k))) return 'quiver.json';
    if (keys.includes('semantic') || (keys.includes('pluginId') && keys.includes('tools'))) return 'pid';
  }
  return 'manifest';
}

export const manifestCheckCommand: CommandSpec = {
  path: ['manifest', 'check'],
  summary: 'Validate a manifest, an intelligence document or a quiver.json; exit 0 when valid, 2 on hard errors.',
  usage: 'FILE [--tools a,b] [--plugin NAME]',
  options: {
    tools: { type: 'string', valueName: 'a,b', description: 'the tool names the plugin registers, to check examples and references against' },
    plugin: { type: 'string', valueName: 'NAME', description: 'the plugin name to check against', defaultHelp: 'from the file or folder name' },
  },
  storeless: true,
  async run(context) {
    const [file] = context.args.positionals;
    if (!file) throw invalidInput('manifest check needs a FILE');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new QuiverError(ErrorCodes.notFound, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    // The validators (and their schemas) load when the command runs (issue #28: the command list stays light).
    const [{ parseJsonText }, { validateManifest }, { validatePid }, { validatePluginMetadata }, { slugifyPluginName }] = await Promise.all([
      import('../../core/validation.ts'),
      import('../../core/manifest.ts'),
      import('../../core/pid.ts'),
      import('../../core/plugin-metadata.ts'),
      import('../../core/names.ts'),
    ]);
    const document = parseJsonText(text, file);
    const toolsFlag = context.args.values.tools;
    const registeredTools =
      typeof toolsFlag === 'string' ? toolsFlag.split(',').map((t) => t.trim()).filter(Boolean) : undefined;
    const kind = detectDocumentKind(document);
    const fallbackName = slugifyPluginName(basename(file) === 'quiver.json' ? basename(dirname(file)) : basename(file).replace(/\.json$/, ''));
    const pluginName = typeof context.args.values.plugin === 'string' ? context.args.values.plugin : undefined;
    const options = { ...(registeredTools ? { registeredTools } : {}) };
    const result =
      kind === 'quiver.json'
        ? validatePluginMetadata(document, { ...options, ...(pluginName ? { pluginName } : {}) })
        : kind === 'pid'
          ? validatePid(document, { ...options, ...(pluginName ? { pluginName } : {}) })
          : validateManifest(document, { ...options, pluginName: pluginName ?? fallbackName });
    if (context.json) {
      printJson(context.io, { file, kind, valid: result.valid, errors: result.errors, warnings: result.warnings });
    } else {
      context.io.stdout(`${file}: ${kind} ${result.valid ? 'is valid' : 'has errors'}\n`);
      for (const error of result.errors) context.io.stdout(`  error: ${error}\n`);
      for (const warning of result.warnings) context.io.stdout(`  warning: ${warning}\n`);
      if (!registeredTools && kind !== 'pid') {
        context.io.stdout('  note: examples were not checked against registered tools (pass --tools a,b)\n');
      }
    }
    return result.valid ? EXIT_CODES.ok : EXIT_CODES.usage;
  },
};
