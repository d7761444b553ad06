/**
 * @module runtime/supervisor/breakers
 * The circuit breakers of one plugin version (seed 000 §5.2): one for the plugin, one per tool
 * made on first use, all with the same settings (the PID's, over the supervisor's defaults).
 * They outlive settings changes of the plugin: a rotated credential does not forget failures.
 */
import { createCircuitBreaker, type BreakerState, type CircuitBreaker } from '../breaker.ts';
import type { CircuitBreakerConfig, Clock } from '../types.ts';

/** A plugin's breaker and its tools' breakers. */
export interface PluginBreakers {
  readonly plugin: CircuitBreaker;
  /** The tool's breaker, made on first use. */
  tool(name: string): CircuitBreaker;
  /** State of every tool breaker made so far, in the order they were made. */
  toolStates(): Record<string, BreakerState>;
  /** Closes every breaker (admin reset). */
  reset(): void;
}

/** Creates the breakers of one plugin version with `config`. */
export function createPluginBreakers(config: CircuitBreakerConfig, clock: Clock): PluginBreakers {
  const plugin = createCircuitBreaker(config, clock);
  const tools = new Map<string, CircuitBreaker>();
  return {
    plugin,
    tool(name) {
      let breaker = tools.get(name);
      if (!breaker) {
        breaker = createCircuitBreaker(config, clock);
        tools.set(name, breaker);
      }
      return breaker;
    },
    toolStates() {
      const states: Record<string, BreakerState> = {};
      for (const [name, breaker] of tools) states[name] = breaker.state();
      return states;
    },
    reset() {
      plugin.reset();
      for (const breaker of tools.values()) breaker.reset();
    },
  };
}
