/**
 * @module core/native-names
 * Native names (issue #12): a workspace may expose tools, prompts and resources under their
 * plugin's own names instead of `plugin__name`. A name stays prefixed when it would be
 * ambiguous: two plugins serve it, or it equals a name the gateway already shows (a meta-tool,
 * another item's prefixed name). Pure, so the gateway and the CLI/API report agree.
 */

/** The gateway's own tool names (gateway/meta-tools `META_TOOL_NAMES`; a test keeps them equal): never shown natively. */
export const GATEWAY_TOOL_NAMES: ReadonlySet<string> = new Set(['search_tools', 'call_tool', 'list_capabilities', 'load_capability']);

/** One item a plugin serves: its plugin, its own name and the prefixed name Quiver gives it. */
export interface NamedItem {
  pluginName: string;
  /** The plugin's own name (tool name, prompt name or resource URI). */
  name: string;
  /** The prefixed form (`plugin__tool`, `plugin__prompt`, `quiver://plugin/…`). */
  prefixed: string;
}

/** An item kept under its prefixed name, and why. */
export interface KeptPrefixed {
  prefixed: string;
  name: string;
  reason: string;
}

/** The names a list is shown under. */
export interface NativeNaming {
  /** Shown name by prefixed name (the native name where it is unambiguous). */
  shown: Map<string, string>;
  /** Prefixed name by native name, for the names actually shown natively. */
  byNative: Map<string, string>;
  /** Every item kept prefixed, with its reason, ordered by prefixed name. */
  keptPrefixed: KeptPrefixed[];
}

/**
 * Decides which items are shown natively. `reserved` are names the session shows besides
 * these items (meta-tools); a native name equal to one of them, or to any prefixed name,
 * stays prefixed so that one name never means two things.
 */
export function nativeNaming(items: readonly NamedItem[], reserved: ReadonlySet<string> = new Set()): NativeNaming {
  const pluginsByName = new Map<string, Set<string>>();
  for (const item of items) {
    const plugins = pluginsByName.get(item.name) ?? new Set<string>();
    plugins.add(item.pluginName);
    pluginsByName.set(item.name, plugins);
  }
  const prefixedNames = new Set(items.map((item) => item.prefixed));
  const naming: NativeNaming = { shown: new Map(), byNative: new Map(), keptPrefixed: [] };
  for (const item of items) {
    const reason = collisionReason(item, pluginsByName.get(item.name)!, reserved, prefixedNames);
    if (reason === undefined) {
      naming.shown.set(item.prefixed, item.name);
      naming.byNative.set(item.name, item.prefixed);
    } else {
      naming.shown.set(item.prefixed, item.prefixed);
      naming.keptPrefixed.push({ prefixed: item.prefixed, name: item.name, reason });
    }
  }
  naming.keptPrefixed.sort((a, b) => byCodeUnits(a.prefixed, b.prefixed));
  return naming;
}

/** Locale-independent order, so reports read the same on every machine. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function collisionReason(item: NamedItem, plugins: ReadonlySet<string>, reserved: ReadonlySet<string>, prefixedNames: ReadonlySet<string>): string | undefined {
  if (plugins.size > 1) return `'${item.name}' is served by ${plugins.size} plugins: ${[...plugins].sort().join(', ')}`;
  if (reserved.has(item.name)) return `'${item.name}' is the name of a gateway tool`;
  if (prefixedNames.has(item.name) && item.name !== item.prefixed) return `'${item.name}' is another item's prefixed name`;
  return undefined;
}

/** What a workspace's native names look like for its plugins' tools (the CLI and API report). */
export interface NativeNameReport {
  workspace: string;
  nativeNames: boolean;
  /** Tools shown under their own names (when native names are on), as `name → prefixed`. */
  native: Array<{ name: string; prefixed: string }>;
  keptPrefixed: KeptPrefixed[];
}

/** The report of a workspace's tool names; tools without a plugin are not renamed and not listed. */
export function nativeNameReport(
  workspace: string,
  nativeNames: boolean,
  tools: ReadonlyArray<{ name: string; qualifiedName: string; pluginName: string | null }>,
  reserved: ReadonlySet<string>,
): NativeNameReport {
  const items = tools.flatMap((tool) => (tool.pluginName === null ? [] : [{ pluginName: tool.pluginName, name: tool.name, prefixed: tool.qualifiedName }]));
  const naming = nativeNaming(items, reserved);
  const native = [...naming.byNative].map(([name, prefixed]) => ({ name, prefixed })).sort((a, b) => byCodeUnits(a.name, b.name));
  return { workspace, nativeNames, native, keptPrefixed: naming.keptPrefixed };
}
