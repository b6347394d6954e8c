/**
 * The bound on a committed stream whose upstream sends only keep-alives (SPEC 6.4: a stream silent
 * for the provider's idle timeout is closed; reasoning models that stream nothing for long must not be
 * cut by a shorter timer). The idle timer of committed-reads.ts counts silence between reads, so an
 * upstream that keeps pinging (Anthropic's `event: ping`, SSE comments such as `: keep-alive` or
 * `: OPENROUTER PROCESSING`, REFERENCE §0) resets it forever: after a passthrough commits at a block's
 * start, such an upstream would hold its client for as long as it pings, and a translated client, which
 * gets nothing of the pings, just as long with nothing.
 *
 * A reply decoded into hub events (a translated stream, or a same-format reply normalised through the
 * hub) counts by what its events carried instead of by bytes (SPEC 6.4: a stream that sends nothing for
 * the idle timeout is silent, whatever its framing): a read is content when the decoder made an event
 * with content of it (a block's start, non-empty text, reasoning, arguments or a signature: the
 * driver's `contentEvents`, counted before the normalizer or a client encoder holds anything back), or
 * when it ends no event (a piece of a longer one, as a long tool call's arguments in one event arrive);
 * so an upstream that repeats events without content (a Chat chunk with an empty `delta`, a usage
 * chunk) is cut like one that only pings. The events of what the hub leaves out that show the upstream
 * at work (a server tool's blocks, a hosted web search's progress: StreamDecoder.progress) count as
 * content too. A native passthrough counts the same way, by its tap's count (TapState.contentEvents:
 * the taps read each event's name or bytes anyway, and look for content by native searches and byte
 * compares only while the sweep has seen none since its last pass ({@link ContentWatch.wants},
 * TapState.looking): about once a sweep period in a steady stream, at every read of one that pings): Anthropic's empty deltas among its pings, Chat chunks with an empty
 * delta, a Responses `keepalive` or `response.in_progress` are no content there either. Only a driver
 * that counts nothing (a reply replayed from a whole body) is counted by bytes.
 *
 * No timer per stream: each committed stream's reads are one {@link ContentWatch} (made by
 * `committedReads`), which counts the upstream reads that brought something other than keep-alives
 * ({@link isKeepAlive}: a compare of the read's length, and a few byte compares for a short read; for
 * a decoded reply a compare of two counts, and for a read that made no event with content a native
 * search for an event's end, {@link endsAnEvent}). One
 * shared sweep, running only while a stream is open, looks at every watched stream every
 * {@link sweepPeriodMs} (1 s, less for an idle timeout under 4 s): a stream that has been waiting on an
 * upstream read and got no content read for its idle timeout is ended, through the same abort as the
 * idle timer, with {@link keepAliveOnlyError} as the format's in-band error. A stream is cut between
 * its idle timeout and that plus two sweep periods after its last content. Time the stream spends not
 * waiting on the upstream (a client that holds the reply back) does not count, nor does time the event
 * loop itself was held past a sweep period (a loaded gateway is not a silent upstream).
 *
 * A server tool that works in silence (Anthropic's web search: its `server_tool_use` block, then only
 * `ping` events until its `web_search_tool_result`; a Responses hosted tool's item between its
 * progress events and its end, with `keepalive` events) is the upstream at work, not a dead one: while
 * the stream's driver says one is in flight (ReplyDriver.serverToolRunning: the taps' and decoders'
 * count of server tools started and not yet answered), keep-alives keep the stream alive up to
 * {@link SERVER_TOOL_IDLE_FACTOR} times the idle timeout (SPEC 6.4's 180 s of a slow provider for the
 * default 60 s), so an upstream that pings forever is still closed. The sweep asks the driver only
 * when a stream is due: no cost per read.
 */
import { hubError, type HubError } from "../formats/hub.ts";

/**
 * How many idle timeouts a stream may bring only keep-alives while a server tool is in flight upstream
 * (module doc): 3, so the default 60 s becomes 180 s, the idle timeout SPEC 6.4 gives Codex and slow
 * providers, and a slow provider's 180 s becomes 540 s.
 */
export const SERVER_TOOL_IDLE_FACTOR = 3;

/** What the sweep asks a due stream's driver (pipeline/re-translate.ts ReplyDriver.serverToolRunning). */
export interface ServerToolSource {
  readonly serverToolRunning?: boolean;
}

