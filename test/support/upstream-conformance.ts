/**
 * The harness of the upstream conformance test (test/formats/upstream-conformance.test.ts and its
 * `.found` companion): every client request of the shared fixtures (real client captures in
 * `clients/`, the `request` of each regression case in `cases/`) and the hand-written requests of
 * ./conformance-requests.ts is translated by pipeline/translate.ts for provider targets of each upstream
 * API, and the body it would send is validated against that API's published request schema
 * (test/fixtures/schemas, README there says where each came from). Native pairs (the client's own
 * bytes to its own API) are left out: what is checked is what the gateway writes.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { ProviderInfo } from "../../pipeline/ports.ts";
import type { Target } from "../../pipeline/resolve.ts";
import { translate } from "../../pipeline/translate.ts";
import { CONFORMANCE_REQUESTS } from "./conformance-requests.ts";
import { FIXTURES } from "./fixtures.ts";
import { ruleViolations } from "./upstream-rules.ts";

const SCHEMAS = join(import.meta.dir, "..", "fixtures", "schemas");
/** The shared fixtures outside the repository (a case added there before it is vendored here). */
const SHARED = "/work/shared/fixtures";

/** One provider target: a provider kind and a model id of that provider. */
export interface ConformanceTarget {
  kind: ProviderKind;
  model: string;
  /** The schema file that governs its request body. */
  schema: string;
}

/** The targets every request is translated for (provider kind → the API whose schema applies). */
export const CONFORMANCE_TARGETS: readonly ConformanceTarget[] = [
  { kind: "openai", model: "gpt-5", schema: "openai-chat-completions" },
  { kind: "openai", model: "gpt-4.1", schema: "openai-chat-completions" },
  { kind: "openai-responses", model: "gpt-5", schema: "openai-responses" },
  { kind: "openai-responses", model: "gpt-4.1", schema: "openai-responses" },
  { kind: "anthropic", model: "claude-sonnet-4-5", schema: "anthropic-messages" },
  { kind: "gemini", model: "gemini-2.5-pro", schema: "gemini-generate-content" },
];

const FORMAT: Partial<Record<ProviderKind, WireFormat>> = {
  openai: "openai-chat",
  "openai-responses": "openai-responses",
  anthropic: "anthropic-messages",
  gemini: "gemini",
};
const FAMILY: Partial<Record<ProviderKind, string>> = { openai: "openai", "openai-responses": "openai", anthropic: "anthropic", gemini: "gemini" };

/** One client request to translate. `source` names its file (or the hand-written id). */
export interface ConformanceInput {
  source: string;
  clientFormat: WireFormat;
  body: Record<string, unknown>;
}

/** The outcome for one input and one target. */
export interface ConformanceResult {
  /** `<source> → <kind>/<model>`: the test's name. */
  key: string;
  input: ConformanceInput;
  target: ConformanceTarget;
  /** What translate did: a body ("hub" / "tidy"), a native pass-through (not checked), or a refusal (the client's 400). */
  outcome: "checked" | "native" | "refused";
  /** The refusal's message, for `refused`. */
  refusal?: string;
  /** The translated body, for `checked`. */
  body?: unknown;
  /** Schema violations, one line each (`/json/pointer: message`), for `checked`. */
  violations: string[];
  /** The translation's warnings (codes and messages), for `checked`. */
  warnings?: ReadonlyArray<{ code: string; message: string }>;
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** The client requests of the fixtures: captures, then regression cases (vendored first, then shared-only ones). */
export function fixtureInputs(): ConformanceInput[] {
  const out: ConformanceInput[] = [];
  const clients = join(FIXTURES, "clients");
  for (const f of readdirSync(clients).sort()) {
    if (!f.endsWith(".json") || f.endsWith(".headers.json")) continue;
    const body = readJson(join(clients, f));
    out.push({ source: `clients/${f}`, clientFormat: f.startsWith("codex") ? "openai-responses" : "anthropic-messages", body });
  }
  const seen = new Set<string>();
  for (const dir of [join(FIXTURES, "cases"), join(SHARED, "cases")]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!/^B.*\.json$/.test(f) || seen.has(f)) continue;
      seen.add(f);
      const c = readJson(join(dir, f));
      if (!c.request || !c.client_format) continue;
      out.push({ source: `cases/${f}`, clientFormat: c.client_format, body: c.request });
    }
  }
  return out;
}

