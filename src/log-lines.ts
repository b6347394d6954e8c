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
 * only: usage rows, route traces, routing/budget state changes and key budget windows' use from
 * `Store.close` (lost ones, and those kept on disk for the next start in `kept.file`, which counts the
 * budget use back), and `minuteWindows`, the rpm/tpm windows whose use `SharedKeyCounters.close` could
 * not report (never kept: they lapse within a minute, after which no limit counts them, so they are
 * said but not counted as lost: until session 37 they alone made the stop an error, exit 1). Something
 * lost: an `error` line, returned (the process then exits 1). Everything else kept: a `warn` line saying
 * where (and the minute windows not reported), and undefined is returned (exit 0). Nothing unwritten:
 * no line, undefined. `cut`: a second signal ended the
 * stop's retries before the grace period did (the line says so, not that the grace period ran out).
 * A store that names why (`while`: the embedded store's failing writes) did not wait for the grace
 * period, and the line does not name it.
 * Fields: `usage`, `traces`, `state`, `keyLimitWindows` (lost: minute windows and budget windows not
 * kept), and with something kept `keptUsage`, `keptTraces`, `keptState`, `keptKeyLimitWindows`, `keptIn`.
 * The store's rows refused earlier at its cap while its writes failed (`store.refused`) are lost too
 * (an `error` line, exit 1, also when the last flush wrote everything or kept the rest on disk):
 * `refusedUsage`, `refusedTraces`, and with the rows unwritten at the stop `lostUsage`, `lostTraces` (in all).
 * The account state changes lost before the stop (`store.earlierState`: those the store rejected, each
 * said in its `error` line then, and those the embedded store dropped at its cap on waiting writes) are
 * said apart from those still on their way at the stop (`state`), as lost earlier (an `error` line, exit
 * 1): `rejectedState`, `droppedState`, `lostState` (in all). Until session 44 they were all said to be
 * "not written at the stop".
 */
export function unwrittenAtCloseLine(
  store:
    | {
        usage: number;
        traces: number;
        state: number;
        keyUse?: number;
        while?: string;
        kept?: { file: string; usage: number; traces: number; state: number; keyUse?: number };
        refused?: { usage: number; traces: number; while: string };
        earlierState?: { rejected: number; droppedAtCap: number };
      }
    | undefined
    | void,
  minuteWindows: number,
  now: number,
  log: (line: string) => void,
  cut = false,
): string | undefined {
  const budgetsLost = store ? (store.keyUse ?? 0) : 0;
  const lost = { usage: store ? store.usage : 0, traces: store ? store.traces : 0, state: store ? store.state : 0, keyLimitWindows: minuteWindows + budgetsLost };
  const k = store ? store.kept : undefined;
  const kept = k && k.usage + k.traces + k.state + (k.keyUse ?? 0) > 0 ? { ...k, keyUse: k.keyUse ?? 0 } : undefined;
  const r = store && store.refused && store.refused.usage + store.refused.traces > 0 ? store.refused : undefined;
  const e = store && store.earlierState && store.earlierState.rejected + store.earlierState.droppedAtCap > 0 ? store.earlierState : undefined;
  const lostAtStop = lost.usage + lost.traces + lost.state + budgetsLost > 0;
  const lostAny = lostAtStop || !!r || !!e;
  if (!lostAny && !kept && !minuteWindows) return undefined;
  const away = `stopping while ${(store && store.while) || "the database is away"}`;
  // The embedded store's close (its `while`) does not wait for the grace period: its last flush failed at once (a full disk), and a longer grace would not have written them.
  const within = store && store.while ? "at the stop" : cut ? "before a second signal ended the stop" : "within the shutdown grace period (server.shutdown_grace_ms)";
  const why = [minuteWindows ? `${minuteWindows} rpm/tpm minute windows, not kept: they lapse within a minute` : "", budgetsLost ? `${budgetsLost} budget windows that could not be kept` : ""].filter(Boolean).join("; ");
  const keyLost = `the key-limit use of ${lost.keyLimitWindows} windows${why ? ` (${why})` : ""}`;
  const keptWhat = kept
    ? kept.keyUse
      ? `${kept.usage} usage rows, ${kept.traces} route traces, ${kept.state} routing/budget state changes and the key budget use of ${kept.keyUse} windows`
      : `${kept.usage} usage rows, ${kept.traces} route traces and ${kept.state} routing/budget state changes`
    : "";
  const where = kept ? `kept in ${kept.file}, which the next start with this data directory writes to the database${kept.keyUse ? " (counting the budget use back into each window still open then)" : ""}` : "";
  const keptOrMinutes = [kept ? `${keptWhat} were not written ${within} and are ${where}` : "", minuteWindows ? `the rpm/tpm use of ${minuteWindows} minute windows was not reported ${kept ? "" : `${within} `}(not kept: a minute window lapses within a minute)` : ""].filter(Boolean).join("; ");
  // rows the store refused earlier at its cap while its writes failed: lost then, said again here with the total
  // and account state changes lost before the stop: rejected (each said in its error line then) or dropped at the embedded store's cap
  const eState = e ? e.rejected + e.droppedAtCap : 0;
  const earlierState = e
    ? [e.rejected ? `${e.rejected} account state changes rejected earlier (each said in its error line then)` : "", e.droppedAtCap ? `${e.droppedAtCap} account state changes dropped earlier at the cap on writes waiting while the store refused them` : ""].filter(Boolean).join(" and ")
    : "";
  const earlierWhat = [r ? `${r.usage} usage rows and ${r.traces} route traces refused ${r.while}` : "", earlierState].filter(Boolean).join(", and ");
  const inAll = [r ? `${lost.usage + r.usage} usage rows and ${lost.traces + r.traces} route traces` : "", e ? `${lost.state + eState} routing/budget state changes` : ""].filter(Boolean).join(", and ") + " lost in all";
  const msg = lostAtStop
    ? `${away}: ${lost.usage} usage rows, ${lost.traces} route traces, ${lost.state} routing/budget state changes and ${keyLost} were not written ${within} and are lost${kept ? `; ${keptWhat} are ${where}` : ""}${r || e ? `; before, ${earlierWhat} are lost too: ${inAll}` : ""}`
    : r || e
      ? `${kept ? away : "stopping"}: ${earlierWhat} are lost: ${inAll}${keptOrMinutes ? `; ${keptOrMinutes}` : ""}${kept ? "" : "; the rest was written"}`
      : `${away}: ${keptOrMinutes}; nothing ${minuteWindows ? "else " : ""}is lost`;
  const keptFields = kept ? { keptUsage: kept.usage, keptTraces: kept.traces, keptState: kept.state, keptKeyLimitWindows: kept.keyUse, keptIn: kept.file } : {};
  const refusedFields = r ? { ...keptFields, refusedUsage: r.usage, refusedTraces: r.traces, lostUsage: lost.usage + r.usage, lostTraces: lost.traces + r.traces } : keptFields;
  const fields = e ? { ...refusedFields, rejectedState: e.rejected, droppedState: e.droppedAtCap, lostState: lost.state + eState } : refusedFields;
  const line = JSON.stringify({ level: lostAny ? "error" : "warn", time: now, msg, ...lost, ...fields });
  log(line);
  return lostAny ? line : undefined;
}

/** The requests a stop's progress counts (src/stop-gateway.ts StopProgress, the fields these lines read). */
interface StopCounts {
  startedAt: number;
  inflightAtStart: number;
  open(): { requests: number; streams: number };
  endedAtGraceEnd?: number;
  lastUsageRows?: number;
}

/** "1 request" / "3 requests": `n` and the noun, plural unless `n` is 1. */
function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The line of the last thing a stop does (src/main.ts, on stderr beside "shutting down"; try22 P8): how
 * long it took (ms, from its start to `now`), the requests in flight at its start and how they ended
 * (finished within the grace period, or ended at its end: a stream with its in-band error, a request
 * waiting on its upstream with a 503), the usage rows its last flush had to write, and the exit code
 * that follows. `forcedBy`: the signal whose second arrival ended the grace period early (exit 130 /
 * 143). An `info` line for exit 0, else `warn` (the outage's error line, src/log-lines.ts
 * unwrittenAtCloseLine, says what exit 1 lost).
 */
export function stoppedLine(p: StopCounts, exitCode: number, forcedBy: string | undefined, now: number): string {
  const ms = now - p.startedAt;
  const ended = p.endedAtGraceEnd ?? p.open().requests;
  const finished = Math.max(0, p.inflightAtStart - ended);
  const how =
    p.inflightAtStart === 0 && ended === 0
      ? "no request was in flight"
      : `of ${counted(p.inflightAtStart, "request", "requests")} in flight at its start, ${finished} finished within the grace period and ${ended} ${ended === 1 ? "was" : "were"} ended at its end (a stream with its in-band error, a request still waiting on its upstream with a 503)`;
  const rows = p.lastUsageRows === undefined ? "" : `; the last flush had ${counted(p.lastUsageRows, "usage row", "usage rows")} to write`;
  const head = forcedBy ? `stopped early by a second ${forcedBy}: exit ${exitCode}` : `stopped: exit ${exitCode}`;
  return JSON.stringify({
    level: exitCode === 0 ? "info" : "warn",
    time: now,
    msg: `${head} after ${(ms / 1000).toFixed(1)} s; ${how}${rows}`,
    signal: forcedBy,
    exitCode,
    ms,
    inflightAtStart: p.inflightAtStart,
    finishedInGrace: finished,
    endedAtGraceEnd: ended,
    lastFlushUsageRows: p.lastUsageRows,
  });
}

/**
 * The line of a second signal during a stop (src/main.ts; try22 P5): it ends the grace period now;
 * says what then happens to the requests still open, only what applies (`open`: all of them, streams
 * included, and the streams among them), and that a third signal exits at once.
 */
export function secondSignalLine(signal: string, open: { requests: number; streams: number }, now: number): string {
  const waiting = Math.max(0, open.requests - open.streams);
  const parts: string[] = [];
  if (open.streams > 0) parts.push(open.streams === 1 ? "a stream still open ends with its in-band error" : `${open.streams} streams still open end with their in-band error`);
  if (waiting > 0) parts.push(waiting === 1 ? "a request still waiting on its upstream gets a 503" : `${waiting} requests still waiting on their upstream get a 503`);
  const what = parts.length === 0 ? "no request is still open" : parts.join(" and ");
  return JSON.stringify({
    level: "warn",
    time: now,
    msg: `second ${signal} during the shutdown grace period: ending it now; ${what}; a third signal exits at once`,
    signal,
    inflight: open.requests,
  });
}

/**
 * The line of a third signal during a stop (src/main.ts; try22 P3): the process exits with `exitCode`
 * at once, without the last writes, so the requests answered since the stop began (counted from
 * `p`: in flight at its start and not open now; those answered just before it may be among the
 * unwritten too) may have no log line or usage row, and the ones still open are cut.
 */
export function thirdSignalLine(signal: string, exitCode: number, p: StopCounts | undefined, now: number): string {
  const open = p ? p.open().requests : 0;
  const answered = p ? Math.max(0, p.inflightAtStart - open) : 0;
  const lost = `the ${counted(answered, "request", "requests")} answered since the stop began (and any answered just before it) may have no log line or usage row`;
  const cut = open > 0 ? `, and ${counted(open, "request", "requests")} still open ${open === 1 ? "is" : "are"} cut off` : "";
  return JSON.stringify({
    level: "warn",
    time: now,
    msg: `third signal (${signal}) during the shutdown: exit ${exitCode} now, without waiting for the last writes: ${lost}${cut}`,
    signal,
    answeredSinceStop: answered,
    inflight: open,
  });
}

/**
 * The line of a start that failed (src/main.ts, try22 P9): an `error` line on stderr, where the start's
 * other lines (`switchyard listening`, `stopped`) go, written before the same text for people; its
 * `error` is that text (a config file's problems one a line after the first,
 * joined with "\n"; without a leading "switchyard failed to start: ", the line's msg): the config file it
 * cannot use, a port it cannot listen on, a data directory another instance holds. `now`: ms since the epoch.
 */
export function startFailedLine(error: string, now: number): string {
  // the text people read opens with the msg itself, which `error` does not repeat
  return JSON.stringify({ level: "error", time: now, msg: "switchyard failed to start", error: error.replace(/^switchyard failed to start: /, "") });
}
