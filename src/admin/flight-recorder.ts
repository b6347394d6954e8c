/**
 * The flight recorder (SPEC O-6): for the last N requests, the client's request body, the body sent
 * upstream on each attempt, the upstream's reply bytes and the bytes sent to the client — so a broken
 * translation can be seen side by side with its input. Off by default
 * (`settings.flight_recorder: {enabled, max_requests: 200, max_body_bytes: 1048576}`).
 *
 * Held in memory by this instance (a ring of `max_requests` entries, oldest evicted first); each body
 * is kept up to `max_body_bytes` and marked `truncated` beyond that, with its full byte count. Secrets
 * are scrubbed when a recording is read (pipeline/scrub.ts: every secret the instance holds, the key
 * the request presented, and anything shaped like a credential), before the body is cut (16 KiB past
 * the cut are kept for that and never shown: a secret across the cut is replaced whole), so what
 * leaves the instance through
 * `GET /admin/api/calls/{id}/recording` or `switchyard calls inspect ID --bodies` never carries one.
 * SSE bodies are also split into their events (eventsource-parser) for display. The reply of a request
 * that came over Codex's Responses WebSocket (SPEC 2.5) is recorded as what went over the socket: its
 * JSON text frames, one per event (the SSE event's data, without `event:`/`data:` framing), kept one a
 * line (a frame's line breaks, JSON whitespace only, become spaces) and listed as `frames`.
 *
 * Cost: nothing while off (the request context's `recording` stays undefined). While on, each chunk
 * is copied once into a bounded list.
 */
import { createParser } from "eventsource-parser";
import type { AttemptRecording, FlightRecording } from "../../pipeline/ports.ts";
import { bodyBytes, presentedSecrets, scrubbedHead, scrubText, type RequestContext } from "../../pipeline/index.ts";

/** `settings.flight_recorder` as the recorder reads it. */
export interface FlightRecorderSettings {
  enabled: boolean;
  /** Requests kept (the ring's size). Default 200. */
  maxRequests: number;
  /** Bytes kept per body. Default 1 MiB. */
  maxBodyBytes: number;
}

/** Defaults of `settings.flight_recorder` (SPEC O-6). */
export const FLIGHT_RECORDER_DEFAULTS: FlightRecorderSettings = { enabled: false, maxRequests: 200, maxBodyBytes: 1024 * 1024 };

/**
 * Bytes kept past `max_body_bytes` so that a secret the cut goes through is still whole when the body
 * is scrubbed (longer than any credential the scrubber knows: keys, OAuth and JWT tokens, a PEM private
 * key block); they are never shown.
 */
export const SCRUB_MARGIN_BYTES = 16 * 1024;

/** A body kept up to a byte limit (and {@link SCRUB_MARGIN_BYTES} more, for scrubbing only). */
class BoundedBody {
  private parts: Uint8Array[] = [];
  private kept = 0;
  /** Every byte seen, kept or not. */
  total = 0;

  constructor(private readonly limit: number) {}

  add(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    this.total += bytes.byteLength;
    const room = this.limit + SCRUB_MARGIN_BYTES - this.kept;
    if (room <= 0) return;
    // Copy: the caller's buffer may be reused or transferred.
    const part = bytes.byteLength <= room ? bytes.slice() : bytes.slice(0, room);
    this.parts.push(part);
    this.kept += part.byteLength;
  }

  /**
   * The body as text, scrubbed of `secrets` ({@link scrubText}) and cut at `max_body_bytes`: scrubbed
   * before it is cut, so a secret across the cut is replaced whole, not kept in part. The text kept
   * past the cut (the margin) is scrubbed with the rest and then dropped: what is shown is the
   * scrubbed first `max_body_bytes` bytes up to where they stop agreeing with the scrubbed longer text
   * (a secret cut there is left out; pipeline/scrub.ts scrubbedHead).
   */
  scrubbed(secrets: Iterable<string>): string {
    const all = Buffer.concat(this.parts);
    const whole = new TextDecoder().decode(all);
    if (!this.truncated) return scrubText(whole, secrets);
    return scrubbedHead(whole, new TextDecoder().decode(all.subarray(0, this.limit)), secrets);
  }

  get truncated(): boolean {
    return this.total > this.limit;
  }
}

/** One recorded body as the admin API answers it. */
export interface RecordedBody {
  /** The body as text (UTF-8), secrets scrubbed, cut at `max_body_bytes`. */
  body: string;
  /** Bytes of the whole body. */
  bytes: number;
  truncated: boolean;
  /** For a Server-Sent Events body: its events in order (`event` defaults to `message`). */
  events?: Array<{ event: string; data: string }>;
}

