/**
 * The pipeline assembled (SPEC 3): guard → redact → resolve → order → attempt loop (pick → translate →
 * save-tokens → execute → commit) → re-translate; POST /v1/messages/count_tokens stops after order
 * (count-tokens.ts). src/ provides the ports; this module knows no HTTP framework.
 */
import { hubError, type HubError } from "../formats/hub.ts";
import { runAttempts, type AttemptDeps, type AttemptRoute, type AttemptSettings } from "./attempt-loop.ts";
import { defaultIds, errorAnswer, isCountTokens, newContext, type Ids, type IncomingRequest, type ReceivedBody, type RequestContext } from "./context.ts";
import { countTokens, type CountedBy } from "./count-tokens.ts";
import { BodyRead, guardRead, receivedTooLarge, startGuard, type GuardDeps, type GuardSettings } from "./guard.ts";
import type { TargetOrder } from "./order.ts";
import type { Clock, RestoredSecretMemories } from "./ports.ts";
import { presentedSecrets, scrubErrorResponse, scrubText } from "./scrub.ts";
import { redact, type RedactionSettings } from "./redact.ts";
import { closeIfBodyUnread, drainDeadlineMs } from "./unread-body.ts";
import { addAccountHint, nearAliasOrCombo, resolveModel, type RoutingTable } from "./resolve.ts";

/** Everything the gateway needs. */
export interface GatewayDeps extends Omit<AttemptDeps, "settings">, Omit<GuardDeps, "settings"> {
  settings: () => GuardSettings & AttemptSettings;
  clock: Clock;
  routing: () => RoutingTable;
  /** The order stage (SPEC R-3) with its strategy state; the resolution's order is kept when absent. */
  order?: TargetOrder;
  /** Called when a request starts (before the guard); `finish` is called once when it ends. */
  started?: (ctx: RequestContext) => void;
  /** Mints request ids and route ids ({@link defaultIds} when absent). */
  ids?: Ids;
  /** PII redaction settings (SPEC R-1/S-3, config `settings.redaction`); redaction is off when absent. */
  redaction?: () => RedactionSettings;
  /** Secret values this instance restored into replies, per client key, redacted again in that key's later requests (SPEC S-3); none remembered when absent. */
  restoredSecrets?: RestoredSecretMemories;
}

/** The gateway: one function from an incoming API request to a Response. Never throws. */
export interface Gateway {
  handle(incoming: IncomingRequest): Promise<Response>;
  /**
   * Optional: the 413 refusal (SPEC G-4) of a body an event transport parsed and answers itself, with
   * no upstream call (Codex's `generate: false` warm-up, SPEC 2.5), when it is over the body limit in
   * force (`server.max_body_bytes`, as the guard holds every request to); undefined when it is not.
   * The transport answers it through {@link handle} with the error as the request's `refusal`
   * (IncomingRequest), so that it is logged and counted as the guard's 413 over HTTP.
   */
  overBodyLimit?(received: ReceivedBody): HubError | undefined;
}

/**
 * The attempt loop's route for a model that is no combo (an alias, a provider/model, a guess): the
 * defaults, one record each for the process instead of one per request (docs/performance.md item 246).
 * The attempt loop only reads it.
 */
const PLAIN_ROUTE: Readonly<AttemptRoute> = { portability: "strip_with_warning", cacheAffinity: true, guessed: false };
const GUESSED_ROUTE: Readonly<AttemptRoute> = { portability: "strip_with_warning", cacheAffinity: true, guessed: true };

