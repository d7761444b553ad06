/**
 * @module verification/stages/schema-validation
 * Stage 3 (seed 000 §4.2 "Schema Validation: Ensure manifest conformance"): the rules of
 * `quiver manifest check` — the manifest (seed 002), the Plugin Intelligence Document
 * (seed 000 §3) and the plugin's own `quiver.json` — checked against the tools the plugin
 * really serves, and every tool's input and output schema compiled by ajv.
 *
 * Score: 100, minus 15 per hard error and per schema that does not compile, minus 2 per
 * warning (at most 20 for warnings), minus 5 per tool without a description (at most 15);
 * no tools at all scores 0.
 */
import { validateManifest } from '../../../core/manifest.ts';
import { validatePid } from '../../../core/pid.ts';
import { validatePluginMetadata } from '../../../core/plugin-metadata.ts';
import { parseSourceJson, readSourceFile } from '../../../plugins/source-files.ts';
import type { Stage, StageIssue, VerificationSubject } from '../../types.ts';
import { checkToolSchemas, createSchemaCheck } from './json-schemas.ts';

interface DocumentFindings {
  errors: string[];
  warnings: string[];
  checked: string[];
}

/** The plugin's own quiver.json, when its code folder has one. */
async function readQuiverJson(codeDir: string | null, findings: DocumentFindings): Promise<unknown> {
  if (codeDir === null) return undefined;
  let text: string | undefined;
  try {
    text = await readSourceFile(codeDir, 'quiver.json');
  } catch (error) {
    findings.errors.push(`quiver.json cannot be read: ${(error as Error).message}`);
    return undefined;
  }
  if (text === undefined) return undefined;
  const parsed = parseSourceJson(text, 'quiver.json');
  if ('error' in parsed) {
    findings.errors.push(parsed.error);
    return undefined;
  }
  return parsed.value;
}

/** Runs the manifest, PID and quiver.json validators (the same as `quiver manifest check`). */
async function checkDocuments(subject: VerificationSubject): Promise<DocumentFindings> {
  const registeredTools = subject.tools.map((tool) => tool.name);
  const findings: DocumentFindings = { errors: [], warnings: [], checked: [] };
  const add = (name: string, result: { errors: string[]; warnings: string[] }) => {
    findings.checked.push(name);
    findings.errors.push(...result.errors);
    findings.warnings.push(...result.warnings);
  };
  const quiverJson = await readQuiverJson(subject.codeDir, findings);
  if (quiverJson !== undefined) add('quiver.json', validatePluginMetadata(quiverJson, { pluginName: subject.pluginName, registeredTools }));
  if (subject.manifest !== null) add('manifest', validateManifest(subject.manifest, { pluginName: subject.pluginName, registeredTools }));
  if (subject.intelligence !== null) add('intelligence', validatePid(subject.intelligence, { pluginName: subject.pluginName, registeredTools }));
  // quiver.json carries the manifest and PID that are also stored: one finding, once.
  findings.errors = [...new Set(findings.errors)];
  findings.warnings = [...new Set(findings.warnings)];
  return findings;
}

/** The schema validation stage. */
export const schemaValidationStage: Stage = async (context) => {
  const { subject } = context;
  context.progress(`checking the documents and ${subject.tools.length} tool schemas`);
  const documents = await checkDocuments(subject);
  const schemas = checkToolSchemas(subject.tools, createSchemaCheck());
  const issues: StageIssue[] = [
    ...documents.errors.map((message) => ({ severity: 'high' as const, code: 'document_error', message })),
    ...documents.warnings.map((message) => ({ severity: 'low' as const, code: 'document_warning', message })),
    ...schemas.issues,
  ];
  if (subject.manifest === null && documents.checked.length === 0) {
    issues.push({ severity: 'info', code: 'no_manifest', message: 'no manifest, intelligence document or quiver.json: selection relies on the served descriptions alone' });
  }
  const undescribed = schemas.issues.filter((issue) => issue.code === 'no_description').length;
  let score = 100 - 15 * documents.errors.length - 15 * schemas.failed - Math.min(20, 2 * documents.warnings.length) - Math.min(15, 5 * undescribed);
  if (subject.tools.length === 0) {
    score = 0;
    issues.push({ severity: 'high', code: 'no_tools', message: 'the plugin serves no tools' });
  }
  return {
    score: Math.max(0, score),
    issues,
    metrics: { documents: documents.checked, schemasCompiled: schemas.compiled, schemasFailed: schemas.failed, tools: subject.tools.length },
  };
};
