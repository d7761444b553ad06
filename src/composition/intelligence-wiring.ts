/**
 * @module composition/intelligence-wiring
 * Wires PID generation (issue #14) from the configuration: the LLM chat client when
 * `QUIVER_LLM_BASE_URL` and `QUIVER_LLM_MODEL` are set (else LLM enrichment says how to set
 * it up), over the plugins and catalog services.
 */
import type { QuiverConfig } from '../config.ts';
import type { CatalogService } from '../catalog/index.ts';
import type { PluginService } from '../plugins/service.ts';
import type { Database } from '../store/database.ts';
import { createChatClient, createPidGenerationService, type PidGenerationService } from '../intelligence/index.ts';

/** The PID generation service of the app. */
export function wirePidGeneration(input: { db: Database; config: QuiverConfig; plugins: PluginService; catalog: CatalogService }): PidGenerationService {
  const { llm } = input.config;
  return createPidGenerationService({
    db: input.db,
    plugins: input.plugins,
    catalog: input.catalog,
    llm:
      llm === undefined
        ? undefined
        : {
            client: createChatClient({ baseUrl: llm.baseUrl, model: llm.model, apiKey: llm.apiKey, timeoutMs: llm.timeoutMs }),
            prices: { inputPerMillion: llm.priceInputPerMillion, outputPerMillion: llm.priceOutputPerMillion },
          },
  });
}