/** Reads longer than this are content whatever they hold (a keep-alive is one short line or event, ~14–40 bytes). */
export const KEEP_ALIVE_MAX_BYTES = 160;
/** The sweep's period when every watched stream's idle timeout is 4 s or more, ms. */
const MAX_SWEEP_MS = 1000;

const LF = 10;
const CR = 13;
const COLON = 58;
const E = 101; // "e"
const D = 100; // "d"
const P = 112; // "p"
const T = 116; // "t"
/** The lines of Anthropic's `ping` event, with and without the space after a colon (REFERENCE §0, §1.3). */
const PING_LINES = ["event: ping", "event:ping", 'data: {"type": "ping"}', 'data: {"type":"ping"}', 'data:{"type": "ping"}', 'data:{"type":"ping"}'].map((s) => Buffer.from(s));

/**
 * Whether `b` (one upstream read) holds only keep-alives: every line in it is empty, an SSE comment
 * (`:` first), or a line of Anthropic's `ping` event. A read that ends mid-line counts by what it holds
 * (the line's start); a read of content, even a short one, fails at its first line's first bytes.
 */
export function isKeepAlive(b: Uint8Array): boolean {
  // A read of content fails here at its first bytes: an `event:` line not of a ping (`event: c…`,
  // `event: r…`), a `data:` line whose object does not start with `"t` (Chat's `{"id"`, Gemini's
  // `{"candidates"`), anything else that is not a comment or a line end.
  const c0 = b[0];
  if (c0 === E) {
    if (b[7] !== P && b[6] !== P) return false;
  } else if (c0 === D) {
    if (b[8] !== T && b[7] !== T) return false;
  } else if (c0 !== COLON && c0 !== LF && c0 !== CR) return false;
  const n = b.length;
  let at = 0;
  while (at < n) {
    const c = b[at];
    if (c === LF || c === CR) {
      at++;
      continue;
    }
    if (c === COLON) {
      while (at < n && b[at] !== LF && b[at] !== CR) at++;
      continue;
    }
    const len = pingLineAt(b, at);
    if (len === 0) return false;
    at += len;
  }
  return true;
}

/** The length of the {@link PING_LINES} line at `at` when one is there, ending the line or the read; else 0. */
function pingLineAt(b: Uint8Array, at: number): number {
  outer: for (const p of PING_LINES) {
    const end = at + p.length;
    if (end > b.length) continue;
    for (let i = 0; i < p.length; i++) if (b[at + i] !== p[i]) continue outer;
    if (end === b.length || b[end] === LF || b[end] === CR) return p.length;
  }
  return 0;
}

/**
 * Whether `b` (one upstream read) ends an SSE event somewhere: it holds a blank line (`\n\n`, `\n\r` of
 * `\r\n\r\n`, or `\r\r`). Native searches: one per line end in it (a read in the middle of a long
 * event's data line has none).
 */
export function endsAnEvent(b: Uint8Array): boolean {
  for (let i = b.indexOf(LF); i !== -1; i = b.indexOf(LF, i + 1)) {
    const next = b[i + 1];
    if (next === LF || next === CR) return true;
  }
  for (let i = b.indexOf(CR); i !== -1; i = b.indexOf(CR, i + 1)) if (b[i + 1] === CR) return true;
  return false;
}

/**
 * The in-band error of a committed stream whose upstream sent no content, only keep-alives or events
 * without any, for `ms` (SPEC 6.4); `serverTool`: a server tool was in flight all that time (the longer
 * bound, {@link SERVER_TOOL_IDLE_FACTOR}).
 */
export function keepAliveOnlyError(ms: number, serverTool = false): HubError {
  const what = serverTool ? " while a server tool was at work" : "";
  return hubError("timeout", `The upstream stream sent no content, only keep-alive pings or empty events, for ${ms / 1000} s${what} and was closed.`, {
    status: 504,
    code: "upstream_idle_timeout",
  });
}

/**
 * The committed streams the sweep looks at: a list through the watches themselves (adding and removing
 * one is a few pointer writes, no hashing), its first one here.
 */
let first: ContentWatch | undefined;
let count = 0;
let sweep: ReturnType<typeof setInterval> | undefined;
let periodMs = MAX_SWEEP_MS;
/** When (performance.now()) the sweep last ran. */
let lastSweep = 0;

/** The sweep's period for a stream with this idle timeout: a quarter of it, at most {@link MAX_SWEEP_MS}. */
export function sweepPeriodMs(idleMs: number): number {
  return Math.max(10, Math.min(MAX_SWEEP_MS, Math.floor(idleMs / 4)));
}

