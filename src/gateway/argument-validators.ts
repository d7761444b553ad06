/**
 * @module gateway/argument-validators
 * Tool arguments checked against the tool's input schema before a call leaves the gateway
 * (a bad call is the model's mistake, InvalidParams, not the plugin's). Compiled validators
 * are cached by schema text, bounded.
 */
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Logger } from '../core/logger.ts';
import type { GatewayTool } from './backend.ts';

/** Validates a tool's arguments: the error message, or undefined when they pass. */
export interface ValidatorCache {
  validate(tool: GatewayTool, args: unknown): Promise<string | undefined>;
}

/**
 * Compiled argument validators, cached by schema text (bounded). ajv (the SDK's provider) loads
 * with the first call to validate (issue #28: an idle server with no plugin calls no tool).
 */
export function createValidatorCache(logger: Logger): ValidatorCache {
  let provider: AjvJsonSchemaValidator | undefined;
  let loading: Promise<AjvJsonSchemaValidator> | undefined;
  const cache = new Map<string, JsonSchemaValidator<unknown> | null>();
  async function loadProvider(): Promise<AjvJsonSchemaValidator> {
    loading ??= import('@modelcontextprotocol/sdk/validation/ajv').then(({ AjvJsonSchemaValidator }) => (provider = new AjvJsonSchemaValidator()));
    return loading;
  }
  return {
    async validate(tool, args) {
      const key = JSON.stringify(tool.inputSchema);
      let validator = cache.get(key);
      if (validator === undefined) {
        const compiler = provider ?? (await loadProvider());
        // Another call may have compiled it while the provider loaded.
        validator = cache.get(key);
        if (validator === undefined) {
          try {
            validator = compiler.getValidator(tool.inputSchema as never);
          } catch (error) {
            // A schema the validator cannot compile is the plugin's problem: let the plugin judge.
            logger.debug({ err: error, tool: tool.qualifiedName }, 'input schema does not compile; arguments not validated');
            validator = null;
          }
          if (cache.size >= 2000) cache.clear();
          cache.set(key, validator);
        }
      }
      if (!validator) return undefined;
      const result = validator(args);
      return result.valid ? undefined : result.errorMessage;
    },
  };
}
