/**
 * @module cli/commands
 * Every CLI command, in the order `quiver --help` lists them.
 */
import type { CommandSpec } from '../command.ts';
import { serveCommand } from './serve.ts';
import { keysCommands } from './keys.ts';
import { userCommands } from './users.ts';
import { benchCommand } from './bench.ts';
import { manifestCheckCommand } from './manifest.ts';
import { toolsCommands } from './tools.ts';
import { evalCommand } from './eval.ts';
import { pluginCommands } from './plugin.ts';
import { pluginEnvCommands } from './plugin-env.ts';
import { pluginMountCommands } from './plugin-mounts.ts';
import { rolloutCommands } from './rollout.ts';
import { pinningCommands } from './pinning.ts';
import { trustCommands } from './trust.ts';
import { importCommand } from './import.ts';
import { clientConfigCommand } from './client-config.ts';
import { workspaceCommands } from './workspace.ts';
import { selectionCommands } from './select.ts';
import { embeddingsCommands } from './embeddings.ts';
import { verifyCommands } from './verify.ts';
import { learnedExampleCommands } from './learned-examples.ts';
import { pidCommands } from './pid.ts';

/** All commands. */
export const commands: CommandSpec[] = [serveCommand, ...pluginCommands, ...rolloutCommands, ...pluginEnvCommands, ...pluginMountCommands, ...pinningCommands, ...trustCommands, importCommand, clientConfigCommand, ...workspaceCommands, ...toolsCommands, ...learnedExampleCommands, ...pidCommands, ...selectionCommands, ...embeddingsCommands, ...verifyCommands, manifestCheckCommand, evalCommand, ...keysCommands, ...userCommands, benchCommand];
