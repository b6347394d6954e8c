/**
 * `switchyard calls inspect ID [--bodies] [--json]` (SPEC 2.2, O-2, O-6): the route trace of one
 * request (as lines to read; `--json` the admin API's object) and, with `--bodies`, its flight recording — the client's body, the body sent upstream and the
 * upstream's reply on each attempt, and what the client got (over Codex's Responses WebSocket: the JSON
 * frames the socket sent, one a line, not SSE) — from the running instance's admin API
 * (`GET /admin/api/route-traces/{id}`, `GET /admin/api/calls/{id}/recording`).
 */
import type { RouteTrace } from "../../pipeline/ports.ts";
import { answeredErrorHead, refreshLines, tokenSaverSentence } from "../../pipeline/trace-words.ts";
import type { RecordedBody, RecordingView } from "../admin/flight-recorder.ts";
import { dollarsColumn } from "../limits/dollars.ts";
import { AdminNotFound, type AdminCall, type CliIo } from "./routing.ts";
import { visible } from "./terminal.ts";

/** Options of `calls inspect`. */
export interface InspectOptions {
  id?: string;
  bodies: boolean;
  json: boolean;
}

/** A body for reading: pretty JSON when it is JSON, else as it is; the cut said. */
function show(b: RecordedBody): string {
  let text = b.body;
  if (!b.truncated && !b.events) {
    try {
      text = JSON.stringify(JSON.parse(b.body), null, 2);
    } catch {
      // not JSON: as recorded
    }
  }
  return b.truncated ? `${text}\n[… cut at ${new TextEncoder().encode(b.body).byteLength} of ${b.bytes} bytes]` : text;
}

const size = (b: RecordedBody) => `${b.bytes} bytes${b.events ? `, ${b.events.length} events` : ""}${b.truncated ? ", truncated" : ""}`;

/** A call's transport in words: `http`, `websocket` (…), or `unknown` (…) for one recorded before it was kept. */
export function transportWords(t: unknown): string {
  if (t === "http") return "http";
  if (t === "websocket") return "websocket (Codex's Responses WebSocket: one response.create frame in, the reply's events out as JSON frames)";
  return "unknown (recorded before switchyard kept how a call came)";
}

/** "341 ms" / "1.4 s". */
const dur = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

/** "email 2, phone 1". */
const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

/**
 * A route trace as lines to read (what the dashboard's call view shows): when and what was asked, the
 * outcome with its status and time, how the request came (http, websocket, or unknown for a trace of an
 * earlier version), the error answer the client got (when no reply was served), the candidates, each decision, each attempt (target, account,
 * status, timing, classification and effect, error, the token refresh it led to), warnings, token savers and redaction counts.
 * Each line is one line: a client's or an upstream's control characters in it (a model name's CR/LF,
 * an error message's ESC) are escaped ({@link visible}).
 */
