/**
 * Reasoning capabilities (SPEC P-8): which reasoning efforts a model supports comes from explicit
 * config first (`providers[].models.<id>.reasoning_efforts`), else from the metadata discovered from
 * the first successful account in configured order (src/discovery.ts). A request asking for an effort
 * the model does not support is clamped to the nearest supported level (on the scale below; ties go
 * down) before it is sent, with an `X-Switchyard-Warning`; when the model supports none, the effort is
 * dropped. Unknown capabilities leave the body alone.
 *
 * Where the effort lives per wire format: Responses `reasoning.effort`, Chat `reasoning_effort`,
 * Anthropic `output_config.effort` (Claude's effort parameter).
 */
import type { Warning } from "../../formats/hub.ts";
import type { Target, Translated } from "../../pipeline/index.ts";

/**
 * Effort levels from least to most reasoning (OpenAI's `none`…`xhigh`, Claude's `max`, Codex's `ultra`):
 * the only names `providers[].models.<id>.reasoning_efforts` takes (src/config/schema.ts), so a typo
 * there is a config error rather than a level requests are clamped to.
 */
export const EFFORT_SCALE = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"] as const;

/** The supported level nearest to `requested` (ties go to the lower one); undefined when `supported` is empty. */
export function clampEffort(requested: string, supported: readonly string[]): string | undefined {
  if (supported.includes(requested)) return requested;
  if (supported.length === 0) return undefined;
  const rank = (e: string) => {
    const i = (EFFORT_SCALE as readonly string[]).indexOf(e);
    return i < 0 ? 3 : i;
  };
  const r = rank(requested);
  let best: string | undefined;
  let bestDist = Infinity;
  for (const s of [...supported].sort((a, b) => rank(a) - rank(b))) {
    const d = Math.abs(rank(s) - r);
    if (d < bestDist) {
      best = s;
      bestDist = d;
    }
  }
  return best;
}

/** The efforts a target's model supports: config first, then discovery; undefined when unknown. */
export type EffortsOf = (target: Target) => string[] | undefined;

/** Explicit config, then `discovered` (SPEC P-8 order). */
export function effortsFrom(discovered: (providerId: string, model: string) => string[] | undefined): EffortsOf {
  return (t) => t.provider.models[t.model]?.reasoningEfforts ?? discovered(t.provider.id, t.model);
}

const enc = new TextDecoder();

/**
 * Clamps (or drops) the requested reasoning effort of a translated body to what the model supports,
 * adding a warning to `translated.warnings` (a new list). Targets whose efforts are unknown, and bodies without an
 * effort, are not parsed.
 */
export function adjustReasoningEffort(target: Target, translated: Translated, effortsOf: EffortsOf): void {
  // Nothing to clamp against (the common case): the body is not even decoded.
  const supported = effortsOf(target);
  if (!supported) return;
  const text = typeof translated.body === "string" ? translated.body : enc.decode(translated.body);
  if (!text.includes("effort")) return;
  let body: Record<string, any>;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  if (!body || typeof body !== "object") return;
  let holder: Record<string, any> | undefined;
  let key: string;
  switch (translated.upstreamFormat) {
    case "openai-responses":
      holder = body.reasoning && typeof body.reasoning === "object" ? body.reasoning : undefined;
      key = "effort";
      break;
    case "openai-chat":
      holder = body;
      key = "reasoning_effort";
      break;
    case "anthropic-messages":
      holder = body.output_config && typeof body.output_config === "object" ? body.output_config : undefined;
      key = "effort";
      break;
    default:
      return;
  }
  const requested = holder?.[key];
  if (!holder || typeof requested !== "string" || supported.includes(requested)) return;
  const next = clampEffort(requested, supported);
  let w: Warning;
  if (next === undefined) {
    delete holder[key];
    w = { code: "reasoning_effort_dropped", message: `${target.label} does not support a reasoning effort; "${requested}" was dropped.` };
  } else {
    holder[key] = next;
    w = { code: "reasoning_effort_clamped", message: `${target.label} does not support reasoning effort "${requested}"; "${next}" was used (supported: ${supported.join(", ")}).` };
  }
  translated.body = JSON.stringify(body);
  translated.warnings = [...translated.warnings, w]; // a new list: a native body's is shared (pipeline/translate.ts NO_WARNINGS)
}