/** One request's recording as the admin API answers it. */
export interface RecordingView {
  requestId: string;
  routeId: string;
  /** ms since the epoch when the request arrived. */
  at: number;
  endpoint: string;
  clientFormat: string;
  requestedModel: string;
  /**
   * How the request came: `http`, or `websocket` (a frame on Codex's Responses WebSocket): then a
   * committed reply's `response` is the JSON frames sent over the socket, one a line, also as
   * `response.frames`; a refusal before the first event is the HTTP answer the socket turned into one
   * `{"type":"error","status":…,"error":…}` frame.
   */
  transport: "http" | "websocket";
  client: RecordedBody;
  attempts: Array<{
    n: number;
    target: string;
    accountId: string;
    upstreamFormat: string;
    /** Upstream HTTP status; absent when no reply came (connection failure, timeout). */
    status?: number;
    request: RecordedBody;
    reply: RecordedBody;
  }>;
  /** `frames`: a Responses WebSocket reply's frames as sent, in order (each a JSON text); absent over HTTP. */
  response: RecordedBody & { status: number; frames?: string[] };
}

interface AttemptEntry {
  target: string;
  accountId: string;
  upstreamFormat: string;
  status?: number;
  sse: boolean;
  request: BoundedBody;
  reply: BoundedBody;
}

interface Entry {
  requestId: string;
  routeId: string;
  at: number;
  endpoint: string;
  clientFormat: string;
  /** The request context until the request finishes (then its body is copied and it is let go). */
  ctx?: RequestContext;
  requestedModel: string;
  client: BoundedBody;
  /** The client's body was handed over before a stage rewrote it (FlightRecording.clientBody). */
  clientTaken: boolean;
  attempts: AttemptEntry[];
  responseStatus: number;
  responseSse: boolean;
  /** How the request came (RequestContext.transport). */
  transport: "http" | "websocket";
  /** The reply went to the Responses WebSocket as frames: `response` holds them, one a line. */
  framed: boolean;
  response: BoundedBody;
  /** The key the request presented, for scrubbing its echoes; never part of a view. */
  presented: string[];
}

const isSse = (headers: Headers) => (headers.get("content-type") ?? "").includes("text/event-stream");

/** The flight recorder of one instance. */
export class FlightRecorder {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param settings read when a request starts (so `PATCH /settings` applies to the next request)
   * @param secrets every secret the instance holds, read when a recording is viewed
   */
  constructor(
    private readonly settings: () => FlightRecorderSettings,
    private readonly secrets: () => Iterable<string>,
  ) {}

