/**
 * @module runtime/process-transport
 * An MCP stdio client transport that owns its process tree. Unlike the SDK's
 * StdioClientTransport it starts the plugin as the leader of a new session and process
 * group, remembers the tail of its stderr (for error messages, redacted by the caller) and,
 * on close, kills the whole tree: group, descendants found in /proc and its cgroup.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CgroupHandle } from './cgroup.ts';
import { JsonLineReader } from './json-lines.ts';
import { descendantsOf, isAlive, signalGroup, signalProcess, waitAtMost, waitForExit } from './process-tree.ts';

/** How the process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when Quiver asked it to stop. */
  requested: boolean;
}

/** Options of a process transport. */
export interface ProcessTransportOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  cgroup?: CgroupHandle;
  /** Time a plugin gets to exit after its stdin closes, then after SIGTERM (ms). */
  stopGraceMs?: number;
  /** Bytes of stderr kept for error messages. */
  stderrTailBytes?: number;
  maxBufferSize?: number;
}

const defaultStderrTail = 4_096;

/** A Transport over a child process that it kills, whole, on close. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once with how the process exited (before `onclose`). */
  onexit?: (info: ExitInfo) => void;

  readonly #options: ProcessTransportOptions;
  readonly #lines: JsonLineReader;
  #process: ChildProcess | undefined;
  #started: Promise<void> | undefined;
  #stderrTail = '';
  #stopRequested = false;
  #exited: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ProcessTransportOptions) {
    this.#options = options;
    this.#lines = new JsonLineReader(options.maxBufferSize);
  }

  /** The pid of the process Quiver spawned (the launcher chain execs, so it stays the plugin's). */
  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** The last few KB of the plugin's stderr (unredacted: redact before showing). */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /**
   * Spawns the process; resolves once it is running. Starting again returns the same start:
   * the era probe (`era-probe.ts`) starts the process, then the client that speaks the era it
   * found connects on the same pipe.
   */
  start(): Promise<void> {
    this.#started ??= this.#spawn();
    return this.#started;
  }

  #spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#options.command, this.#options.args, {
        env: this.#options.env,
        cwd: this.#options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        // A new session: the plugin leads its own process group, killed as one.
        detached: true,
        shell: false,
      });
      this.#process = child;
      this.#exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.onexit?.({ code, signal, requested: this.#stopRequested });
      });
      child.once('close', () => {
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      // JSON per line; the client's protocol layer checks each message's JSON-RPC shape (json-lines.ts).
      child.stdout?.on('data', (chunk: Buffer) => {
        this.#lines.push(
          chunk,
          (message) => this.onmessage?.(message),
          (error) => this.onerror?.(error),
        );
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        const limit = this.#options.stderrTailBytes ?? defaultStderrTail;
        this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-limit);
      });
    });
  }

  /** Writes one JSON-RPC message to the plugin's stdin. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#process?.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) return Promise.reject(new Error('plugin process is not running'));
    return new Promise((resolve, reject) => {
      const ok = stdin.write(serializeMessage(message), (error) => (error ? reject(error) : undefined));
      if (ok) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Stops the plugin and every process it started; resolves when they are gone. */
  close(): Promise<void> {
    this.#closing ??= this.#kill();
    return this.#closing;
  }

  async #kill(): Promise<void> {
    const child = this.#process;
    this.#stopRequested = true;
    if (!child || child.pid === undefined) return;
    const pid = child.pid;
    const grace = this.#options.stopGraceMs ?? 1_000;
    const running = (): boolean => child.exitCode === null && child.signalCode === null;
    // Remember the tree now: once the leader dies its children are re-parented and lost.
    const tree = new Set(descendantsOf(pid));
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (running()) await waitAtMost(this.#exited, grace);
    if (running()) {
      for (const descendant of descendantsOf(pid)) tree.add(descendant);
      signalGroup(pid, 'SIGTERM');
      await waitAtMost(this.#exited, grace);
    }
    for (const descendant of descendantsOf(pid)) tree.add(descendant);
    signalGroup(pid, 'SIGKILL');
    if (isAlive(pid)) signalProcess(pid, 'SIGKILL');
    for (const descendant of tree) signalProcess(descendant, 'SIGKILL');
    await this.#options.cgroup?.killAll();
    await waitAtMost(this.#exited, 5_000);
    await waitForExit([...tree], 5_000);
    await this.#options.cgroup?.remove();
    this.#lines.clear();
  }
}