export function traceLines(t: RouteTrace): string[] {
  const lines = [
    `${t.routeId}  ${new Date(t.ts).toISOString()}`,
    `requested   ${t.requestedModel || "(no model)"} (${t.clientFormat})${t.keyName ? `, key ${t.keyName}` : ""}`,
    `outcome     ${t.outcome ?? "unknown"}${t.status !== undefined ? ` ${t.status}` : ""}${t.totalMs !== undefined ? `, ${dur(t.totalMs)}` : ""}`,
  ];
  // Which of several instances on one store served it (newuser12a G11); absent in traces of earlier versions.
  if (t.instance) lines.push(`instance    ${t.instance}${t.instanceId ? ` (${t.instanceId})` : ""}`);
  // How it came (try17's tryout); a trace of an earlier version names none: unknown, never guessed.
  lines.push(`transport   ${transportWords(t.transport)}`);
  // The error answer the client got (a refusal, or the last error after every target failed).
  if (t.error) lines.push(`error       ${answeredErrorHead(t.error)}${t.error.param ? ` (${t.error.param})` : ""}: ${t.error.message}`);
  lines.push(`candidates  ${t.candidates.length ? t.candidates.join(" → ") : "none"}`);
  if (t.decisions.length) {
    lines.push("decisions");
    for (const d of t.decisions) lines.push(`  ${d.verdict.padEnd(5)} ${d.subject}: ${d.reason}`);
  }
  if (t.attempts.length === 0) lines.push(`attempts    none${t.outcome === "rejected" ? " (refused before any upstream call)" : ""}`);
  else {
    lines.push("attempts");
    t.attempts.forEach((a, i) => {
      const timing = `started +${dur(a.startMs)}${a.durationMs !== undefined ? `, took ${dur(a.durationMs)}` : ""}`;
      lines.push(`  ${i + 1}. ${a.target}${a.accountId ? ` @ ${a.accountId}` : ""} → ${a.status ?? "no status"}, ${timing}`);
      if (a.classification) lines.push(`     ${a.classification}${a.effect ? ` → ${a.effect}` : ""}`);
      if (a.error) lines.push(`     error: ${a.error}`);
      if (a.refresh) for (const l of refreshLines(a.refresh)) lines.push(`     ${l}`);
    });
  }
  if (t.warnings.length) {
    lines.push("warnings");
    for (const w of t.warnings) lines.push(`  ${w.code}: ${w.message}`);
  }
  // What the token savers did, in the dashboard's words: shortened, skipped and why, or looked and left alone.
  if (t.tokenSaver) lines.push(tokenSaverSentence(t.tokenSaver));
  if (t.redactions && Object.keys(t.redactions).length) lines.push(`redacted    ${counts(t.redactions)}${t.restored && Object.keys(t.restored).length ? `; restored ${counts(t.restored)}` : ""}`);
  return lines.map(visible);
}

/**
 * A call's cost cell in `calls list` (SPEC 9.5), as `usage`'s cost cells and the dashboard's Calls page
 * read it: the amount (`money`: the column's formatter, dollarsColumn), "$0.024 + unpriced" for a call
 * partly unpriced (`unpriced`, its `costUsd` the part that had a price: a failed attempt at a priced
 * model, then a model without a price served it), "unpriced" when nothing it used had a price, "-"
 * when it has no cost (nothing served).
 */
export function callCostCell(c: Record<string, unknown>, money: (usd: number) => string): string {
  const cost = typeof c.costUsd === "number" && Number.isFinite(c.costUsd) ? c.costUsd : undefined;
  if (c.unpriced === true) return cost !== undefined && cost > 0 ? `${money(cost)} + unpriced` : "unpriced";
  return cost !== undefined ? money(cost) : "-";
}

/** The legend line under `calls list` when a listed call is unpriced (what `usage`'s legend says of its rows). */
export const CALLS_UNPRICED_MEANS =
  "unpriced: the call used a model without a price (the one that served it or a failed attempt's); its cost counts only the part that had a price, as a USD budget does (give the model a settings.pricing entry)";

/**
 * The `calls list` table (`calls`: GET /admin/api/calls's rows, newest first; `table`: the CLI's
 * plain-text table): time, route id, model, target, status, outcome, ms, cost (USD at API prices, as
 * the dashboard's Calls page: {@link callCostCell}, one number of decimals down the column as `usage`'s,
 * two significant digits of its smallest amount; until 2026-12-08 only `--json` had it), transport
 * (http, websocket or unknown: recorded before it was kept) and instance (which of several instances
 * on one store served it); and `web_searches` when a listed call had some (`usage.webSearches`, the
 * provider's server-side searches priced into its cost; "-" for the others), left out when none had
 * (until 2026-12-08 the list never showed them). A legend line follows when a listed call is unpriced.
 */
export function callsTable(calls: ReadonlyArray<Record<string, unknown>>, table: (head: string[], rows: unknown[][]) => string): string {
  const searches = (c: Record<string, unknown>) => Number((c.usage as { webSearches?: unknown } | undefined)?.webSearches ?? 0);
  const withSearches = calls.some((c) => searches(c) > 0);
  // the amounts the column writes: every call's but a wholly unpriced one's (as the Calls page's columnCosts)
  const money = dollarsColumn(calls.map((c) => (typeof c.costUsd === "number" && (c.unpriced !== true || c.costUsd > 0) ? c.costUsd : undefined)));
  const out = table(
    ["time", "route_id", "model", "target", "status", "outcome", "ms", "cost", "transport", "instance", ...(withSearches ? ["web_searches"] : [])],
    calls.map((c) => [
      new Date(Number(c.ts)).toISOString(),
      c.routeId ?? "-",
      c.requestedModel,
      c.providerId ? `${c.providerId}/${c.model}` : "-",
      c.status,
      c.outcome,
      c.totalMs,
      callCostCell(c, money),
      c.transport ?? "unknown",
      c.instance ?? "-",
      ...(withSearches ? [searches(c) > 0 ? searches(c) : "-"] : []),
    ]),
  );
  return calls.some((c) => c.unpriced === true) ? `${out}\n\n${CALLS_UNPRICED_MEANS}` : out;
}