/** Every input: fixtures, then hand-written requests. */
export function allInputs(): ConformanceInput[] {
  return [...fixtureInputs(), ...CONFORMANCE_REQUESTS.map((r) => ({ source: `hand/${r.id}`, clientFormat: r.clientFormat, body: r.body }))];
}

function providerTarget(t: ConformanceTarget): Target {
  const provider = {
    id: t.kind,
    kind: t.kind,
    format: FORMAT[t.kind],
    family: FAMILY[t.kind],
    baseUrl: "http://127.0.0.1:9",
    models: {},
    idleTimeoutMs: 60_000,
    headerTimeoutMs: 60_000,
    source: "config",
  } as unknown as ProviderInfo;
  return { provider, model: t.model, label: `${t.kind}/${t.model}` };
}

function contextOf(input: ConformanceInput): RequestContext {
  const body = structuredClone(input.body);
  return {
    clientFormat: input.clientFormat,
    rawBody: new TextEncoder().encode(JSON.stringify(body)),
    body,
    requestedModel: String(body.model ?? "gemini-2.5-pro"),
    stream: body.stream === true,
    includeUsage: false,
    warnings: [],
    trace: { decisions: [], attempts: [], warnings: [] },
  } as unknown as RequestContext;
}

let validators: Map<string, ValidateFunction> | undefined;

/** One compiled validator per schema file (draft 2020-12; formats and unknown keywords not checked). */
export function validatorFor(schema: string): ValidateFunction {
  if (!validators) {
    validators = new Map();
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    for (const name of ["openai-chat-completions", "openai-responses", "anthropic-messages", "gemini-generate-content"]) {
      validators.set(name, ajv.compile(readJson(join(SCHEMAS, `${name}.schema.json`))));
    }
  }
  return validators.get(schema)!;
}

/** A discriminator mismatch: the error that only says an anyOf branch was not the one meant. */
const isBranchMiss = (e: ErrorObject) => (e.keyword === "const" || e.keyword === "enum") && /\/(type|role)$/.test(e.instancePath);

/**
 * The errors that say what is wrong (jsonschema's "best match" idea): union bookkeeping (anyOf/oneOf)
 * and discriminator misses of the branches not meant are dropped, and of the rest only the deepest
 * location's errors are kept, per top-level member. One line per error, deduplicated.
 */
export function explain(errors: readonly ErrorObject[]): string[] {
  const where = (e: ErrorObject) => {
    const p = e.params as Record<string, unknown>;
    const extra = (p.additionalProperty ?? p.unevaluatedProperty) as string | undefined;
    return extra !== undefined ? `${e.instancePath}/${extra}` : e.instancePath;
  };
  const kept = errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf" && e.keyword !== "if" && !isBranchMiss(e));
  const pool = kept.length ? kept : errors.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf");
  const depth = (s: string) => s.split("/").length;
  const deepest = new Map<string, number>();
  for (const e of pool) {
    const top = where(e).split("/")[1] ?? "";
    deepest.set(top, Math.max(deepest.get(top) ?? 0, depth(where(e))));
  }
  const lines = new Set<string>();
  for (const e of pool) {
    const w = where(e);
    if (depth(w) !== deepest.get(w.split("/")[1] ?? "")) continue;
    const p = e.params as Record<string, unknown>;
    let msg = e.message ?? e.keyword;
    if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") msg = "is not a member the API takes";
    else if (e.keyword === "const") msg = `must be ${JSON.stringify(p.allowedValue)}`;
    else if (e.keyword === "enum") msg = `must be one of ${JSON.stringify(p.allowedValues)}`;
    lines.add(`${w || "/"}: ${msg}`);
  }
  return [...lines].sort();
}

