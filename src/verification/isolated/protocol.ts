/**
 * @module verification/isolated/protocol
 * The IPC messages between the hub and its verification child process.
 */
import type { PipelineProgress, PipelineResult } from '../pipeline.ts';
import type { VerificationSettings, VerificationSubject } from '../types.ts';

/** Hub → child. */
export type ParentMessage = { type: 'run'; subject: VerificationSubject; settings: VerificationSettings } | { type: 'abort' };

/** Child → hub. */
export type ChildMessage =
  | { type: 'progress'; progress: PipelineProgress }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; context: object; message?: string }
  | { type: 'result'; result: PipelineResult }
  | { type: 'failed'; message: string };