/** Builds the gateway from its ports. */
export function createGateway(deps: GatewayDeps): Gateway {
  const ids = deps.ids ?? defaultIds;
  return {
    /**
     * One async function per request (the request's stages inline, their answer finished at its end):
     * until item 224 an outer `handle` awaited an inner async function, one more generator, promise,
     * scope and microtask turn per request.
     */
    async handle(incoming) {
      const ctx = newContext(incoming, deps.clock.now(), ids);
      deps.started?.(ctx);
      let res: Response;
      try {
        answered: {
          // The guard's steps taken here: the native body read awaited by handle itself, the rest of the
          // guard synchronous (an async layer fewer per request, docs/performance.md item 280). A step
          // that throws is caught below, as a rejected guard was.
          let step = startGuard(ctx, deps);
          if (step instanceof BodyRead) step = guardRead(ctx, deps, step, await step.settled);
          const guarded = step instanceof Promise ? await step : step;
          if (guarded instanceof Response) {
            // A probe answered locally (SPEC G-5) is a success; anything else the guard returns is a rejection.
            deps.finish(ctx, { outcome: ctx.probe ? "ok" : "rejected", status: guarded.status, attempts: 0, fallback: false });
            // A refusal before the body was read (who may call, an unknown Gemini method): the rule of
            // every route (pipeline/unread-body.ts): a small body that arrives whole is drained and the
            // connection kept, any other is closed after the reply, not held while the rest trickles in.
            // A 413 for a declared size over the limit says Connection: close already (the guard's).
            // A WebSocket frame's head has no body left (bodyUsed undefined): the same response.
            const answer = closeIfBodyUnread(ctx.request as Request, guarded, drainDeadlineMs(deps.settings().bodyTimeoutMs));
            res = answer instanceof Response ? answer : await answer;
            break answered;
          }
          redact(ctx, deps.redaction?.(), deps.restoredSecrets);
          const table = deps.routing();
          const resolution = resolveModel(ctx.requestedModel, table);
          if ("kind" in resolution) {
            res = errorAnswer(ctx, resolution);
            deps.finish(ctx, { outcome: "rejected", status: resolution.status, attempts: 0, fallback: false });
            break answered;
          }
          if (resolution.via === "guess" && !deps.pool.hasAccounts(resolution.targets[0].provider.id)) {
            // A bare name that is no alias or combo was guessed to belong to a provider with no account:
            // most likely a typo of an alias; say so instead of a 503 about accounts (SPEC R-2), with the alias
            // or combo it is near, as check-config names it (newuser13's tryout, J10).
            const guessed = resolution.targets[0].provider;
            deps.pool.noAccount?.(guessed.id, 404);
            const near = nearAliasOrCombo(ctx.requestedModel, table);
            const err = hubError(
              "model_not_found",
              `The model \`${ctx.requestedModel}\` is not an alias or combo${near ? ` (did you mean "${near}"?)` : ""}; it was taken for a model of provider ${guessed.id}, but no ${guessed.id} account is configured: name a configured alias, combo or provider/model, or ${addAccountHint(guessed)}.`,
              { code: "model_not_found", param: "model" },
            );
            res = errorAnswer(ctx, err);
            deps.finish(ctx, { outcome: "rejected", status: err.status, attempts: 0, fallback: false });
            break answered;
          }
          // Into the trace's own list (made empty with the context): no second array and mapping closure per request (item 240).
          const candidates = ctx.trace.candidates;
          for (const t of resolution.targets) candidates.push(t.label);
          // least-used orders by lifetime counts (SPEC 5.1): a request waits for their read while it is under way.
          const seed = deps.order?.seedWait(resolution);
          if (seed) await seed;
          const targets = deps.order ? deps.order.forRequest(ctx, resolution) : resolution.targets;
          if (isCountTokens(ctx.endpoint)) {
            // SPEC 2.1: forwarded to the first target when it speaks the client's format, else estimated.
            // the provider that gave the count serves it (metrics, span, log line), as a generation's does
            const counted: CountedBy = {};
            res = await countTokens(ctx, targets, deps, counted);
            deps.finish(ctx, { outcome: res.ok ? "ok" : "error", status: res.status, target: counted.target, account: counted.account, attempts: ctx.trace.attempts.length, fallback: false });
            break answered;
          }
          const combo = resolution.combo;
          const guessed = resolution.via === "guess";
          const route = combo ? { portability: combo.portability ?? "strip_with_warning", cacheAffinity: combo.cacheAffinity ?? true, guessed } : guessed ? GUESSED_ROUTE : PLAIN_ROUTE;
          res = await runAttempts(ctx, targets, route, deps);
        }
      } catch (e) {
        // A bug must never become a stack trace or an HTML page for the client.
        const error = scrubText(e instanceof Error ? e.message : String(e), [...(deps.secrets?.() ?? []), ...presentedSecrets(incoming.request.headers, incoming.request.url)]);
        console.error(JSON.stringify({ level: "error", msg: "unhandled pipeline error", requestId: ctx.requestId, error }));
        res = errorAnswer(ctx, hubError("api_error", "The gateway failed to handle this request.", { status: 500 }));
        deps.finish(ctx, { outcome: "error", status: 500, attempts: 0, fallback: false });
      }
      // Upstream error bodies may echo a credential (SPEC 2.4): scrub every error answer before it leaves.
      const out = res.status >= 400 ? await scrubErrorResponse(res, [...(deps.secrets?.() ?? []), ...presentedSecrets(incoming.request.headers, incoming.request.url)]) : res;
      // SPEC O-6: the flight recorder sees what the client gets.
      const recording = ctx.recording;
      return recording ? recording.response(out) : out;
    },
    overBodyLimit(received) {
      return receivedTooLarge(received, deps.settings().maxBodyBytes);
    },
  };
}