/** Translates one input for one target and validates the body. */
export function check(input: ConformanceInput, target: ConformanceTarget): ConformanceResult {
  const key = `${input.source} → ${target.kind}/${target.model}`;
  const t = translate(contextOf(input), providerTarget(target), "strip_with_warning");
  if ("kind" in t) return { key, input, target, outcome: "refused", refusal: t.message, violations: [] };
  if (t.mode === "native") return { key, input, target, outcome: "native", violations: [] };
  const body = JSON.parse(typeof t.body === "string" ? t.body : new TextDecoder().decode(t.body));
  const validate = validatorFor(target.schema);
  const ok = validate(body);
  return {
    key,
    input,
    target,
    outcome: "checked",
    body,
    violations: [...(ok ? [] : explain(validate.errors ?? [])), ...ruleViolations(target.schema, body, target.model)],
    warnings: t.warnings,
  };
}

let results: ConformanceResult[] | undefined;

/** Every input × every target, computed once per process. */
export function allResults(): ConformanceResult[] {
  results ??= allInputs().flatMap((input) => CONFORMANCE_TARGETS.map((target) => check(input, target)));
  return results;
}

/** A class of violations: a name, a one-line summary, and which lines of a result belong to it. */
export interface ViolationClass {
  id: string;
  summary: string;
  matches: (line: string, result: ConformanceResult) => boolean;
}

const inputItem = (r: ConformanceResult, line: string): Record<string, unknown> | undefined => {
  const m = /^\/input\/(\d+)\//.exec(line);
  const input = (r.body as { input?: unknown })?.input;
  return m && Array.isArray(input) ? (input[Number(m[1])] as Record<string, unknown>) : undefined;
};

/**
 * Where a published schema is stricter than the live API, and the gateway writes what the API's own
 * clients write (each with the evidence): not a violation.
 * - `openai-assistant-output-text`: an earlier assistant turn as `{"type": "message", "role":
 *   "assistant", "content": [{"type": "output_text", "text"}]}` without `id`, `status` or
 *   `annotations`. The OpenAPI document's `OutputMessage` requires them, but Codex (OpenAI's own
 *   client) sends its history in exactly this shape (codex-rs `ResponseItem::Message`, its `id` left out
 *   when none; the Codex captures in /work/shared/fixtures/clients), and the API answers it.
 * - `gemini-int64-numbers`: Gemini Schema counts (`minItems`, `maxLength`, …) as JSON numbers where the
 *   js-genai types write int64 fields as strings: proto3's JSON mapping accepts a number or a string for
 *   an int64 (https://protobuf.dev/programming-guides/json/), and the REST API reads either.
 */
export const LIVE_ACCEPTED: readonly ViolationClass[] = [
  {
    id: "openai-assistant-output-text",
    summary: "Responses input: an earlier assistant turn as an output_text message without id, status, annotations (Codex's own history shape)",
    matches: (line, r) => r.target.schema === "openai-responses" && /^\/input\/\d+\/content\/\d+\/text: is not a member the API takes$/.test(line) && inputItem(r, line)?.role === "assistant",
  },
  {
    id: "gemini-int64-numbers",
    summary: "Gemini Schema counts (minItems, maxLength, …) as numbers where the js-genai types write int64 as strings",
    matches: (line, r) => r.target.schema === "gemini-generate-content" && /\/(min|max)(Items|Length|Properties): must be string$/.test(line),
  },
];

/** The lines of `r` that no known class explains: each is a defect not yet reported. */
export function unexplained(r: ConformanceResult): string[] {
  return r.violations.filter((l) => !LIVE_ACCEPTED.some((c) => c.matches(l, r)));
}