/**
 * One committed stream's reads as the sweep sees them: `content` counts upstream reads that were not
 * only keep-alives ({@link saw}), `waiting` says whether a read of the upstream waits now (set by
 * committed-reads.ts). {@link start} and {@link stop} add it to and remove it from the sweep;
 * `expire` is called (once, from the sweep, after it was removed) when it waited `idleMs` without a
 * content read, or {@link SERVER_TOOL_IDLE_FACTOR} times that while `driver` says a server tool is in
 * flight (asked only then), with the bound that ran out (ms) and whether it was the server tool's.
 */
export class ContentWatch {
  content = 0;
  waiting = false;
  /** `content` at the last sweep (-1 before the first). */
  seen = -1;
  /** When (performance.now()) the sweep last saw `content` change or the stream not waiting. */
  since = 0;
  /** Neighbours in the sweep's list; `listed` while in it. */
  prev: ContentWatch | undefined = undefined;
  next: ContentWatch | undefined = undefined;
  listed = false;

  constructor(
    readonly idleMs: number,
    readonly expire: (ms: number, serverTool: boolean) => void,
    readonly driver?: ServerToolSource,
  ) {}

  /**
   * Whether a content read now would change what the next sweep sees: nothing was counted since its
   * last pass (false before its first, which starts the stream's clock anyway). A driver that looks for
   * content at a cost (a passthrough tap, TapState.looking) looks only then: about once a sweep period
   * in a steady stream.
   */
  wants(): boolean {
    return this.content === this.seen;
  }

  /** One upstream read: counted unless it held only keep-alives. */
  saw(chunk: Uint8Array): void {
    if (chunk.byteLength > KEEP_ALIVE_MAX_BYTES || !isKeepAlive(chunk)) this.content++;
  }

  /**
   * One upstream read of a reply decoded into hub events: counted when the decoder made an event with
   * content of it (`grew`), or when it ends no event and is not a keep-alive (a piece of a longer
   * event); not when it brought only whole events without content (empty deltas, usage) or keep-alives.
   */
  sawDecoded(chunk: Uint8Array, grew: boolean): void {
    if (this.content !== this.seen) return; // already counted since the sweep's last pass
    if (grew || (!endsAnEvent(chunk) && (chunk.byteLength > KEEP_ALIVE_MAX_BYTES || !isKeepAlive(chunk)))) this.content++;
  }

  /** Adds the stream to the sweep (starting it, or making it run more often for a shorter idle timeout). */
  start(): void {
    if (this.listed) return;
    this.listed = true;
    this.next = first;
    if (first) first.prev = this;
    first = this;
    count++;
    const period = sweepPeriodMs(this.idleMs);
    if (sweep !== undefined && period >= periodMs) return;
    if (sweep !== undefined) clearInterval(sweep);
    periodMs = period;
    lastSweep = performance.now();
    sweep = setInterval(sweepOnce, period);
    sweep.unref?.();
  }

  /** Takes the stream off the sweep; idempotent. */
  stop(): void {
    if (!this.listed) return;
    this.listed = false;
    if (this.prev) this.prev.next = this.next;
    else first = this.next;
    if (this.next) this.next.prev = this.prev;
    this.prev = this.next = undefined;
    count--;
  }
}

/** One pass of the sweep over the watched streams; stops the sweep when none is left. */
function sweepOnce(): void {
  if (count === 0) {
    clearInterval(sweep);
    sweep = undefined;
    periodMs = MAX_SWEEP_MS;
    return;
  }
  const now = performance.now();
  // A sweep that ran late (the event loop was busy) does not count the delay as anyone's silence.
  const held = Math.max(0, now - lastSweep - 2 * periodMs);
  lastSweep = now;
  for (let w = first; w !== undefined; ) {
    const next = w.next;
    if (w.content !== w.seen || !w.waiting) {
      w.seen = w.content;
      w.since = now;
    } else {
      w.since += held;
      const silent = now - w.since;
      if (silent >= w.idleMs) {
        // Due: a server tool in flight upstream (asked only now) has the longer bound.
        const serverTool = w.driver?.serverToolRunning === true;
        const bound = serverTool ? w.idleMs * SERVER_TOOL_IDLE_FACTOR : w.idleMs;
        if (silent >= bound) {
          w.stop();
          w.expire(bound, serverTool);
        }
      }
    }
    w = next;
  }
}

/** Streams the sweep watches now (tests). */
export function watchedStreams(): number {
  return count;
}
