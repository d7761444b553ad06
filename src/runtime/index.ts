/**
 * @module runtime
 * Running plugin servers safely (DESIGN §3.6): the supervisor and what it is made of. The
 * public surface is the supervisor, the spec schema, the trust → isolation mapping, the
 * breaker and limiter building blocks, and host probing.
 */
export { createSupervisor } from './supervisor.ts';
export type { AnnouncedToolList, CallOptions, Discovery, PluginHealth, PluginState, SandboxOptions, Supervisor, SupervisorOptions } from './supervisor.ts';
export * from './types.ts';
export { isolationPolicyFor, trustLevelForScore, defaultLimits } from './isolation-policy.ts';
export type { IsolationPolicy } from './isolation-policy.ts';
export { createCircuitBreaker } from './breaker.ts';
export type { BreakerOutcome, BreakerPermit, BreakerSnapshot, BreakerState, CircuitBreaker } from './breaker.ts';
export { createTokenBucket, takeAll } from './rate-limit.ts';
export type { TokenBucket } from './rate-limit.ts';
export { createSemaphore } from './semaphore.ts';
export { detectHost } from './host-detection.ts';
export { supervisorMarkerName } from './sandbox-identity.ts';
export type { LaunchDescription } from './sandbox.ts';
export type { HostCapabilities } from './host-detection.ts';
export { createRedactor, redactorForSpec } from './redact.ts';
export { healthScore } from './health.ts';
