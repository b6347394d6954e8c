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
import type { ProviderKind } from "../../formats/codec.ts";
import type { WireFormat } from "../../formats/hub.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import type { ProviderInfo } from "../../pipeline/ports.ts";
import type { Target } from "../../pipeline/resolve.ts";
import { translate } from "../../pipeline/translate.ts";
import { CONFORMANCE_REQUESTS } from "./conformance-requests.ts";
import { FIXTURES } from "./fixtures.ts";
import { allViolations, refusedLines } from "./upstream-schemas.ts";

export { explain, LIVE_ACCEPTED, validatorFor, type ViolationClass } from "./upstream-schemas.ts";

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

/** Translates one input for one target and validates the body. */
export function check(input: ConformanceInput, target: ConformanceTarget): ConformanceResult {
  const key = `${input.source} → ${target.kind}/${target.model}`;
  const t = translate(contextOf(input), providerTarget(target), "strip_with_warning");
  if ("kind" in t) return { key, input, target, outcome: "refused", refusal: t.message, violations: [] };
  if (t.mode === "native") return { key, input, target, outcome: "native", violations: [] };
  const body = JSON.parse(typeof t.body === "string" ? t.body : new TextDecoder().decode(t.body));
  return {
    key,
    input,
    target,
    outcome: "checked",
    body,
    violations: allViolations(target.schema, body, target.model),
    warnings: t.warnings,
  };
}

let results: ConformanceResult[] | undefined;

/** Every input × every target, computed once per process. */
export function allResults(): ConformanceResult[] {
  results ??= allInputs().flatMap((input) => CONFORMANCE_TARGETS.map((target) => check(input, target)));
  return results;
}

/** The lines of `r` that no known class explains: each is a defect not yet reported. */
export function unexplained(r: ConformanceResult): string[] {
  return refusedLines({ schema: r.target.schema, body: r.body }, r.target.model, r.violations);
}
