/**
 * @module cli/empty-results
 * What the CLI says when a list comes back empty: why it is empty and what to do next, instead
 * of a bare table header (issue #15). Pure text; the commands gather the facts.
 */
import { QuiverError, ErrorCodes } from '../core/errors.ts';

const INSTALL_HINT = "install one with 'quiver plugin add SOURCE' (npm:<package>, a git URL, a folder or an http(s) MCP endpoint; see 'quiver plugin add --help')";

/** The catalog holds no tool at all. */
export function emptyCatalogMessage(): string {
  return `The catalog is empty: no plugin has registered tools yet; ${INSTALL_HINT}.\n`;
}

/** No plugin is installed (`quiver plugin list`). */
export function noPluginsMessage(includeRemoved: boolean): string {
  return `No plugins ${includeRemoved ? 'at all' : 'installed'}: ${INSTALL_HINT}.\n`;
}

/** Filters matched nothing although the catalog has tools. */
export function noToolsMatchMessage(filters: readonly string[], catalogTools: number): string {
  return `No tools match ${filters.join(' ')} (the catalog has ${catalogTools} tool${catalogTools === 1 ? '' : 's'}); 'quiver tools list' without filters lists them.\n`;
}

/** A `--plugin NAME` filter that names no plugin: a typo is an error, not an empty list. */
export function unknownPluginError(name: string, known: readonly string[]): QuiverError {
  const listed = known.length === 0 ? 'no plugin is installed' : `known: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}`;
  return new QuiverError(ErrorCodes.notFound, `no plugin named '${name}' (${listed}); 'quiver plugin list' shows them`, { details: { plugin: name } });
}

/** `quiver select` found no tool the caller may see. */
export function noCandidatesMessage(facts: { catalogTools: number; workspace: string; project?: string | undefined }): string {
  if (facts.catalogTools === 0) return `No tools to select from. ${emptyCatalogMessage()}`;
  const scope = `workspace '${facts.workspace}'${facts.project ? `, project '${facts.project}'` : ''}`;
  return (
    `No tools to select from: none of the catalog's ${facts.catalogTools} tool${facts.catalogTools === 1 ? '' : 's'} is enabled in ${scope} ` +
    `or allowed by its visibility rules. Enable a plugin there with 'quiver plugin enable NAME --workspace ${facts.workspace}' ` +
    `('quiver plugin list' shows the installed ones).\n`
  );
}

/** A marketplace search found nothing. */
export function noMarketplaceMatchMessage(query: string): string {
  return `No marketplace entry matches '${query}'. The marketplace holds what 'quiver marketplace import FILE' imported (an MCP Registry server.json); plugins can also be added directly with 'quiver plugin add SOURCE'.\n`;
}
