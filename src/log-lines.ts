/** Bytes a {@link LineBuffer} gathers before it writes them (and the size of its buffer). */
export const LINE_BUFFER_BYTES = 64 * 1024;

/**
 * Where a {@link LineBuffer} sends its bytes: `bytes` is a view of the buffer's own memory, valid only
 * until `done` is called; the writer calls `done` once it has written or copied them (at once for a
 * synchronous write). Until then the buffer gathers into other memory.
 */
export type LineWriter = (bytes: Uint8Array, done: () => void) => void;

/**
 * Log lines gathered and written together (SPEC O-4: one JSON line per request): under load a write
 * per request is a syscall per request. Each line is written as UTF-8 followed by "\n" into a buffer of
 * {@link LINE_BUFFER_BYTES} kept for the life of the process, written out at the end of the current
 * macrotask burst (setImmediate), when the next line would not fit, and at shutdown (`flush`). A line
 * that does not fit in an empty buffer is written on its own, after the lines before it. Lines are never
 * split between writes and keep their order.
 *
 * Why a kept buffer (issue 17, docs/performance.md item 125): joining the lines into a string and
 * writing that made a fresh 64 KiB string (and its UTF-8 copy) per write, memory the allocator had
 * given back to the system, and every first touch of a page costs ~15 µs on the sandbox VM.
 */
export class LineBuffer {
  private bytes: Buffer;
  /** A second buffer, free again after a write that finished late; used instead of allocating. */
  private spare: Buffer | undefined;
  private used = 0;
  private scheduled = false;

  constructor(
    private readonly write: LineWriter,
    private readonly capacity: number = LINE_BUFFER_BYTES,
  ) {
    this.bytes = Buffer.allocUnsafeSlow(capacity);
  }

  push(line: string): void {
    // A UTF-16 unit is at most 3 UTF-8 bytes: only near the end of the buffer is the line measured.
    if (this.used + line.length * 3 + 1 > this.capacity) {
      const size = Buffer.byteLength(line, "utf8") + 1;
      if (this.used + size > this.capacity) {
        this.flush();
        if (size > this.capacity) {
          this.write(Buffer.from(line + "\n", "utf8"), noop);
          return;
        }
      }
    }
    this.used += this.bytes.write(line, this.used);
    this.bytes[this.used++] = 0x0a;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes the gathered lines now (shutdown; also the scheduled end of a burst). */
  flush(): void {
    this.scheduled = false;
    if (this.used === 0) return;
    const bytes = this.bytes;
    const length = this.used;
    this.used = 0;
    let written = false;
    let late = false;
    this.write(bytes.subarray(0, length), () => {
      written = true;
      if (late && this.spare === undefined) this.spare = bytes;
    });
    if (written) return;
    // Still the writer's: gather the next lines elsewhere.
    late = true;
    this.bytes = this.spare ?? Buffer.allocUnsafeSlow(this.capacity);
    this.spare = undefined;
  }
}

function noop(): void {}

/**
 * The running gateway's request log (src/app.ts): lines written to the process's stdout. `done` is the
 * stream's write callback, which Bun calls once the bytes are written or queued as its own copy.
 */
export function stdoutLineBuffer(): LineBuffer {
  return new LineBuffer((bytes, done) => void process.stdout.write(bytes, done));
}

/**
 * The line of a stop that could not write everything while the database was away (try20 D2), counts
 * only: usage rows, route traces and routing/budget state changes from `Store.close` (lost ones, and
 * those kept on disk for the next start in `kept.file`), and the key-limit windows whose use
 * `SharedKeyCounters.close` could not report (always lost). Something lost: an `error` line, returned
 * (the process then exits 1). Everything kept: a `warn` line saying where, and undefined is returned
 * (nothing was lost: exit 0). Nothing unwritten: no line, undefined.
 */
export function unwrittenAtCloseLine(
  store: { usage: number; traces: number; state: number; kept?: { file: string; usage: number; traces: number; state: number } } | undefined | void,
  keyLimitWindows: number,
  now: number,
  log: (line: string) => void,
): string | undefined {
  const lost = { usage: store ? store.usage : 0, traces: store ? store.traces : 0, state: store ? store.state : 0, keyLimitWindows };
  const k = store ? store.kept : undefined;
  const kept = k && k.usage + k.traces + k.state > 0 ? k : undefined;
  const lostAny = lost.usage + lost.traces + lost.state + keyLimitWindows > 0;
  if (!lostAny && !kept) return undefined;
  const where = kept ? `kept in ${kept.file}, which the next start with this data directory writes to the database` : "";
  const msg = lostAny
    ? `stopping while the database is away: ${lost.usage} usage rows, ${lost.traces} route traces, ${lost.state} routing/budget state changes and the key-limit use of ${keyLimitWindows} windows were not written within the shutdown grace period (server.shutdown_grace_ms) and are lost${kept ? `; ${kept.usage} usage rows, ${kept.traces} route traces and ${kept.state} routing/budget state changes are ${where}` : ""}`
    : `stopping while the database is away: ${kept!.usage} usage rows, ${kept!.traces} route traces and ${kept!.state} routing/budget state changes were not written within the shutdown grace period (server.shutdown_grace_ms) and are ${where}; nothing is lost`;
  const fields = kept ? { keptUsage: kept.usage, keptTraces: kept.traces, keptState: kept.state, keptIn: kept.file } : {};
  const line = JSON.stringify({ level: lostAny ? "error" : "warn", time: now, msg, ...lost, ...fields });
  log(line);
  return lostAny ? line : undefined;
}
