/**
 * `switchyard calls inspect ID [--bodies] [--json]` (SPEC 2.2, O-2, O-6): the route trace of one
 * request and, with `--bodies`, its flight recording — the client's body, the body sent upstream and the
 * upstream's reply on each attempt, and what the client got — from the running instance's admin API
 * (`GET /admin/api/route-traces/{id}`, `GET /admin/api/calls/{id}/recording`).
 */
import type { RecordedBody, RecordingView } from "../admin/flight-recorder.ts";
import { AdminNotFound, type AdminCall, type CliIo } from "./routing.ts";

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

/** Prints the trace (and the recording with `--bodies`). */
export async function inspectCommand(opts: InspectOptions, call: AdminCall, io: CliIo): Promise<void> {
  if (!opts.id) io.fail("usage: switchyard calls inspect ROUTE_ID [--bodies] [--json]", 2);
  const id = encodeURIComponent(opts.id);
  const trace = await call("GET", `/route-traces/${id}`);
  if (!opts.bodies) return io.out(JSON.stringify(trace, null, 2));
  const found = await call("GET", `/calls/${id}/recording`, undefined, { notFound: true });
  if (found instanceof AdminNotFound) {
    // The call is known (its trace was found) but its bodies are not: print what there is, then why
    // and how to record them (the admin API's message), and exit 1 (the bodies asked for are missing).
    io.out(JSON.stringify(opts.json ? { trace, recording: null } : trace, null, 2));
    io.fail(`no bodies: ${found.message}`);
  }
  const rec = found as RecordingView;
  if (opts.json) return io.out(JSON.stringify({ trace, recording: rec }, null, 2));
  io.out(JSON.stringify(trace, null, 2));
  io.out("");
  io.out(`=== client request (${rec.clientFormat}, ${size(rec.client)})`);
  io.out(show(rec.client));
  for (const a of rec.attempts) {
    io.out("");
    io.out(`=== attempt ${a.n}: ${a.target} @ ${a.accountId} (${a.upstreamFormat}) → ${a.status ?? "no reply"}`);
    io.out(`--- sent upstream (${size(a.request)})`);
    io.out(show(a.request));
    io.out(`--- upstream reply (${size(a.reply)})`);
    io.out(show(a.reply));
  }
  io.out("");
  io.out(`=== sent to the client: ${rec.response.status} (${size(rec.response)})`);
  io.out(show(rec.response));
}
