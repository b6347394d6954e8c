/**
 * A client's output-token limit above what the target's model can write (`max_output_tokens` of the
 * provider's `models:` entry, SPEC 2.3) is lowered to that model's limit before the body is sent, with
 * a `clamped_max_tokens` warning (`X-Switchyard-Warning`, the route trace's warnings). Sent as written,
 * the upstream refused it with a 400 (Anthropic: "max_tokens: 100000 > 64000, which is the maximum
 * allowed number of output tokens for …"), and a combo's next target never got the chance.
 *
 * Clamped rather than refused: the limit is the target's, not the request's (one combo may reach models
 * with different limits, and a client such as Claude Code sends one `max_tokens` for every model), and
 * a limit above the model's asks for no more than the model can give, which is what the clamp sends.
 * A model without `max_output_tokens` leaves the body alone (the gateway does not know its limit).
 *
 * The client's own field is read off its parsed body (no cost when it is within the limit or absent);
 * only a body to clamp is parsed and written again, in the upstream format: Chat `max_completion_tokens`
 * and `max_tokens`, Anthropic `max_tokens`, Responses `max_output_tokens`, Gemini
 * `generationConfig.maxOutputTokens` (or the snake_case names Gemini also takes). An Anthropic
 * `thinking.budget_tokens` at or above the lowered limit is lowered below it (Anthropic refuses a budget
 * that is not below `max_tokens`).
 */
import type { WireFormat } from "../formats/hub.ts";
import { isCountTokens, type RequestContext } from "./context.ts";
import type { Target } from "./resolve.ts";
import type { Translated } from "./translate.ts";

/** `Warning.code` of a lowered output-token limit. */
export const CLAMPED_MAX_TOKENS = "clamped_max_tokens";

/**
 * The output-token limit the client asked for and the field it wrote it in (Chat
 * `max_completion_tokens`, else `max_tokens`; Anthropic `max_tokens`; Responses `max_output_tokens`;
 * Gemini `generationConfig.maxOutputTokens`), or undefined when it set none (or not as a number).
 */
export function requestedOutputTokens(format: WireFormat, body: Record<string, unknown>): { field: string; value: number } | undefined {
  let field: string;
  let value: unknown;
  switch (format) {
    case "openai-chat":
      field = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? "max_completion_tokens" : "max_tokens";
      value = body[field];
      break;
    case "anthropic-messages":
      field = "max_tokens";
      value = body.max_tokens;
      break;
    case "openai-responses":
      field = "max_output_tokens";
      value = body.max_output_tokens;
      break;
    case "gemini": {
      const gc = geminiConfig(body);
      field = "generationConfig.maxOutputTokens";
      value = gc?.maxOutputTokens ?? gc?.max_output_tokens;
      break;
    }
    default:
      return undefined;
  }
  return typeof value === "number" ? { field, value } : undefined;
}

/**
 * Lowers the output-token limit of `translated`'s body to the model's `max_output_tokens` when the
 * client asked for more (see the module comment), pushing a {@link CLAMPED_MAX_TOKENS} warning that
 * names the client's field, what it asked and what was sent. Token counting (no generation) is left
 * alone. Replaces `translated.body`; a body that does not parse is left as it is (the upstream answers).
 */
export function clampOutputTokens(ctx: RequestContext, target: Target, translated: Translated): void {
  const limit = target.provider.models[target.model]?.maxOutputTokens;
  if (limit === undefined || isCountTokens(ctx.endpoint)) return;
  const asked = requestedOutputTokens(ctx.clientFormat, ctx.body);
  if (asked === undefined || !(asked.value > limit)) return;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(typeof translated.body === "string" ? translated.body : new TextDecoder().decode(translated.body));
  } catch {
    return;
  }
  if (typeof body !== "object" || body === null || !lowerLimit(translated.upstreamFormat, body, limit)) return;
  translated.body = JSON.stringify(body);
  translated.warnings.push({
    code: CLAMPED_MAX_TOKENS,
    message: `${asked.field} ${asked.value} is above the ${limit} output tokens ${target.label} can write (its max_output_tokens); ${limit} was sent.`,
  });
}

/** Sets every output-token limit of an upstream body above `limit` to `limit`; whether one was. */
function lowerLimit(format: WireFormat, body: Record<string, unknown>, limit: number): boolean {
  let holder: Record<string, unknown> | undefined = body;
  let keys: readonly string[];
  switch (format) {
    case "openai-chat":
      keys = ["max_completion_tokens", "max_tokens"];
      break;
    case "anthropic-messages":
      keys = ["max_tokens"];
      break;
    case "openai-responses":
      keys = ["max_output_tokens"];
      break;
    case "gemini":
      holder = geminiConfig(body);
      keys = ["maxOutputTokens", "max_output_tokens"];
      break;
    default:
      return false;
  }
  let lowered = false;
  for (const k of keys) {
    const v = holder?.[k];
    if (holder && typeof v === "number" && v > limit) {
      holder[k] = limit;
      lowered = true;
    }
  }
  // Anthropic wants a thinking budget below max_tokens: one the lowered limit no longer exceeds goes
  // down with it (not under Anthropic's minimum of 1,024).
  const thinking = format === "anthropic-messages" ? body.thinking : undefined;
  if (lowered && typeof thinking === "object" && thinking !== null) {
    const t = thinking as Record<string, unknown>;
    if (typeof t.budget_tokens === "number" && t.budget_tokens >= limit) t.budget_tokens = Math.max(1024, limit - 1);
  }
  return lowered;
}

/** A Gemini body's `generationConfig` (or `generation_config`), when it is an object. */
function geminiConfig(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const gc = body.generationConfig ?? body.generation_config;
  return typeof gc === "object" && gc !== null && !Array.isArray(gc) ? (gc as Record<string, unknown>) : undefined;
}
