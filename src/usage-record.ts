/**
 * The usage row of a finished request (SPEC O-1, S-4, 9.5): the figures the store records and the log
 * line, metrics and cost read, made from the request's context and the report its `finish` got. Made
 * after the reply has been handed over (src/app.ts `finish`, src/after-reply.ts), with the time of
 * `finish`.
 */
import type { Finished, RequestContext } from "../pipeline/index.ts";
import type { UsageRecord } from "../pipeline/ports.ts";

/** Which instance serves (newuser12a G11): its name (`server.instance_name`, else `host:port`) and id (a UUID per process). */
export interface ServedBy {
  readonly name: string;
  readonly id: string;
}

/**
 * The instance's {@link ServedBy} as a function to call per request: the object is made again only when
 * the running configuration's `server` section (replaced as a whole on every change) or the listening
 * `host:port` changed, so a request reads the one made for its configuration instead of building
 * `{ name, id }` anew (review14 R9; docs/performance.md item 219).
 */
export function servedByOf(config: () => { readonly server: { readonly instanceName?: string } }, listening: () => string, id: string): () => ServedBy {
  let server: object | undefined;
  let listen = "";
  let made: ServedBy = { name: "", id };
  return () => {
    const c = config().server;
    const l = listening();
    if (c !== server || l !== listen) {
      server = c;
      listen = l;
      made = { name: c.instanceName ?? l, id };
    }
    return made;
  };
}

/**
 * The usage row of the request `ctx`, finished as `f` at `now` (ms since the epoch): its served model
 * and account, usage, outcome, first-byte and total time (ms since it started), what the token savers
 * removed, the instance that served it (`servedBy`) and how the request came (`http`, or `websocket` for
 * a Responses WebSocket frame), in the literal so every row has one shape. A
 * probe answered locally (SPEC G-5) is recorded as served by switchyard itself. Its cost is set later,
 * by the accounting (src/limits/accounting.ts).
 */
export function usageRecordOf(ctx: RequestContext, f: Finished, now: number, servedBy: ServedBy): UsageRecord {
  const rec: UsageRecord = {
    requestId: ctx.requestId,
    ts: ctx.startedAt,
    clientFormat: ctx.clientFormat,
    requestedModel: ctx.requestedModel,
    providerId: ctx.probe ? "switchyard" : f.target?.provider.id,
    model: ctx.probe ? `probe:${ctx.probe}` : f.target?.model,
    accountId: f.account?.id,
    // a disabled key's refusal has no ctx.key but names it in the trace (try18 D19)
    keyName: ctx.key?.name ?? ctx.trace.keyName,
    usage: f.usage ?? {},
    // SPEC O-1: only a reply can lack the provider's usage; a request no model served (a key's limit,
    // a bad request, every attempt failed) has no usage of a reply, so nothing in its row is estimated.
    // What failed attempts' providers reported (ctx.billed) is added by the accounting, never estimated,
    // and is no served reply's: counted once (src/limits/accounting.ts addBilled).
    estimated: !f.usageSeen && !ctx.probe && f.firstByteAt !== undefined,
    outcome: f.outcome,
    status: f.status,
    ttfbMs: f.firstByteAt !== undefined ? f.firstByteAt - ctx.startedAt : undefined,
    totalMs: now - ctx.startedAt,
    attempts: f.attempts,
    fallback: f.fallback,
    instance: servedBy.name,
    instanceId: servedBy.id,
    // a Responses WebSocket frame (SPEC 2.5), else an HTTP request of its own (try17's tryout)
    transport: ctx.transport ?? "http",
  };
  // Attempts an account answered with 429: counted against that account (Usage by account).
  let limited: string[] | undefined;
  for (const a of ctx.trace.attempts) if (a.status === 429 && a.accountId !== undefined) (limited ??= []).push(a.accountId);
  if (limited) rec.rateLimited = limited;
  // SPEC S-4: what the token savers removed from the body that was served.
  const saver = ctx.trace.tokenSaver;
  if (saver && "results" in saver) {
    rec.savedChars = saver.charsBefore - saver.charsAfter;
    rec.savedTokens = saver.tokensSaved;
  }
  return rec;
}
