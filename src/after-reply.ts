/**
 * Per-request bookkeeping that nothing in the reply depends on (the request's cost and key-limit use,
 * the usage row and route trace handed to the store, metrics, the OpenTelemetry span, the live event,
 * the log line: SPEC O-1..O-4, 9.4, 9.6), run after the reply has been handed to Bun instead of on its
 * critical path (issue 17: added latency at concurrency 1; docs/performance.md items 52 and 145). A request's reply is written when its handler's promise settles; a task queued here
 * runs in the next `setImmediate`, after that write.
 *
 * Whoever reads what these tasks produce settles the queue first ({@link AfterReply.settle}): the store
 * before each flush (its reads flush first), GET /metrics before rendering, the gateway before each
 * request starts (its key limits), the admin API's key use, the shutdown before it saves
 * budget windows; in-process readers of the log call `settle` too.
 * So a reader never sees a reply without its bookkeeping; only the moment the work runs moves.
 */
/** A task queued with up to three arguments ({@link AfterReply.add}). */
export type AfterTask<A, B, C> = (a: A, b: B, c: C) => void;

/** Slots per queued task in {@link AfterReply}'s flat queue: the task and its three arguments. */
const SLOTS = 4;

export class AfterReply {
  /**
   * The queued tasks, flat: each task followed by its three arguments, so that a caller queues a module
   * function with the request's values instead of a closure over them (two closures and a scope fewer
   * per request: `finish`'s report and the commit's success, docs/performance.md item 231).
   */
  private queue: unknown[] = [];
  /**
   * An emptied queue that takes the next tasks when {@link settle} takes the queue: the two arrays
   * alternate instead of a new array (and its storage grown by the pushes) per settle, which the next
   * request's start runs (docs/performance.md item 251). Undefined while a settle runs the tasks it
   * holds, so that a settle nested in a task never hands out an array still being read.
   */
  private spare: unknown[] | undefined = [];
  private scheduled = false;
  private readonly runScheduled = () => {
    this.scheduled = false;
    this.settle();
  };

  /** @param onError receives a task's exception (the task is dropped; the others still run) */
  constructor(private readonly onError: (err: unknown) => void) {}

  /**
   * Queues `task` to run after the current reply is handed over (next `setImmediate`), or at the next
   * {@link settle}, called with `a`, `b` and `c`.
   */
  add<A = undefined, B = undefined, C = undefined>(task: AfterTask<A, B, C>, a?: A, b?: B, c?: C): void {
    this.queue.push(task, a, b, c);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runScheduled);
    }
  }

  /** Runs every queued task now, in order (tasks queued meanwhile too). Never throws. */
  settle(): void {
    while (this.queue.length > 0) {
      const tasks = this.queue;
      this.queue = this.spare ?? [];
      this.spare = undefined;
      for (let i = 0; i < tasks.length; i += SLOTS) {
        try {
          (tasks[i] as AfterTask<unknown, unknown, unknown>)(tasks[i + 1], tasks[i + 2], tasks[i + 3]);
        } catch (err) {
          this.onError(err);
        }
      }
      // Emptied (nothing it held is kept alive), it takes the tasks after the next ones.
      tasks.length = 0;
      this.spare = tasks;
    }
  }
}
