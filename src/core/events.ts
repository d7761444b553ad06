/**
 * @module core/events
 * A typed in-process event: the way the composition root links a part built early to one built
 * later (issue #28). The early part is given `emit`; the later one `subscribe`s once it exists.
 * Nothing captures a variable that is assigned after the closure is made, so the order of
 * construction is the order in the source, and a link in the other direction is visible.
 */

/** One kind of event: `emit` tells every current subscriber, in subscription order. */
export interface Events<T> {
  emit(event: T): void;
  /** Adds a listener; the returned function removes it. */
  subscribe(listener: (event: T) => void): () => void;
}

/**
 * Creates an event. A listener that throws does not stop the others: its error goes to
 * `onListenerError` (the emitter's write has committed; it is not the emitter's failure).
 */
export function createEvents<T>(onListenerError: (error: unknown) => void): Events<T> {
  const listeners = new Set<(event: T) => void>();
  return {
    emit(event) {
      for (const listener of [...listeners]) {
        try {
          listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      // A wrapper, so the same function subscribed twice is two subscriptions.
      const entry = (event: T) => listener(event);
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
  };
}

/** An event whose emitter waits for its listeners: `emit` settles once every listener has. */
export interface AwaitedEvents<T> {
  emit(event: T): Promise<void>;
  /** Adds a listener; the returned function removes it. */
  subscribe(listener: (event: T) => void | Promise<void>): () => void;
}

/**
 * Creates an event for a link whose emitter must know the work is done when it returns (a user
 * report answers only once its re-verification is queued, so the queue is durable by then). The
 * listeners run one after another; one that throws or rejects goes to `onListenerError` and
 * the others still run, as with `createEvents`.
 */
export function createAwaitedEvents<T>(onListenerError: (error: unknown) => void): AwaitedEvents<T> {
  const listeners = new Set<(event: T) => void | Promise<void>>();
  return {
    async emit(event) {
      for (const listener of [...listeners]) {
        try {
          await listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      const entry = (event: T) => listener(event);
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
  };
}