  /** Hooks for a request that is starting, or undefined while the recorder is off. */
  start(ctx: RequestContext): FlightRecording | undefined {
    const s = this.settings();
    if (!s.enabled) {
      if (this.entries.size > 0) this.entries.clear();
      return undefined;
    }
    const limit = s.maxBodyBytes;
    const entry: Entry = {
      requestId: ctx.requestId,
      routeId: ctx.routeId,
      at: ctx.startedAt,
      endpoint: ctx.endpoint,
      clientFormat: ctx.clientFormat,
      ctx,
      requestedModel: "",
      client: new BoundedBody(limit),
      clientTaken: false,
      attempts: [],
      responseStatus: 0,
      responseSse: false,
      transport: ctx.transport ?? "http",
      framed: false,
      response: new BoundedBody(limit),
      presented: presentedSecrets(ctx.request.headers),
    };
    this.entries.set(ctx.requestId, entry);
    while (this.entries.size > Math.max(1, s.maxRequests)) this.entries.delete(this.entries.keys().next().value!);
    return {
      clientBody: (bytes) => {
        entry.client.add(bytes);
        entry.clientTaken = true;
      },
      attempt: (a): AttemptRecording => {
        const at: AttemptEntry = { target: a.target, accountId: a.accountId, upstreamFormat: a.upstreamFormat, sse: false, request: new BoundedBody(limit), reply: new BoundedBody(limit) };
        at.request.add(a.body);
        entry.attempts.push(at);
        return {
          headers: (status, headers) => {
            at.status = status;
            at.sse = isSse(headers);
          },
          bytes: (chunk) => at.reply.add(chunk),
        };
      },
      response: (res) => {
        this.captureClient(entry);
        entry.responseStatus = res.status;
        entry.responseSse = isSse(res.headers);
        if (!res.body) return res;
        const copy = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            entry.response.add(chunk);
            controller.enqueue(chunk);
          },
        });
        return new Response(res.body.pipeThrough(copy), { status: res.status, statusText: res.statusText, headers: res.headers });
      },
      // The Responses WebSocket's events (SPEC 2.5) are kept as the frames the socket sent (src/http/
      // responses-socket.ts: each event's data, an empty one or `[DONE]` skipped), one a line.
      events: (batch) => {
        entry.framed = true;
        let text = "";
        for (const ev of batch) {
          if (ev.data.length === 0 || ev.data === "[DONE]") continue;
          text += (ev.data.includes("\n") || ev.data.includes("\r") ? ev.data.replace(/[\r\n]+/g, " ") : ev.data) + "\n";
        }
        if (text) entry.response.add(text);
      },
    };
  }

  /** Copies the client body out of the request context and lets the context go. */
  private captureClient(entry: Entry): void {
    const ctx = entry.ctx;
    if (!ctx) return;
    entry.ctx = undefined;
    if (!entry.clientTaken) entry.client.add(bodyBytes(ctx));
    entry.requestedModel = ctx.requestedModel;
  }

  /**
   * Why no recording of `id` is kept, saying what to do: the answer of `GET /calls/{id}/recording` when
   * {@link get} has none. `traced` says whether the instance knows the call (a route trace of that id);
   * `servedBy`, when another instance on the shared store served it (the trace's instance): its name,
   * id and URL (undefined when it published none lately: stopped, or not reachable), whose memory holds
   * the recording if one was kept (try20 D5: "repeat the request" sent the operator behind a load
   * balancer to a random instance again).
   */
  missing(id: string, traced: boolean, servedBy?: { name?: string; id: string; url?: string }): string {
    if (!traced) return `No call ${id} is known (no route trace of that id): take a route id from switchyard calls list or a reply's X-Switchyard-Route-Id header.`;
    if (servedBy) {
      const who = `instance ${servedBy.name ? `${servedBy.name} (${servedBy.id})` : servedBy.id}`;
      const ask = servedBy.url
        ? `ask it: switchyard calls inspect ${id} --bodies --url ${servedBy.url} (GET ${servedBy.url}/admin/api/calls/${id}/recording)`
        : "ask it with switchyard calls inspect --bodies --url and its URL; it has not reported to the shared database in the last minutes, so it may have stopped, and its recordings with it";
      return `The call ${id} was served by ${who}, not this one: recordings live in the memory of the instance that served the request, so its bodies, if that instance recorded them, are there; ${ask}.`;
    }
    const s = this.settings();
    if (!s.enabled) {
      return `The call ${id} exists, but its bodies were not recorded: the flight recorder is off (the default). Turn it on with settings.flight_recorder: {enabled: true} in the config file, with PATCH /admin/api/settings {"flight_recorder": {"enabled": true}} or from the dashboard's Calls page, then repeat the request; its route trace is at GET /admin/api/route-traces/${id}.`;
    }
    return `The call ${id} exists, but this instance keeps no recording of it: the flight recorder keeps the last ${s.maxRequests} requests (settings.flight_recorder.max_requests) that this instance served since the recorder was turned on; repeat the request to record it.`;
  }

  /** Whether a recording of this request id is kept. */
  has(requestId: string): boolean {
    return this.entries.has(requestId);
  }

  /** The recording of a request, by request id or route id, secrets scrubbed; undefined when not kept. */
  get(id: string): RecordingView | undefined {
    let entry = this.entries.get(id);
    if (!entry) for (const e of this.entries.values()) if (e.routeId === id) entry = e;
    if (!entry) return undefined;
    this.captureClient(entry);
    const secrets = [...this.secrets(), ...entry.presented];
    const view = (b: BoundedBody, sse: boolean): RecordedBody => {
      const body = b.scrubbed(secrets);
      const out: RecordedBody = { body, bytes: b.total, truncated: b.truncated };
      if (sse) out.events = sseEvents(body);
      return out;
    };
    // A reply that went over the Responses WebSocket is its frames, not an SSE text to split.
    const response = view(entry.response, entry.responseSse && !entry.framed);
    return {
      requestId: entry.requestId,
      routeId: entry.routeId,
      at: entry.at,
      endpoint: entry.endpoint,
      clientFormat: entry.clientFormat,
      requestedModel: entry.requestedModel,
      client: view(entry.client, false),
      attempts: entry.attempts.map((a, i) => ({
        n: i + 1,
        target: a.target,
        accountId: a.accountId,
        upstreamFormat: a.upstreamFormat,
        ...(a.status !== undefined ? { status: a.status } : {}),
        request: view(a.request, false),
        reply: view(a.reply, a.sse),
      })),
      transport: entry.transport,
      response: { status: entry.responseStatus, ...response, ...(entry.framed ? { frames: lines(response.body) } : {}) },
    };
  }
}

/** The lines of a text kept one frame a line (a cut-off last line is left out). */
function lines(text: string): string[] {
  const out = text.split("\n");
  out.pop();
  return out;
}

/** The events of an SSE text (a cut-off last event is left out). */
export function sseEvents(text: string): Array<{ event: string; data: string }> {
  const out: Array<{ event: string; data: string }> = [];
  const parser = createParser({ onEvent: (m) => out.push({ event: m.event ?? "message", data: m.data }) });
  parser.feed(text);
  return out;
}
