/**
 * The providers' request validators, shared by the upstream conformance test
 * (test/support/upstream-conformance.ts) and the fake upstream's strict mode
 * (test/support/fake-upstream.ts `strict`): the published request schemas of test/fixtures/schemas
 * (README there), the prose rules of ./upstream-rules.ts, and {@link LIVE_ACCEPTED}, where a schema is
 * stricter than the live API. No pipeline or formats code: the fake must not share code with what it tests.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import { ruleViolations } from "./upstream-rules.ts";

const SCHEMAS = join(import.meta.dir, "..", "fixtures", "schemas");

/** The schema files (test/fixtures/schemas/<name>.schema.json), one per upstream API. */
export type SchemaName = "openai-chat-completions" | "openai-responses" | "anthropic-messages" | "gemini-generate-content";

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/**
 * The compiled validator of one schema file (draft 2020-12; formats and unknown keywords not checked),
 * compiled on first use and kept for the process (a compile is tens of ms; a validation well under one).
 */
export function validatorFor(schema: string): ValidateFunction {
  let v = validators.get(schema);
  if (!v) {
    ajv ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    v = ajv.compile(JSON.parse(readFileSync(join(SCHEMAS, `${schema}.schema.json`), "utf8")));
    validators.set(schema, v);
  }
  return v;
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

/** A checked body: the schema file that governs it, the body, and what else the live API reads. */
export interface CheckedBody {
  schema: string;
  body: unknown;
  /** The request's headers (lower-case names), where known: a beta header opens members. */
  headers?: Record<string, string>;
  /** The Chat path stands for an openai-compatible server (DeepSeek, Kimi, GLM, Qwen…), not OpenAI's. */
  openaiCompatible?: boolean;
}

/**
 * A class of violations the live API does not have: a name, a one-line summary, and either which
 * lines of a checked body belong to it (`matches`) or what of the body the schema cannot say and is
 * left out before validating (`loosen`: a copy without it, or undefined when it does not apply).
 */
export interface ViolationClass {
  id: string;
  summary: string;
  matches?: (line: string, r: CheckedBody) => boolean;
  loosen?: (body: Record<string, any>, r: CheckedBody) => Record<string, any> | undefined;
}

const inputItem = (r: CheckedBody, line: string): Record<string, unknown> | undefined => {
  const m = /^\/input\/(\d+)\//.exec(line);
  const input = (r.body as { input?: unknown })?.input;
  return m && Array.isArray(input) ? (input[Number(m[1])] as Record<string, unknown>) : undefined;
};

/** `body` without its top-level `member`, or undefined when it has none. */
const without = (body: Record<string, any>, member: string) => {
  if (!(member in body)) return undefined;
  const { [member]: _, ...rest } = body;
  return rest;
};

/** `body` with `list` (a top-level array) mapped item by item, or undefined when no item changed. */
const mapItems = (body: Record<string, any>, list: string, fn: (x: any) => any) => {
  if (!Array.isArray(body[list])) return undefined;
  let changed = false;
  const items = body[list].map((x: any) => {
    const y = fn(x);
    if (y !== x) changed = true;
    return y;
  });
  return changed ? { ...body, [list]: items } : undefined;
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
 * The next four were met by the strict fake upstream (test/support/fake-upstream.ts) in the real-CLI
 * e2e tests, in the CLIs' own requests to their own API (the "straight to the fake" control runs, no
 * gateway; a real client's own request is what its API takes):
 * - `anthropic-beta-context-management`: Claude Code 2.1.332 sends `context_management: {"edits":
 *   [{"type": "clear_thinking_20251015", "keep": "all"}]}` on every request, with `anthropic-beta:
 *   …context-management-2025-06-27…`. The member is the beta API's (the SDK's
 *   `beta.messages.create` params, BetaContextManagementConfig; docs.claude.com "Context editing":
 *   enabled by that beta header); the schema is the non-beta `MessageCreateParamsBase`. Only with the header.
 * - `openai-input-message-id`: Codex 0.171.0 sends its developer and user input messages with an `id`
 *   (`"msg_…"`, codex-rs `ResponseItem::Message`); the document's `InputMessage` has none.
 * - `openai-client-metadata`: Codex 0.171.0 sends a top-level `client_metadata` (its session, thread,
 *   turn and window ids as strings), which the 2.3.0 document does not list.
 * - `openai-namespace-tool-parameters`: Codex 0.171.0 sends a `namespace` tool (`multi_agent_v1`) whose
 *   function tools carry a JSON Schema in `parameters`; the document's `FunctionToolParam.parameters`
 *   is `EmptyModelParam`, an open object there (the JSON Schema of the arguments, as for a top-level
 *   function tool) that the schema conversion closed. The parameters are not checked there.
 * And one for the servers an `openai-compatible` provider stands for (not OpenAI's API, whose schema
 * the Chat path is checked against):
 * - `compatible-reasoning-content`: `reasoning_content` on an assistant message, the vendor member
 *   DeepSeek, Kimi, GLM and Qwen thinking models return and take back on tool-call turns (DeepSeek's
 *   "Thinking mode" guide: a tool-call turn without it is refused); the gateway sends it to
 *   `openai-compatible` targets only (formats/openai-chat/build.ts). Only with `openaiCompatible`.
 * - `compatible-long-tool-description`: a function description over 1024 characters, a limit of
 *   OpenAI's API (upstream-rules.ts); the servers behind `openai-compatible` providers get the client's
 *   description as it is (the gateway shortens it for kind `openai` only). Only with `openaiCompatible`.
 */
export const LIVE_ACCEPTED: readonly ViolationClass[] = [
  {
    id: "openai-assistant-output-text",
    summary: "Responses input: an earlier assistant turn as an output_text message without id, status, annotations (Codex's own history shape)",
    matches: (line, r) => r.schema === "openai-responses" && /^\/input\/\d+\/content\/\d+\/text: is not a member the API takes$/.test(line) && inputItem(r, line)?.role === "assistant",
  },
  {
    id: "gemini-int64-numbers",
    summary: "Gemini Schema counts (minItems, maxLength, …) as numbers where the js-genai types write int64 as strings",
    matches: (line, r) => r.schema === "gemini-generate-content" && /\/(min|max)(Items|Length|Properties): must be string$/.test(line),
  },
  {
    id: "anthropic-beta-context-management",
    summary: "Messages: context_management with the context-management beta header (Claude Code's own requests)",
    loosen: (b, r) => (r.schema === "anthropic-messages" && /(^|,)\s*context-management-/.test(r.headers?.["anthropic-beta"] ?? "") ? without(b, "context_management") : undefined),
  },
  {
    id: "openai-input-message-id",
    summary: "Responses input: a developer / user / system message with an id (Codex's own requests)",
    loosen: (b, r) =>
      r.schema !== "openai-responses"
        ? undefined
        : mapItems(b, "input", (x) => (x?.type === "message" && x.role !== "assistant" && typeof x.id === "string" ? without(x, "id") : x)),
  },
  {
    id: "openai-client-metadata",
    summary: "Responses: a top-level client_metadata of string values (Codex's own requests)",
    loosen: (b, r) => (r.schema === "openai-responses" && b.client_metadata && typeof b.client_metadata === "object" && Object.values(b.client_metadata).every((v) => typeof v === "string") ? without(b, "client_metadata") : undefined),
  },
  {
    id: "openai-namespace-tool-parameters",
    summary: "Responses: a namespace tool's function tools with a JSON Schema in parameters (Codex's own requests)",
    loosen: (b, r) =>
      r.schema !== "openai-responses"
        ? undefined
        : mapItems(b, "tools", (t) =>
            t?.type === "namespace" && Array.isArray(t.tools) && t.tools.some((f: any) => f?.parameters && typeof f.parameters === "object")
              ? { ...t, tools: t.tools.map((f: any) => (f?.parameters && typeof f.parameters === "object" ? { ...f, parameters: {} } : f)) }
              : t,
          ),
  },
  {
    id: "compatible-long-tool-description",
    summary: "Chat to an openai-compatible server: a function description over 1024 characters (a limit of OpenAI's own API)",
    matches: (line, r) => r.schema === "openai-chat-completions" && r.openaiCompatible === true && line.startsWith("rule tool-description-max-1024:"),
  },
  {
    id: "compatible-reasoning-content",
    summary: "Chat to an openai-compatible server: reasoning_content on an assistant message (DeepSeek-style thinking tool loops)",
    loosen: (b, r) =>
      r.schema === "openai-chat-completions" && r.openaiCompatible
        ? mapItems(b, "messages", (m) => (m?.role === "assistant" && typeof m.reasoning_content === "string" ? without(m, "reasoning_content") : m))
        : undefined,
  },
];

/** Every schema violation and broken prose rule of `body` for `schema` and `model`, one line each. */
export function allViolations(schema: string, body: unknown, model: string): string[] {
  const validate = validatorFor(schema);
  return [...(validate(body) ? [] : explain(validate.errors ?? [])), ...ruleViolations(schema, body, model)];
}

/** `r.body` with what the `loosen` classes of {@link LIVE_ACCEPTED} leave out, left out (the same object when none applies). */
function loosened(r: CheckedBody): unknown {
  if (!r.body || typeof r.body !== "object" || Array.isArray(r.body)) return r.body;
  let b = r.body as Record<string, any>;
  for (const c of LIVE_ACCEPTED) b = c.loosen?.(b, r) ?? b;
  return b;
}

/**
 * What a live API would refuse in `r.body` for `model` (schema and rules, less the {@link LIVE_ACCEPTED}
 * classes), one line each; `violations`, when given, are those of the body as it is (skips a validation
 * when no class loosens it).
 */
export function refusedLines(r: CheckedBody, model: string, violations?: readonly string[]): string[] {
  const body = loosened(r);
  const lines = body === r.body && violations ? violations : allViolations(r.schema, body, model);
  return lines.filter((l) => !LIVE_ACCEPTED.some((c) => c.matches?.(l, r)));
}