/** Prints the trace (and the recording with `--bodies`). */
export async function inspectCommand(opts: InspectOptions, call: AdminCall, io: CliIo): Promise<void> {
  if (!opts.id) io.fail("usage: switchyard calls inspect ROUTE_ID [--bodies] [--json]", 2);
  const id = encodeURIComponent(opts.id);
  const trace = (await call("GET", `/route-traces/${id}`)) as RouteTrace;
  const printTrace = () => (opts.json ? io.out(JSON.stringify(trace, null, 2)) : traceLines(trace).forEach((l) => io.out(l)));
  if (!opts.bodies) return printTrace();
  const found = await call("GET", `/calls/${id}/recording`, undefined, { notFound: true });
  if (found instanceof AdminNotFound) {
    // The call is known (its trace was found) but its bodies are not: print what there is, then why
    // and how to record them (the admin API's message), and exit 1 (the bodies asked for are missing).
    if (opts.json) io.out(JSON.stringify({ trace, recording: null }, null, 2));
    else printTrace();
    io.fail(`no bodies: ${visible(found.message)}`);
  }
  const rec = found as RecordingView;
  if (opts.json) return io.out(JSON.stringify({ trace, recording: rec }, null, 2));
  printTrace();
  io.out("");
  io.out(`=== client request (${rec.clientFormat}, ${size(rec.client)})`);
  // over the WebSocket the client sent a response.create frame: what is kept is the request made of it
  if (rec.transport === "websocket") io.out("(a response.create frame over Codex's Responses WebSocket, as the Responses request the gateway made of it: type and previous_response_id left out, that response's conversation put before input, stream: true)");
  io.out(show(rec.client));
  for (const a of rec.attempts) {
    io.out("");
    io.out(`=== attempt ${a.n}: ${visible(a.target)} @ ${visible(a.accountId)} (${a.upstreamFormat}) → ${a.status ?? "no reply"}`);
    io.out(`--- sent upstream (${size(a.request)})`);
    io.out(show(a.request));
    io.out(`--- upstream reply (${size(a.reply)})`);
    io.out(show(a.reply));
  }
  io.out("");
  if (rec.transport === "websocket") return showSocketReply(rec.response, io);
  io.out(`=== sent to the client: ${rec.response.status} (${size(rec.response)})`);
  io.out(show(rec.response));
}

/**
 * What a Responses WebSocket request's client got (SPEC 2.5): the reply's events as the JSON text frames
 * the socket sent, one a line (not the SSE an HTTP client gets), or, for a request refused before its
 * first event, the HTTP answer the socket turned into one error frame.
 */
function showSocketReply(r: RecordingView["response"], io: CliIo): void {
  if (r.frames) {
    // the recording keeps each frame followed by a line break: a whole one's frames are its bytes less one a frame
    const sized = r.truncated ? `the recording cut at ${new TextEncoder().encode(r.body).byteLength} of ${r.bytes} bytes, the frame cut there left out` : `${r.bytes - r.frames.length} bytes`;
    io.out(`=== sent to the client over the WebSocket: ${r.frames.length} JSON text frames (${sized})`);
    io.out("the reply went over Codex's Responses WebSocket as response.* JSON frames, one per event (no SSE event:/data: lines); one frame a line:");
    for (const f of r.frames) io.out(f);
    return;
  }
  io.out(`=== sent to the client over the WebSocket: refused with ${r.status} (${size(r)})`);
  io.out(`the gateway refused the request before any event: the socket sent this answer as one frame {"type":"error","status":${r.status},"error":…} with the body's error`);
  io.out(show(r));
}
