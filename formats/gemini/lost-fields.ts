/**
 * What another format's request says that the Gemini builder (build.ts) carries under Gemini's own
 * name, or cannot carry and must name in a warning (SPEC F-2: dropped explicitly, never silently).
 * Pure; no I/O.
 */
import type { HubRequest, HubPart, Warnings } from "../hub.ts";
import { portableTools } from "../tool-kinds.ts";
import { isObj } from "../json.ts";

/**
 * Chat (and Responses) sampling fields with a `generationConfig` member of the same meaning
 * (ai.google.dev/api/generate-content#GenerationConfig: `seed` int32, `presencePenalty`,
 * `frequencyPenalty`; OpenAI's `seed`, `presence_penalty`, `frequency_penalty`, −2.0 to 2.0).
 */
const SAMPLING: Readonly<Record<string, string>> = { seed: "seed", presence_penalty: "presencePenalty", frequency_penalty: "frequencyPenalty" };

const INT32_MAX = 2 ** 31 - 1;

/**
 * Whether a Gemini model takes `presencePenalty` / `frequencyPenalty` other than 0: the gemini-2.0
 * models only. Every other one answers 400 INVALID_ARGUMENT "Penalty is not enabled for models/…"
 * (gemini-1.5, gemini-exp, gemini-2.5 and later, the `-latest` aliases: vercel/ai#8943, BerriAI/litellm
 * #26108, google-gemini/cookbook#1290; a 0 is not checked). A leading `models/` (or a routing prefix)
 * is ignored.
 */
export function takesPenalties(model: string): boolean {
  return /^gemini-2\.0-/i.test(model.slice(model.lastIndexOf("/") + 1));
}

/**
 * An OpenAI client's (`openai-chat`, `openai-responses`) `seed`, `presence_penalty` and
 * `frequency_penalty` from `req.source.extra` → `gc` (the body's `generationConfig`). A seed that is not
 * an int32 (OpenAI takes 64-bit seeds) or a penalty that is not a number is left for the caller's
 * `dropped_field` warning. A penalty goes only to a model that takes one ({@link takesPenalties}): to
 * another a 0 is left out (it changes nothing) and any other value is left out with a `dropped_field`
 * warning, since Gemini would refuse the whole request. Returns the keys it used; another client's
 * request uses none.
 */
export function carryOpenAiSampling(req: HubRequest, gc: Record<string, unknown>, model: string, w: Warnings): Set<string> {
  const used = new Set<string>();
  if (req.source.format !== "openai-chat" && req.source.format !== "openai-responses") return used;
  for (const key in SAMPLING) {
    const val = req.source.extra[key];
    if (typeof val !== "number" || !Number.isFinite(val)) continue;
    if (key === "seed" && (!Number.isInteger(val) || Math.abs(val) > INT32_MAX)) continue;
    used.add(key);
    if (key !== "seed" && !takesPenalties(model)) {
      if (val !== 0) w.add("dropped_field", `${key} ${val} was not sent: ${model} takes no penalties (Gemini answers 400 "Penalty is not enabled" to any but 0).`);
      continue;
    }
    gc[SAMPLING[key]!] = val;
  }
  return used;
}

/** Members whose value maps names to schemas: a key there is a name (a parameter called `additionalProperties`), not a keyword. */
const NAMED_SCHEMAS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Whether a JSON schema holds, at any depth (up to 64 levels), an `additionalProperties` whose removal
 * changes what it asks for: a schema for the other members (`{"type": "string"}`: a map's values), or
 * `true` (or `{}`) beside declared `properties` (members beyond them allowed, which a Gemini declaration
 * cannot say). Not `false`: it only restates that no member but the declared ones is asked for, which
 * is what a Gemini declaration means (every Codex tool has it); not `true` on an object that declares
 * no properties (a free-form object either way).
 */
function changesAdditional(x: unknown, depth = 0, names = false): boolean {
  if (depth > 64) return false;
  if (Array.isArray(x)) return x.some((v) => changesAdditional(v, depth + 1));
  if (!isObj(x)) return false;
  for (const k in x) {
    const v = x[k];
    if (!names && k === "additionalProperties") {
      const loose = v === true || (isObj(v) && Object.keys(v).length === 0);
      if (loose ? isObj(x.properties) && Object.keys(x.properties).length > 0 : isObj(v)) return true;
      continue;
    }
    if (typeof v === "object" && v !== null && changesAdditional(v, depth + 1, !names && NAMED_SCHEMAS.has(k))) return true;
  }
  return false;
}

function imageDetail(p: HubPart): boolean {
  if (p.type === "image") return p.detail !== undefined && p.detail !== "auto";
  if (p.type === "tool_result") return p.content.some(imageDetail);
  return false;
}

/**
 * Warns (`dropped_field`) of what the Gemini request cannot say and the builder leaves out without a
 * word otherwise: a function tool's `strict: true` (Gemini does not enforce a tool's schema), an
 * `additionalProperties` in a tool's parameters whose removal changes its meaning (Gemini's OpenAPI
 * subset refuses the key, schema-clean.ts removes it; `false` is not named: {@link changesAdditional}),
 * a message's `name` (Chat), and an image's `detail` low/high (Gemini sets resolution per request, not
 * per image). One warning each, naming the tools where tools are concerned.
 */
export function warnUnsent(req: HubRequest, w: Warnings): void {
  const strict: string[] = [];
  const additional: string[] = [];
  for (const t of portableTools(req.tools)) {
    if (t.kind !== "function") continue;
    if (t.strict === true) strict.push(t.name);
    if (changesAdditional(t.parameters)) additional.push(t.name);
  }
  if (strict.length > 0) {
    w.add("dropped_field", `Gemini has no strict mode for tools; strict was not sent for ${strict.join(", ")} (its arguments are not checked against the schema).`);
  }
  if (additional.length > 0) {
    w.add("dropped_field", `Gemini's tool schemas have no additionalProperties; it was removed from the parameters of ${additional.join(", ")}.`);
  }
  if (req.messages.some((m) => m.name !== undefined && m.name.length > 0)) {
    w.add("dropped_field", "Gemini has no message names; the name of a message was not sent.");
  }
  if (req.messages.some((m) => m.content.some(imageDetail))) {
    w.add("dropped_field", "Gemini has no per-image detail; an image's detail (low/high) was not sent.");
  }
}
